"""Multi-stage pipeline configs: named stages, their inputs, dependency order and fingerprints.

    seed: 7
    stages:
      dialogues: {kind: generate, domain: toolforge, shards: 4, generator: {...}}
      sft:       {kind: train, inputs: [dialogues], trainer: sft, steps: 20}
      openai:    {kind: export, inputs: [dialogues], format: openai}
    execution: {out: out/toolforge-sft}

A `generate` stage is a whole single-stage config (domain, seed, shards, generator, verifiers, filters, card;
its seed defaults to the top-level one) and gives the same shards as that config run alone. Every other kind
takes its fields from `synth.pipelines.stage_kinds`. An input is the name of another stage, or the path of an
existing, complete synth dataset. A stage's fingerprint covers its own settings and its inputs' fingerprints,
so changing a stage changes it and everything downstream, and nothing upstream.
"""

from __future__ import annotations

import hashlib
import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from pydantic import BaseModel, Field, ValidationError

from synth.core.config import ExecutionConfig, PipelineConfig, StrictModel, format_validation_error, parse_config
from synth.core.errors import ConfigError, InputError
from synth.core.records import canonical_json
from synth.core.stage import StageInput, StageKind

STAGE_NAME = re.compile(r"[a-z0-9][a-z0-9_-]*")
GENERATE = "generate"
COMMON_FIELDS = ("kind", "inputs")


class StagesFile(StrictModel):
    """The top level of a multi-stage config; each stage entry is validated by its kind."""

    seed: int = 0
    stages: dict[str, dict[str, Any]] = Field(min_length=1)
    execution: ExecutionConfig = Field(default_factory=ExecutionConfig)


@dataclass(frozen=True)
class Stage:
    """One validated stage: its kind, inputs (stage names or external dataset paths), settings, fingerprint."""

    name: str
    kind: str
    inputs: tuple[str, ...]
    settings: BaseModel
    fingerprint: str
    external: Mapping[str, StageInput]

    @property
    def config(self) -> PipelineConfig:
        """The pipeline config of a `generate` stage."""
        if not isinstance(self.settings, PipelineConfig):
            msg = f"stage `{self.name}` is a {self.kind} stage, not a generate stage"
            raise TypeError(msg)
        return self.settings

    def settings_json(self) -> dict[str, Any]:
        """The stage's settings as plain JSON (a generate stage: its data-deciding fields)."""
        if isinstance(self.settings, PipelineConfig):
            return self.settings.model_dump(mode="json", exclude={"execution"})
        return self.settings.model_dump(mode="json")


@dataclass(frozen=True)
class StagePlan:
    """A multi-stage pipeline in dependency order."""

    source: str
    seed: int
    stages: tuple[Stage, ...]
    execution: ExecutionConfig

    def stage(self, name: str) -> Stage:
        return next(s for s in self.stages if s.name == name)

    def downstream_of(self, name: str) -> list[str]:
        """Stages that read `name`, directly or through others, in run order."""
        reached = {name}
        for stage in self.stages:
            if reached & set(stage.inputs):
                reached.add(stage.name)
        return [s.name for s in self.stages if s.name in reached and s.name != name]


def is_stages_config(data: Mapping[str, Any]) -> bool:
    """Whether a config mapping describes a multi-stage pipeline (it has `stages`)."""
    return "stages" in data


def fingerprint(kind: str, settings: Mapping[str, Any], inputs: Sequence[str]) -> str:
    """16 hex digits of sha256 over a stage's kind, settings and its inputs' fingerprints (in order)."""
    payload = canonical_json({"kind": kind, "settings": dict(settings), "inputs": list(inputs)})
    return hashlib.sha256(payload.encode()).hexdigest()[:16]


def parse_stages(data: Mapping[str, Any], *, source: str = "<config>") -> StagePlan:
    """Validate a multi-stage config: every stage, its inputs, the absence of cycles, and each kind's checks.

    Raises `ConfigError` (`SOURCE: field `stages.NAME.FIELD`: ...`, exit 2) before anything is written.
    """
    try:
        top = StagesFile.model_validate(dict(data))
    except ValidationError as error:
        raise ConfigError(format_validation_error(error, source=source)) from None
    for name in top.stages:
        if not STAGE_NAME.fullmatch(name):
            msg = f"{source}: field `stages.{name}`: a stage name is lowercase letters, digits, `-` and `_`"
            raise ConfigError(msg)
    order = _dependency_order(top.stages, source=source)
    built: dict[str, Stage] = {}
    for name in order:
        built[name] = _build_stage(name, top.stages[name], built, seed=top.seed, source=source)
    return StagePlan(source=source, seed=top.seed, stages=tuple(built.values()), execution=top.execution)


def stage_kinds() -> Mapping[str, StageKind]:
    """The non-generate stage kinds by name."""
    from synth.pipelines.stage_kinds import STAGE_KINDS

    return STAGE_KINDS


