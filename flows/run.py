"""The deployable flow `synth-run`: typed parameters, one new dataset version per run, `latest` moved last.

`synth deploy` registers this flow (entrypoint `synth.flows.run.synth_run_flow`) with a schedule. Each run:

1. builds the config mapping from `config_path` or an inline `config`, then `overrides` and `seed`;
2. allocates `OUT/versions/<run-date>-<n>/` under the root's lock (a retry of the same flow run resumes its
   own folder; any other run gets a new one, so nothing written earlier is overwritten);
3. runs the pipeline (or its stages) there, with the chosen task runner;
4. only when that finished complete: records the version in `OUT/versions.json`, replaces `OUT/latest.json`
   atomically, and prunes old versions when `keep` is set. A failed run raises before step 4.

With `versions: seed` the run seed advances per version (`seed + n - 1`), so a schedule produces new data from
an unchanged config; with `versions: date` each version reruns the same seed (new inputs, new code); with
`versions: off` the run writes OUT itself and resumes like `synth run`.
"""

from __future__ import annotations

import copy
import datetime as dt
import hashlib
import os
from pathlib import Path
from typing import Any, Literal

from prefect import flow, runtime
from pydantic import BaseModel, ConfigDict, Field, model_validator

from synth.core.config import TaskRunner as TaskRunnerName
from synth.core.config import apply_overrides, parse_config, read_config_mapping
from synth.core.errors import OutputDirError
from synth.core.records import canonical_json
from synth.core.sink import STATE_DIR, write_json_atomic
from synth.core.versions import Version, VersionedRoot
from synth.pipelines.stage_engine import read_json_or_none

os.environ.setdefault("PREFECT_SERVER_ANALYTICS_ENABLED", "false")

VersionScheme = Literal["date", "seed", "off"]
REQUEST_FILE = "version.json"


class RunParams(BaseModel):
    """Parameters of a `synth-run` flow run; the Prefect UI renders them as a form."""

    model_config = ConfigDict(extra="forbid")

    config_path: str | None = Field(
        None,
        description="Pipeline config YAML, as the worker sees it (or give `config`).",
        json_schema_extra={"position": 0},
    )
    config: dict[str, Any] | None = Field(
        None, description="Inline pipeline config (instead of `config_path`).", json_schema_extra={"position": 1}
    )
    out: str = Field(
        ..., description="Output root: each run writes OUT/versions/<date>-<n>/.", json_schema_extra={"position": 2}
    )
    seed: int | None = Field(
        None, ge=-(2**63), lt=2**63, description="Run seed (replaces the config's).", json_schema_extra={"position": 3}
    )
    overrides: list[str] = Field(
        default_factory=list,
        description="Config overrides KEY=VALUE (value as YAML), e.g. generator.samples=2.",
        json_schema_extra={"position": 4},
    )
    versions: VersionScheme = Field(
        "date",
        description="date: a new folder per run, same seed; seed: the seed advances per version; off: write OUT.",
        json_schema_extra={"position": 5},
    )
    keep: int | None = Field(
        None,
        ge=1,
        description="Keep this many complete versions (older ones are deleted).",
        json_schema_extra={"position": 6},
    )
    task_runner: TaskRunnerName | None = Field(
        None, description="threads, processes, dask or ray (default: the config's).", json_schema_extra={"position": 7}
    )
    address: str | None = Field(
        None,
        description="Existing Dask scheduler or Ray head (default: a local cluster).",
        json_schema_extra={"position": 8},
    )
    workers: int | None = Field(None, ge=1, description="Parallel shards.", json_schema_extra={"position": 9})

    @model_validator(mode="after")
    def _one_config(self) -> RunParams:
        if (self.config_path is None) == (self.config is None):
            msg = "give exactly one of config_path and config"
            raise ValueError(msg)
        return self

    def config_mapping(self) -> tuple[dict[str, Any], str]:
        """The config mapping this run uses (overrides and seed applied) and its source name for errors."""
        if self.config_path is not None:
            data, source = read_config_mapping(self.config_path), self.config_path
        else:
            data, source = copy.deepcopy(self.config or {}), "<flow parameter config>"
        data = apply_overrides(data, list(self.overrides))
        if self.seed is not None:
            data["seed"] = self.seed
        if self.address is not None:
            data.setdefault("execution", {})["address"] = self.address
        return data, source


