"""The run manifest: config, config hash, input facts, per-shard status and merged statistics."""

from __future__ import annotations

import datetime as dt
from collections import Counter
from collections.abc import Mapping, Sequence
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field, ValidationError, model_validator

import synth
from synth.core.config import format_validation_error
from synth.core.errors import InputError

MANIFEST_FORMAT = "synth-manifest/1"
DAMAGED_HINT = "rerun the command that made this dataset with --overwrite to rebuild it"


class _SplitFile(BaseModel):
    """One kept-row file of a shard in a dataset with splits (see `synth.core.sink`)."""

    model_config = ConfigDict(extra="allow", strict=True)

    split: str
    path: str
    sha256: str
    rows: int


class _ShardEntry(BaseModel):
    """One entry of `shards`: what readers rely on (a complete shard names its files, checksums and rows)."""

    model_config = ConfigDict(extra="allow", strict=True)

    index: int
    status: Literal["complete", "pending"]
    path: str | None = None
    sha256: str | None = None
    rows: int | None = None
    rejected_path: str | None = None
    rejected_sha256: str | None = None
    rejected_rows: int | None = None
    files: list[_SplitFile] | None = None

    @model_validator(mode="after")
    def _complete_names_its_files(self) -> _ShardEntry:
        kept = ("path", "sha256") if self.files is None else ()
        needed = (*kept, "rows", "rejected_path", "rejected_sha256", "rejected_rows")
        missing = [name for name in needed if getattr(self, name) is None]
        if self.status == "complete" and missing:
            msg = f"a complete shard needs `{missing[0]}`"
            raise ValueError(msg)
        return self


class _ManifestShape(BaseModel):
    """The fields of a dataset manifest that synth reads back."""

    model_config = ConfigDict(extra="allow", strict=True)

    format: Literal["synth-manifest/1"]
    domain: str
    config_hash: str
    config: dict[str, Any]
    status: Literal["complete", "partial"]
    num_shards: int = Field(ge=1)
    totals: dict[str, Any]
    shards: list[_ShardEntry]

    @model_validator(mode="after")
    def _one_entry_per_shard(self) -> _ManifestShape:
        if [shard.index for shard in self.shards] != list(range(self.num_shards)):
            msg = f"expected one entry per shard, indexes 0 to {self.num_shards - 1} in order"
            raise ValueError(msg)
        return self


def check_manifest(value: Any, *, source: str) -> dict[str, Any]:
    """Return `value` if it has the shape of a dataset manifest, else raise a one-line `InputError`.

    Manifests of other synth formats (a multi-stage run's `synth-pipeline/1`, a stage's `synth-stage/1`) are
    returned as read; their readers check them.
    """
    if not isinstance(value, dict):
        msg = f"{source}: damaged manifest (expected a JSON object, got {type(value).__name__}); {DAMAGED_HINT}"
        raise InputError(msg)
    kind = value.get("format")
    if isinstance(kind, str) and kind.startswith("synth-") and kind != MANIFEST_FORMAT:
        return value
    try:
        _ManifestShape.model_validate(value)
    except ValidationError as error:
        problem = format_validation_error(error, source=f"{source}: damaged manifest")
        raise InputError(f"{problem}; {DAMAGED_HINT}") from None
    return value


def utc_now() -> str:
    """Current UTC time in ISO format (manifest only; never inside data files)."""
    return dt.datetime.now(dt.UTC).replace(microsecond=0).isoformat()


def merge_totals(records: Mapping[int, Mapping[str, Any]]) -> dict[str, Any]:
    """Sum rows, rejections and verifier counts over complete shard records."""
    rejected: Counter[str] = Counter()
    passed: Counter[str] = Counter()
    total: Counter[str] = Counter()
    categories: dict[str, Counter[str]] = {}
    generated = rows = 0
    for record in records.values():
        stats = record["stats"]
        for column, counts in stats.get("categories", {}).items():
            categories.setdefault(column, Counter()).update(counts)
        generated += stats["generated"]
        rows += record["rows"]
        rejected.update(stats["rejected"])
        for name, counts in stats["verifiers"].items():
            passed[name] += counts["passed"]
            total[name] += counts["total"]
    extra = {"categories": {c: dict(sorted(n.items())) for c, n in sorted(categories.items())}} if categories else {}
    return extra | {
        "generated": generated,
        "rows": rows,
        "rejected_rows": sum(rejected.values()),
        "rejected": dict(sorted(rejected.items(), key=lambda item: (-item[1], item[0]))),
        "verifiers": {
            name: {
                "passed": passed[name],
                "total": total[name],
                "pass_rate": round(passed[name] / total[name], 6),
            }
            for name in sorted(total)
            if total[name]
        },
    }


def build_manifest(
    *,
    domain: str,
    config_hash: str,
    config: Mapping[str, Any],
    num_shards: int,
    columns: list[str],
    input_info: Mapping[str, Any],
    records: Mapping[int, Mapping[str, Any]],
    previous: Mapping[str, Any] | None,
    inputs: Sequence[Mapping[str, Any]] | None = None,
) -> dict[str, Any]:
    """Assemble the manifest for the current state of a run.

    `inputs` (derived datasets and stages only) names the datasets read, each by path and manifest sha256.
    """
    shards = []
    for index in range(num_shards):
        record = records.get(index)
        if record is None:
            shards.append({"index": index, "status": "pending"})
        else:
            shards.append({k: v for k, v in record.items() if k != "stats"} | {"seconds": record["stats"]["seconds"]})
    complete = len(records) == num_shards
    linked = {"inputs": [dict(item) for item in inputs]} if inputs is not None else {}
    return {
        "format": MANIFEST_FORMAT,
        "synth_version": synth.__version__,
        "domain": domain,
        "config_hash": config_hash,
        "config": dict(config),
        "status": "complete" if complete else "partial",
        "num_shards": num_shards,
        "columns": columns,
        "input": dict(input_info),
        **linked,
        "totals": merge_totals(records),
        "shards": shards,
        "created_at": (previous or {}).get("created_at") or utc_now(),
        "updated_at": utc_now(),
    }
