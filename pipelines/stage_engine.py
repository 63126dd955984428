"""Run a multi-stage pipeline into OUT: each stage under `OUT/<stage>/`, skipped when complete and unchanged.

    OUT/pipeline.json        the plan: stages in run order, kind, inputs, fingerprint, status
    OUT/<generate stage>/    a synth dataset (resumes shard by shard, as a single-stage run)
    OUT/<other stage>/       written into OUT/.synth/work/<stage>-PID/ and renamed into place when done,
                             with manifest.json (inputs by path + manifest sha256, files with sha256, summary)

A stage is complete when its folder's manifest says so with this stage's fingerprint (a generate stage: its
config hash). A changed stage replaces its old folder; stages downstream of it change fingerprint with it.
The local engine and the Prefect flow share `run_stage`; only how a generate stage's shards run differs.
"""

from __future__ import annotations

import contextlib
import json
import os
import shutil
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from synth.core.errors import OutputDirError
from synth.core.manifest import MANIFEST_FORMAT, utc_now
from synth.core.sink import DatasetDir, is_temp_name, sha256_file, write_json_atomic
from synth.core.stage import StageContext, StageInput
from synth.pipelines.stages import GENERATE, Stage, StagePlan, stage_input, stage_kinds

PIPELINE_FILE = "pipeline.json"
PIPELINE_FORMAT = "synth-pipeline/1"
STAGE_FORMAT = "synth-stage/1"
WORK_DIR = ".synth/work"

GenerateRunner = Callable[[Stage, Path, bool], dict[str, Any]]
AtomicRunner = Callable[[StagePlan, Stage, Path], dict[str, Any]]


@dataclass
class StagesSummary:
    """What a multi-stage run reports: the pipeline file and which stages ran or were skipped."""

    out: Path
    pipeline: dict[str, Any]
    executed: list[str] = field(default_factory=list)
    skipped: list[str] = field(default_factory=list)


def read_json_or_none(path: Path) -> dict[str, Any] | None:
    """A JSON object file, or None when it is missing or unreadable (an interrupted stage is redone)."""
    try:
        value = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, UnicodeDecodeError, json.JSONDecodeError):
        return None
    return value if isinstance(value, dict) else None


def stage_manifest(out: Path, stage: Stage) -> dict[str, Any] | None:
    """The manifest of `OUT/<stage>/` if it exists and is readable, else None."""
    return read_json_or_none(out / stage.name / "manifest.json")


def is_complete(out: Path, stage: Stage) -> bool:
    """Whether `OUT/<stage>/` holds this stage's complete output (same fingerprint / config hash)."""
    manifest = stage_manifest(out, stage)
    if manifest is None or manifest.get("status") != "complete":
        return False
    if stage.kind == GENERATE:
        records = DatasetDir(out / stage.name)
        intact = all(records.record_path(index).is_file() for index in range(stage.config.shards))
        return intact and manifest.get("config_hash") == stage.config.config_hash()
    return manifest.get("fingerprint") == stage.fingerprint


@contextlib.contextmanager
def open_pipeline(plan: StagePlan, out: str | Path) -> Iterator[Path]:
    """Lock OUT for the whole run and refuse a folder that holds something other than a synth pipeline."""
    root = Path(out)
    state = DatasetDir(root)
    if root.exists() and not (root / PIPELINE_FILE).exists():
        foreign = sorted(p.name for p in root.iterdir() if p.name != ".synth" and not is_temp_name(p.name))
        if foreign:
            msg = f"{root}: not empty and not a synth pipeline (found {foreign[0]!r}); use a new --out"
            raise OutputDirError(msg)
    root.mkdir(parents=True, exist_ok=True)
    with state.lock():
        yield root


def write_pipeline_file(plan: StagePlan, root: Path) -> dict[str, Any]:
    """Write OUT/pipeline.json for the current state of every stage and return it."""
    previous = read_json_or_none(root / PIPELINE_FILE) or {}
    stages = []
    for stage in plan.stages:
        manifest = stage_manifest(root, stage)
        done = is_complete(root, stage)
        status = "complete" if done else "pending" if manifest is None else _unfinished_status(manifest)
        stages.append(
            {
                "name": stage.name,
                "kind": stage.kind,
                "inputs": list(stage.inputs),
                "fingerprint": stage.fingerprint,
                "status": status,
                "path": stage.name,
                "manifest_sha256": sha256_file(root / stage.name / "manifest.json") if done else None,
            }
        )
    pipeline = {
        "format": PIPELINE_FORMAT,
        "source": plan.source,
        "seed": plan.seed,
        "status": "complete" if all(s["status"] == "complete" for s in stages) else "partial",
        "stages": stages,
        "created_at": previous.get("created_at") or utc_now(),
        "updated_at": utc_now(),
    }
    write_json_atomic(root / PIPELINE_FILE, pipeline)
    return pipeline