def run_date() -> dt.date:
    """The UTC date the flow run was scheduled for (today outside a scheduled run)."""
    scheduled = runtime.flow_run.scheduled_start_time
    moment = scheduled if scheduled is not None else dt.datetime.now(dt.UTC)
    return moment.astimezone(dt.UTC).date()


def check_config(data: dict[str, Any], source: str) -> None:
    """Validate a single- or multi-stage config mapping (one-line `ConfigError`) before anything is written."""
    if "stages" in data:
        from synth.pipelines.stages import parse_stages

        parse_stages(data, source=source)
    else:
        parse_config(data, source=source)


def run_config(data: dict[str, Any], source: str, out: Path, params: RunParams) -> dict[str, Any]:
    """Run a single- or multi-stage config into `out` with the Prefect engine; return its status and counts."""
    if "stages" in data:
        from synth.flows.stages import run_stages_prefect
        from synth.pipelines.stages import parse_stages

        plan = parse_stages(data, source=source)
        summary = run_stages_prefect(plan, data, out, task_runner=params.task_runner, workers=params.workers)
        return {"status": summary.pipeline["status"], "stages_executed": summary.executed}
    from synth.flows.pipeline import run_prefect

    config = parse_config(data, source=source)
    result = run_prefect(config, out, task_runner=params.task_runner, workers=params.workers)
    totals = result.manifest["totals"]
    return {
        "status": result.manifest["status"],
        "config_hash": result.manifest["config_hash"],
        "rows": totals["rows"],
        "rejected_rows": totals["rejected_rows"],
    }


def _open_version(root: VersionedRoot, flow_run_id: str | None) -> Version:
    """Allocate this run's version folder (a retry of the same flow run gets its own unfinished one back)."""

    def own_retry(version: Version) -> bool:
        previous = read_json_or_none(version.path / STATE_DIR / REQUEST_FILE) or {}
        return flow_run_id is not None and previous.get("flow_run_id") == flow_run_id

    with root.lock():
        version = root.allocate(run_date(), resume=own_retry)
        (version.path / STATE_DIR).mkdir(exist_ok=True)
        write_json_atomic(version.path / STATE_DIR / REQUEST_FILE, {"flow_run_id": flow_run_id})
    return version


@flow(name="synth-run", log_prints=True, persist_result=False)
def synth_run_flow(params: RunParams) -> dict[str, Any]:
    """Write a new dataset version under `params.out` and point `latest` at it once it is complete."""
    data, source = params.config_mapping()
    check_config(data, source)
    if params.versions == "off":
        return run_config(data, source, Path(params.out), params) | {"out": params.out}
    root = VersionedRoot(Path(params.out))
    version = _open_version(root, runtime.flow_run.id)
    if params.versions == "seed":
        data["seed"] = int(data.get("seed", 0)) + version.ordinal - 1
    result = run_config(data, source, version.path, params)
    if result["status"] != "complete":
        msg = f"{version.path}: the run ended {result['status']}; `latest` still names the previous version"
        raise OutputDirError(msg)
    request = hashlib.sha256(canonical_json(data).encode()).hexdigest()[:16]
    info = {"seed": data.get("seed", 0), "request_sha256": request} | result
    with root.lock():
        pointer = root.publish(version, info)
        pruned = root.prune(params.keep) if params.keep else []
    print(f"version {version.name} complete -> {version.path}; latest {'moved' if pointer else 'unchanged'}")
    return {"out": str(root.root), "version": version.name, "path": str(version.path), "pruned": pruned} | info
