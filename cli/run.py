"""`synth run CONFIG` and `synth generate DOMAIN`: produce a dataset directory."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import typer
from rich.markup import escape

from synth.cli._common import cli_errors, console, exit_with_error, shard_progress
from synth.core.config import (
    Engine,
    PipelineConfig,
    TaskRunner,
    apply_overrides,
    parse_config,
    read_config_mapping,
)

OUT_HELP = "Output directory (default: `execution.out` of the config, else out/<domain>)."
ENGINE_HELP = "local: run in this process, no Prefect. prefect: a Prefect flow with one task per shard."
RUNNER_HELP = "Prefect task runner: threads, processes, dask or ray (a local cluster, or the one at --address)."
ADDRESS_HELP = "Existing cluster for --task-runner dask (tcp://host:8786) or ray (host:6379, ray://host:10001)."
WORKERS_HELP = "Parallel shards: processes for the local engine, task-runner workers for Prefect."
OVERWRITE_HELP = "Delete what synth wrote in OUT before running (otherwise a rerun resumes)."
SET_HELP = "Override a config field, e.g. --set generator.samples=2 (repeatable; value parsed as YAML)."
JSON_HELP = "Print the run summary as JSON on stdout."
PROGRESS_HELP = "Show progress bars on stderr."


def execute(
    config: PipelineConfig,
    *,
    out: Path | None,
    engine: Engine | None,
    task_runner: TaskRunner | None,
    workers: int | None,
    overwrite: bool,
    show_progress: bool,
    as_json: bool,
) -> None:
    """Run a validated config with the chosen engine and print the summary.

    A run that keeps no row while it rejected some exits 1 with one line naming the main reason: the dataset
    is still written and complete (it records the rejections), but holds nothing to use.
    """
    target = out or Path(config.execution.out or f"out/{config.domain}")
    chosen = engine or config.execution.engine
    if chosen == "prefect":
        from synth.flows.pipeline import run_prefect

        summary = run_prefect(config, target, overwrite=overwrite, task_runner=task_runner, workers=workers)
    else:
        summary = _run_local_with_progress(config, target, overwrite, workers, show_progress and not as_json)
    totals = summary.manifest["totals"]
    report = {
        "out": str(summary.out),
        "status": summary.manifest["status"],
        "config_hash": summary.manifest["config_hash"],
        "engine": chosen,
        "shards_executed": summary.executed,
        "shards_skipped": summary.skipped,
        "rows": totals["rows"],
        "rejected_rows": totals["rejected_rows"],
        "rejected": totals["rejected"],
        "verifiers": totals["verifiers"],
    }
    nothing_kept = report["rows"] == 0 and report["rejected_rows"] > 0
    if as_json:
        console.print_json(json.dumps(report))
    else:
        style = "bold red" if nothing_kept else "bold green"
        console.print(
            f"[{style}]{report['status']}[/]: {report['rows']:,} rows kept, {report['rejected_rows']:,} rejected "
            f"-> {escape(report['out'])} (shards run {len(summary.executed)}, resumed {len(summary.skipped)})"
        )
        for name, counts in report["verifiers"].items():
            console.print(
                f"  verifier {escape(name)}: {100 * counts['pass_rate']:.2f} % passed "
                f"({counts['passed']}/{counts['total']})"
            )
        for reason, count in list(report["rejected"].items())[:8]:
            console.print(f"  rejected {escape(reason)}: {count}")
    if nothing_kept:
        reason, count = next(iter(report["rejected"].items()))
        msg = (
            f"no rows kept: all {report['rejected_rows']:,} items were rejected; most common reason `{reason}` "
            f"({count:,}); see {summary.out / 'rejected'}/"
        )
        exit_with_error(msg, 1)


def _run_local_with_progress(
    config: PipelineConfig, out: Path, overwrite: bool, workers: int | None, show: bool
) -> Any:
    from synth.pipelines.execution import RunPlan, run_local

    with shard_progress(config.shards, enabled=show) as progress:
        if progress is None:
            return run_local(config, out, overwrite=overwrite, workers=workers)
        task = progress.add_task("shards", total=config.shards, rows=0)

        def on_start(plan: RunPlan) -> None:
            progress.start()
            done = len(plan.records)
            progress.update(
                task, completed=done, rows=sum(r["rows"] + r["rejected_rows"] for r in plan.records.values())
            )

        def on_shard(record: dict[str, Any]) -> None:
            progress.advance(task)

        def on_batch(rows: int) -> None:
            progress.update(task, rows=progress.tasks[task].fields["rows"] + rows)

        return run_local(
            config,
            out,
            overwrite=overwrite,
            workers=workers,
            on_start=on_start,
            on_shard=on_shard,
            on_batch=on_batch,
        )


def run_command(
    config_path: Path = typer.Argument(..., help="Pipeline config (YAML).", metavar="CONFIG"),
    out: Path | None = typer.Option(None, "--out", "-o", help=OUT_HELP),
    engine: Engine | None = typer.Option(None, "--engine", help=ENGINE_HELP),
    task_runner: TaskRunner | None = typer.Option(None, "--task-runner", help=RUNNER_HELP),
    workers: int | None = typer.Option(None, "--workers", min=1, help=WORKERS_HELP),
    address: str | None = typer.Option(None, "--address", help=ADDRESS_HELP),
    overwrite: bool = typer.Option(False, "--overwrite", help=OVERWRITE_HELP),
    overrides: list[str] | None = typer.Option(None, "--set", help=SET_HELP),
    progress: bool = typer.Option(True, "--progress/--no-progress", help=PROGRESS_HELP),
    as_json: bool = typer.Option(False, "--json", help=JSON_HELP),
) -> None:
    """Run the pipeline a YAML config describes; a rerun with the same config resumes."""
    data = apply_overrides(read_config_mapping(config_path), overrides)
    if address is not None:
        data.setdefault("execution", {})["address"] = address
    if "stages" in data:
        from synth.cli.stages import execute_stages

        execute_stages(
            data,
            source=str(config_path),
            out=out,
            engine=engine,
            task_runner=task_runner,
            workers=workers,
            overwrite=overwrite,
            as_json=as_json,
        )
        return
    config = parse_config(data, source=str(config_path))
    execute(
        config,
        out=out,
        engine=engine,
        task_runner=task_runner,
        workers=workers,
        overwrite=overwrite,
        show_progress=progress,
        as_json=as_json,
    )


def generate_command(
    domain: str = typer.Argument(..., help="Domain name (see `synth domains`)."),
    out: Path | None = typer.Option(None, "--out", "-o", help=OUT_HELP),
    seed: int = typer.Option(0, "--seed", help="Run seed; the same seed and config give identical shards."),
    shards: int = typer.Option(1, "--shards", min=1, help="Number of shards (fixed for the life of OUT)."),
    input_path: Path | None = typer.Option(None, "--input", help="Domain input (default: the shipped sample)."),
    engine: Engine = typer.Option("local", "--engine", help=ENGINE_HELP),
    task_runner: TaskRunner = typer.Option("threads", "--task-runner", help=RUNNER_HELP),
    workers: int | None = typer.Option(None, "--workers", min=1, help=WORKERS_HELP),
    overwrite: bool = typer.Option(False, "--overwrite", help=OVERWRITE_HELP),
    overrides: list[str] | None = typer.Option(None, "--set", help=SET_HELP),
    progress: bool = typer.Option(True, "--progress/--no-progress", help=PROGRESS_HELP),
    as_json: bool = typer.Option(False, "--json", help=JSON_HELP),
) -> None:
    """Generate a dataset for DOMAIN with its default settings (tune them with --set)."""
    data: dict[str, Any] = {"domain": domain, "seed": seed, "shards": shards, "generator": {}}
    if input_path is not None:
        data["generator"]["input"] = str(input_path)
    config = parse_config(apply_overrides(data, overrides), source="synth generate")
    execute(
        config,
        out=out,
        engine=engine,
        task_runner=task_runner,
        workers=workers,
        overwrite=overwrite,
        show_progress=progress,
        as_json=as_json,
    )


def register(app: typer.Typer) -> None:
    """Add `run` and `generate` to the root app."""
    app.command("run")(cli_errors(run_command))
    app.command("generate")(cli_errors(generate_command))
