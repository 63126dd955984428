"""`synth run CONFIG` for a multi-stage config: run its stages in order and print what ran."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from rich.table import Table

from synth.cli._common import console
from synth.core.config import Engine, TaskRunner
from synth.core.errors import ConfigError


def execute_stages(
    data: dict[str, Any],
    *,
    source: str,
    out: Path | None,
    engine: Engine | None,
    task_runner: TaskRunner | None,
    workers: int | None,
    overwrite: bool,
    as_json: bool,
) -> None:
    """Validate a multi-stage config, run the stages that are not complete, and print one line per stage."""
    from synth.pipelines.stages import parse_stages

    if overwrite:
        msg = "--overwrite: not available for a multi-stage config; a changed stage reruns with what is downstream"
        raise ConfigError(msg)
    plan = parse_stages(data, source=source)
    target = out or Path(plan.execution.out or f"out/{Path(source).stem}")
    chosen = engine or plan.execution.engine
    if chosen == "prefect":
        from synth.flows.stages import run_stages_prefect

        summary = run_stages_prefect(plan, data, target, task_runner=task_runner, workers=workers)
    else:
        from synth.pipelines.stage_engine import run_stages_local

        summary = run_stages_local(plan, target, workers=workers)
    report = {
        "out": str(summary.out),
        "status": summary.pipeline["status"],
        "engine": chosen,
        "stages_executed": summary.executed,
        "stages_skipped": summary.skipped,
        "stages": summary.pipeline["stages"],
    }
    if as_json:
        console.print_json(json.dumps(report))
        return
    table = Table(title=f"{report['status']}: {report['out']}")
    for column in ("stage", "kind", "inputs", "fingerprint", "status", "this run"):
        table.add_column(column)
    for stage in report["stages"]:
        ran = "ran" if stage["name"] in summary.executed else "skipped (complete)"
        table.add_row(
            stage["name"], stage["kind"], ", ".join(stage["inputs"]) or "-", stage["fingerprint"], stage["status"], ran
        )
    console.print(table)
