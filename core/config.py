"""Pipeline configs: YAML validated by pydantic, with one-line errors naming the file and the field.

Only the fields that change the data (`domain`, `seed`, `shards`, `generator`, `verifiers`, `filters`) enter
the config hash; `card` and `execution` can change between a run and its resume.
"""

from __future__ import annotations

import hashlib
from pathlib import Path
from typing import Annotated, Any, Literal

import yaml
from pydantic import BaseModel, ConfigDict, Field, PositiveInt, ValidationError, field_validator

from synth.core.errors import ConfigError, read_text_file
from synth.core.records import canonical_json

Engine = Literal["local", "prefect"]
TaskRunner = Literal["threads", "processes", "dask", "ray"]


class StrictModel(BaseModel):
    """A pydantic model that rejects unknown fields and is immutable."""

    model_config = ConfigDict(extra="forbid", frozen=True)


class VerdictFilterSpec(StrictModel):
    """Drop rows whose verdict failed (all verifiers, or the ones named)."""

    kind: Literal["verdict"] = "verdict"
    verifiers: list[str] | None = None


class RangeFilterSpec(StrictModel):
    """Drop rows whose numeric `column` lies outside [min, max]."""

    kind: Literal["range"] = "range"
    column: str
    min: float | None = None
    max: float | None = None


FilterSpec = Annotated[VerdictFilterSpec | RangeFilterSpec, Field(discriminator="kind")]


class CardConfig(StrictModel):
    """Dataset card metadata."""

    pretty_name: str | None = None
    license: str | None = None
    language: list[str] = Field(default_factory=list)
    tags: list[str] = Field(default_factory=list)


class ExecutionConfig(StrictModel):
    """How to run; never part of the config hash."""

    out: str | None = None
    engine: Engine = "local"
    task_runner: TaskRunner = "threads"
    workers: PositiveInt | None = None
    dask_address: str | None = Field(None, description="scheduler of an existing Dask cluster; None starts a local one")
    address: str | None = Field(
        None, description="an existing cluster for task runner dask (scheduler) or ray (head); None starts a local one"
    )
    heartbeat_seconds: int | None = Field(
        None,
        ge=30,
        description="Prefect heartbeat of the pipeline's flow run (lets the server mark a killed run crashed); None "
        "sends none: the calling process reports a failure itself, and a deployment's parent flow run keeps its own",
    )


class PipelineConfig(StrictModel):
    """A whole pipeline: which domain, its generator settings, verifiers, filters and run settings."""

    domain: str
    seed: int = Field(0, ge=-(2**63), lt=2**63, description="run seed (a 64-bit integer)")
    shards: PositiveInt = Field(1, le=99_999, description="number of shards (fixed for the life of OUT)")
    generator: dict[str, Any] = Field(default_factory=dict)
    verifiers: list[str] | None = None
    filters: list[FilterSpec] = Field(default_factory=lambda: [VerdictFilterSpec()])
    card: CardConfig = Field(default_factory=CardConfig)
    execution: ExecutionConfig = Field(default_factory=ExecutionConfig)

    @field_validator("verifiers")
    @classmethod
    def _distinct_verifiers(cls, names: list[str] | None) -> list[str] | None:
        """Each verifier runs once: a name listed twice would write its score columns twice."""
        listed = names or []
        repeated = sorted({name for name in listed if listed.count(name) > 1})
        if repeated:
            msg = f"verifiers listed more than once: {repeated}"
            raise ValueError(msg)
        return names

    def hashed_fields(self) -> dict[str, Any]:
        """The fields that decide the data, as plain JSON values."""
        return self.model_dump(mode="json", include={"domain", "seed", "shards", "generator", "verifiers", "filters"})

    def config_hash(self) -> str:
        """Return the sha256 (hex, 16 digits) of the data-deciding fields."""
        return hashlib.sha256(canonical_json(self.hashed_fields()).encode()).hexdigest()[:16]


def format_validation_error(error: ValidationError, *, source: str, prefix: str = "") -> str:
    """Render the first pydantic error as `SOURCE: field `a.b`: message (got X)`."""
    first = error.errors()[0]
    location = ".".join(str(part) for part in (prefix, *first["loc"]) if part != "")
    message = first["msg"].removeprefix("Value error, ")
    if first["type"] == "extra_forbidden":
        message = "unknown field"
    got = first.get("input")
    shown = "" if first["type"] in {"extra_forbidden", "missing"} or isinstance(got, dict) else f" (got {_clip(got)})"
    extra = f" (+{error.error_count() - 1} more)" if error.error_count() > 1 else ""
    where = f"field `{location}`: " if location else ""
    return f"{source}: {where}{message}{shown}{extra}"