def _inputs_of(name: str, entry: Mapping[str, Any], *, source: str) -> tuple[str, ...]:
    inputs = entry.get("inputs", [])
    if not isinstance(inputs, list) or not all(isinstance(item, str) for item in inputs):
        msg = f"{source}: field `stages.{name}.inputs`: expected a list of stage names or dataset paths"
        raise ConfigError(msg)
    return tuple(inputs)


def _dependency_order(entries: Mapping[str, Mapping[str, Any]], *, source: str) -> list[str]:
    """Stage names so that every stage follows its inputs; ties keep the config's order. Refuses cycles."""
    edges = {
        name: [item for item in _inputs_of(name, entry, source=source) if item in entries]
        for name, entry in entries.items()
    }
    order: list[str] = []
    state: dict[str, str] = {}

    def visit(name: str, path: list[str]) -> None:
        if state.get(name) == "done":
            return
        if state.get(name) == "open":
            cycle = " -> ".join([*path[path.index(name) :], name])
            msg = f"{source}: field `stages.{path[-1]}.inputs`: the stages form a cycle ({cycle})"
            raise ConfigError(msg)
        state[name] = "open"
        for item in edges[name]:
            visit(item, [*path, name])
        state[name] = "done"
        order.append(name)

    for name in entries:
        visit(name, [])
    return order


def _build_stage(name: str, entry: Mapping[str, Any], built: Mapping[str, Stage], *, seed: int, source: str) -> Stage:
    prefix = f"stages.{name}"
    kind = entry.get("kind")
    kinds = stage_kinds()
    if kind != GENERATE and kind not in kinds:
        msg = f"{source}: field `{prefix}.kind`: unknown stage kind {kind!r}; choose from {[GENERATE, *kinds]}"
        raise ConfigError(msg)
    inputs = _inputs_of(name, entry, source=source)
    fields = {key: value for key, value in entry.items() if key not in COMMON_FIELDS}
    if kind == GENERATE:
        if inputs:
            msg = f"{source}: field `{prefix}.inputs`: a generate stage reads no inputs (got {list(inputs)})"
            raise ConfigError(msg)
        config = parse_config({"seed": seed, **fields}, source=source, prefix=prefix)
        return Stage(name, GENERATE, (), config, fingerprint(GENERATE, {"config_hash": config.config_hash()}, ()), {})
    stage_kind = kinds[kind]
    try:
        settings = stage_kind.parse_settings(fields)
    except ValidationError as error:
        raise ConfigError(format_validation_error(error, source=source, prefix=prefix)) from None
    resolved = [_resolve_input(item, built, prefix=prefix, source=source) for item in inputs]
    try:
        stage_kind.check(settings, resolved)
    except ConfigError as error:
        raise ConfigError(f"{source}: field `{prefix}`: {error}") from None
    external = {item: value for item, value in zip(inputs, resolved, strict=True) if item not in built}
    upstream = [built[item].fingerprint if item in built else _external_fingerprint(external[item]) for item in inputs]
    settings_json = settings.model_dump(mode="json")
    return Stage(name, kind, inputs, settings, fingerprint(kind, settings_json, upstream), external)


def output_domain(stage: Stage, built: Mapping[str, Stage]) -> str | None:
    """The domain of the rows a stage writes (generate: its domain; export/curate: its input's; train: None)."""
    if stage.kind == GENERATE:
        return stage.config.domain
    if stage.kind == "train" or not stage.inputs:
        return None
    first = stage.inputs[0]
    return output_domain(built[first], built) if first in built else stage.external[first].domain


def stage_input(
    stage: Stage, built: Mapping[str, Stage], *, root: Path, manifest: Mapping[str, Any] | None
) -> StageInput:
    """How `stage` appears as an input of a later stage, once or before it has run."""
    settings = stage.settings_json()
    return StageInput(
        name=stage.name,
        path=root / stage.name,
        kind=stage.kind,
        domain=output_domain(stage, built),
        format=settings.get("format") if stage.kind == "export" else None,
        manifest=manifest,
    )


def _resolve_input(item: str, built: Mapping[str, Stage], *, prefix: str, source: str) -> StageInput:
    if item in built:
        return stage_input(built[item], built, root=Path("<OUT>"), manifest=None)
    path = Path(item)
    if not (("/" in item or path.exists()) and path.is_dir()):
        known = list(built)
        msg = f"{source}: field `{prefix}.inputs`: {item!r} is neither a stage ({known}) nor a dataset directory"
        raise ConfigError(msg)
    from synth.core.dataset import open_dataset

    try:
        dataset = open_dataset(path)
    except InputError as error:
        raise ConfigError(f"{source}: field `{prefix}.inputs`: {error}") from None
    return StageInput(name=item, path=path, kind="dataset", domain=dataset.domain, manifest=dataset.manifest)


def _external_fingerprint(item: StageInput) -> str:
    from synth.core.sink import sha256_file

    return sha256_file(item.path / "manifest.json")[:16]
