"""`synth curate IN [IN...] OUT --config CURATE.yaml`: dedup, decontaminate, filter and balance synth datasets."""

from __future__ import annotations

import json
from pathlib import Path

import typer
from rich.markup import escape
from rich.table import Table

from synth.cli._common import cli_errors, console


def curate_command(
    paths: list[Path] = typer.Argument(..., help="Input synth dataset(s), merged in order, then OUT."),
    config: Path = typer.Option(..., "--config", "-c", help="Curate YAML: the operations in order."),
    overwrite: bool = typer.Option(False, "--overwrite", help="Replace an OUT made with another config."),
    as_json: bool = typer.Option(False, "--json", help="Print the per-operation report as JSON."),
) -> None:
    """Curate synth datasets into OUT: kept rows in data/, dropped rows in rejected/ with their reason.

    Operations: exact_dedup, near_dedup (MinHash + LSH), decontaminate (n-gram overlap with evaluation sets),
    verdict / range / regex / length / quality filters, balance. A killed run resumes when rerun.
    """
    from synth.core.errors import InputError
    from synth.pipelines.curation.config import load_curate_config
    from synth.pipelines.curation.engine import curate

    if len(paths) < 2:
        msg = "synth curate needs at least one input dataset and OUT (synth curate IN [IN...] OUT --config FILE)"
        raise InputError(msg)
    settings = load_curate_config(config)
    summary = curate(paths[:-1], paths[-1], settings, source=str(config), overwrite=overwrite)
    if as_json:
        console.print_json(json.dumps(summary.report))
        return
    report = summary.report
    table = Table(
        "step", "kind", "rows in", "dropped", "reason", title=f"{escape(str(summary.out))}", title_justify="left"
    )
    for op in report["operations"]:
        table.add_row(escape(op["name"]), op["kind"], f"{op['rows_in']:,}", f"{op['dropped']:,}", escape(op["reason"]))
    console.print(table)
    resumed = " (reused the saved decisions)" if summary.reused_decisions else ""
    console.print(
        f"kept {report['kept']:,} of {report['rows']:,} rows{resumed}; "
        f"`synth inspect {escape(str(summary.out))}` shows them"
    )


def register(app: typer.Typer) -> None:
    """Add `curate` to the root app."""
    app.command("curate")(cli_errors(curate_command))