def _clip(value: Any, limit: int = 80) -> str:
    shown = repr(value)
    return shown if len(shown) <= limit else shown[: limit - 1] + "…"


def parse_config(data: Any, *, source: str = "<config>", prefix: str = "") -> PipelineConfig:
    """Validate `data` into a `PipelineConfig` whose `generator` section is checked by its domain.

    `prefix` names where `data` sits in a larger config (e.g. `stages.dialogues`) in error messages.
    """
    from synth.core.registry import get_domain

    if not isinstance(data, dict):
        msg = f"{source}: expected a mapping at the top level, got {type(data).__name__}"
        raise ConfigError(msg)
    try:
        config = PipelineConfig.model_validate(data)
    except ValidationError as error:
        raise ConfigError(format_validation_error(error, source=source, prefix=prefix)) from None
    domain = get_domain(config.domain, source=source, field=_join(prefix, "domain"))
    try:
        generator = domain.config_model.model_validate(config.generator)
    except ValidationError as error:
        raise ConfigError(format_validation_error(error, source=source, prefix=_join(prefix, "generator"))) from None
    unknown = sorted(set(config.verifiers or ()) - set(domain.verifier_names))
    if unknown:
        field = _join(prefix, "verifiers")
        msg = f"{source}: field `{field}`: unknown verifier {unknown[0]!r}; choose from {list(domain.verifier_names)}"
        raise ConfigError(msg)
    return config.model_copy(update={"generator": generator.model_dump(mode="json")})


def _join(prefix: str, name: str) -> str:
    return f"{prefix}.{name}" if prefix else name


def read_config_mapping(path: str | Path) -> dict[str, Any]:
    """Read a YAML config file into a mapping, with one-line errors naming the file."""
    path = Path(path)
    if path.is_dir():
        msg = f"{path}: is a directory, not a config file; pass the YAML file itself"
        raise ConfigError(msg)
    if not path.is_file():
        msg = f"{path}: config file not found"
        raise ConfigError(msg)
    text = read_text_file(path, hint="a config is YAML text", error=ConfigError)
    data = parse_yaml(text, source=str(path))
    if not isinstance(data, dict):
        msg = f"{path}: expected a mapping at the top level, got {type(data).__name__}"
        raise ConfigError(msg)
    return data


def parse_yaml(text: str, *, source: str) -> Any:
    """Parse YAML text; a syntax error is a one-line `ConfigError` naming `source` and the line."""
    try:
        return yaml.safe_load(text)
    except yaml.YAMLError as error:
        mark = getattr(error, "problem_mark", None)
        where = f" line {mark.line + 1}:" if mark is not None else ""
        msg = f"{source}:{where} invalid YAML: {getattr(error, 'problem', None) or error}"
        raise ConfigError(" ".join(msg.split())) from None
    except RecursionError:
        msg = f"{source}: invalid YAML: nested too deeply"
        raise ConfigError(msg) from None


def load_config(path: str | Path) -> PipelineConfig:
    """Read and validate a YAML pipeline config."""
    return parse_config(read_config_mapping(path), source=str(path))


def apply_overrides(data: dict[str, Any], assignments: list[str] | None) -> dict[str, Any]:
    """Apply `--set a.b=value` overrides (values parsed as YAML) to a config mapping."""
    for assignment in assignments or []:
        key, sep, raw = assignment.partition("=")
        if not sep or not key:
            msg = f"--set {assignment!r}: expected KEY=VALUE, e.g. --set generator.samples=2"
            raise ConfigError(msg)
        node = data
        *parents, leaf = key.split(".")
        for part in parents:
            node = node.setdefault(part, {})
            if not isinstance(node, dict):
                msg = f"--set {assignment!r}: `{part}` is not a mapping"
                raise ConfigError(msg)
        node[leaf] = _parse_value(assignment, raw)
    return data


def _parse_value(assignment: str, raw: str) -> Any:
    try:
        return yaml.safe_load(raw)
    except (yaml.YAMLError, RecursionError) as error:
        problem = getattr(error, "problem", None) or "nested too deeply"
        msg = (
            f"--set {assignment!r}: the value is not valid YAML ({problem}); write it as YAML, "
            "e.g. --set 'generator.levels=[0.1, 0.2]', and quote text that holds `: `, `[` or `{`"
        )
        raise ConfigError(msg) from None