def resolved_inputs(plan: StagePlan, stage: Stage, root: Path) -> list[StageInput]:
    """The stage's inputs as they are now on disk (manifests loaded)."""
    built = {s.name: s for s in plan.stages}
    inputs = []
    for item in stage.inputs:
        if item in built:
            upstream = built[item]
            inputs.append(stage_input(upstream, built, root=root, manifest=stage_manifest(root, upstream)))
        else:
            inputs.append(stage.external[item])
    return inputs


def input_references(inputs: list[StageInput]) -> list[dict[str, Any]]:
    """How a stage's manifest names its inputs: stage, path, manifest sha256 and rows."""
    references = []
    for item in inputs:
        manifest = item.manifest or {}
        rows = manifest.get("totals", {}).get("rows")
        references.append(
            {
                "name": item.name,
                "path": str(item.path),
                "kind": item.kind,
                "manifest_sha256": sha256_file(item.path / "manifest.json"),
                **({"rows": rows} if rows is not None else {}),
            }
        )
    return references


def run_stage(
    plan: StagePlan, stage: Stage, root: Path, *, run_generate: GenerateRunner, run_atomic: AtomicRunner
) -> dict[str, Any]:
    """Run one stage into `root/<stage>/` and return its manifest (a changed generate stage replaces its data)."""
    if stage.kind == GENERATE:
        previous = stage_manifest(root, stage)
        changed = previous is not None and previous.get("config_hash") != stage.config.config_hash()
        return run_generate(stage, root / stage.name, changed)
    return run_atomic(plan, stage, root)


def run_atomic_stage(plan: StagePlan, stage: Stage, root: Path) -> dict[str, Any]:
    """Run a non-generate stage in a fresh work folder, write its manifest, then rename it to OUT/<stage>."""
    inputs = resolved_inputs(plan, stage, root)
    work = root / WORK_DIR / f"{stage.name}-{os.getpid()}"
    shutil.rmtree(work, ignore_errors=True)
    work.mkdir(parents=True)
    seed = stage.settings_json().get("seed")
    seed = plan.seed if seed is None else int(seed)
    summary = stage_kinds()[stage.kind].run(stage.settings, StageContext(stage.name, work, inputs, seed))
    manifest = {
        "format": STAGE_FORMAT,
        "kind": stage.kind,
        "stage": stage.name,
        "fingerprint": stage.fingerprint,
        "settings": stage.settings_json(),
        "inputs": input_references(inputs),
        "status": "complete",
        "files": _file_list(work),
        "summary": summary,
        "created_at": utc_now(),
    }
    written = read_json_or_none(work / "manifest.json")
    if written is not None and written.get("format") == MANIFEST_FORMAT:
        # a stage that writes a synth dataset (curate) keeps its dataset manifest, with the stage's fields added
        stage_fields = ("kind", "stage", "fingerprint", "settings", "summary")
        manifest = written | {key: manifest[key] for key in stage_fields} | {"stage_inputs": manifest["inputs"]}
    write_json_atomic(work / "manifest.json", manifest)
    final = root / stage.name
    if final.exists():
        trash = root / WORK_DIR / f"{stage.name}-old-{os.getpid()}"
        os.replace(final, trash)
        shutil.rmtree(trash)
    os.replace(work, final)
    return manifest


def run_stages_local(plan: StagePlan, out: str | Path, *, workers: int | None = None) -> StagesSummary:
    """Run every stage in dependency order in this process (generate stages may use a process pool)."""
    from synth.pipelines.execution import run_local

    def run_generate(stage: Stage, target: Path, changed: bool) -> dict[str, Any]:
        return run_local(stage.config, target, overwrite=changed, workers=workers).manifest

    return run_stages(plan, out, run_generate=run_generate)


def run_stages(
    plan: StagePlan,
    out: str | Path,
    *,
    run_generate: GenerateRunner,
    run_atomic: AtomicRunner | None = None,
) -> StagesSummary:
    """Run the stages that are not complete, in order; shared by the local engine and the Prefect flow."""
    with open_pipeline(plan, out) as root:
        summary = StagesSummary(out=root, pipeline=write_pipeline_file(plan, root))
        for stage in plan.stages:
            if is_complete(root, stage):
                summary.skipped.append(stage.name)
                continue
            run_stage(plan, stage, root, run_generate=run_generate, run_atomic=run_atomic or run_atomic_stage)
            summary.executed.append(stage.name)
            summary.pipeline = write_pipeline_file(plan, root)
        shutil.rmtree(root / WORK_DIR, ignore_errors=True)
        summary.pipeline = write_pipeline_file(plan, root)
    return summary


def _file_list(folder: Path) -> list[dict[str, Any]]:
    files = sorted(p for p in folder.rglob("*") if p.is_file())
    return [
        {"path": p.relative_to(folder).as_posix(), "bytes": p.stat().st_size, "sha256": sha256_file(p)} for p in files
    ]


def _unfinished_status(manifest: dict[str, Any]) -> str:
    """`stale` for a complete output of an earlier version of the stage, else `partial`."""
    return "stale" if manifest.get("status") == "complete" else "partial"
