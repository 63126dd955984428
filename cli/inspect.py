"""`synth inspect OUT`: describe a dataset directory."""

from __future__ import annotations

import json
from pathlib import Path
from typing import TYPE_CHECKING

import typer
from rich.markup import escape
from rich.table import Table

from synth.cli._common import cli_errors, console

if TYPE_CHECKING:
    from synth.core.versions import VersionedRoot

PLOTS_HELP = "Write PNG histograms of the numeric columns and bar charts of the category counts to this folder."


def _write_plots(dataset_dir: Path, folder: Path) -> list[Path]:
    from synth.core.dataset import open_dataset
    from synth.pipelines.plots import write_plots

    return write_plots(open_dataset(dataset_dir, require_complete=False), folder)


def show_pipeline(out: Path, *, plots: Path | None, as_json: bool) -> None:
    """Print each stage of a multi-stage OUT (and write plots of its dataset stages)."""
    from synth.pipelines.pipeline_inspection import describe_pipeline

    info = describe_pipeline(out)
    if plots is not None:
        for stage in info["stages"]:
            if stage["rows"] is not None and stage["status"] == "complete":
                stage["plots"] = [str(p) for p in _write_plots(out / stage["name"], plots / stage["name"])]
    if as_json:
        console.print_json(json.dumps(info, default=str))
        return
    table = Table(title=f"{info['out']}  status {info['status']}", title_justify="left")
    for column in ("stage", "kind", "inputs", "status", "domain", "rows", "rejected", "files"):
        table.add_column(column)
    for stage in info["stages"]:
        cells = [stage[key] for key in ("name", "kind")] + [", ".join(stage["inputs"]) or "-", stage["status"]]
        cells += [
            "-" if stage[key] is None else f"{stage[key]:,}" if isinstance(stage[key], int) else stage[key]
            for key in ("domain", "rows", "rejected_rows", "files")
        ]
        table.add_row(*(str(cell) for cell in cells))
    console.print(table)
    for stage in info["stages"]:
        for item in stage["input_manifests"]:
            console.print(
                f"  {stage['name']} <- {item['name']} ({item['path']}, manifest {item['manifest_sha256'][:12]})"
            )


def show_versions(root: VersionedRoot, *, as_json: bool) -> Path | None:
    """Print the versions of a versioned output root (`synth deploy`); return the latest to describe next."""
    info = root.describe()
    if as_json:
        console.print_json(json.dumps(info, default=str))
        return None
    table = Table(title=f"{escape(info['out'])}  latest {info['latest'] or '-'}", title_justify="left")
    for column in ("version", "status", "seed", "rows", "path"):
        table.add_column(column)
    for item in info["versions"]:
        mark = " (latest)" if item["name"] == info["latest"] else ""
        cells = [item["name"] + mark, item["status"], item.get("seed", "-"), item.get("rows", "-"), item["path"]]
        table.add_row(*(escape(str(cell)) for cell in cells))
    console.print(table)
    return root.latest_path() if info["latest"] else None


def _show_counts(info: dict) -> None:
    """The verifier pass-rate and rejection-reason tables of a dataset description."""
    if info["verdicts"]:
        verdicts = Table(
            "verifier",
            "passed",
            "total",
            "rate",
            title="verifier pass rates (kept rows)",
            title_justify="left",
        )
        for name, counts in info["verdicts"].items():
            rate = "-" if counts["pass_rate"] is None else f"{100 * counts['pass_rate']:.2f} %"
            verdicts.add_row(escape(name), str(counts["passed"]), str(counts["total"]), rate)
        console.print(verdicts)
    if info["rejected"]:
        reasons = Table("reason", "rows", title="rejection reasons", title_justify="left")
        for reason, count in info["rejected"].items():
            reasons.add_row(escape(str(reason)), str(count))
        console.print(reasons)


def inspect_command(
    out: Path = typer.Argument(..., help="Dataset directory written by `synth run` or `synth generate`."),
    rows: int = typer.Option(3, "--rows", min=0, help="Number of sample rows to show."),
    width: int = typer.Option(60, "--width", min=8, help="Clip long string values to this many characters."),
    as_json: bool = typer.Option(False, "--json", help="Print the description as JSON on stdout."),
    plots: Path | None = typer.Option(None, "--plots", help=PLOTS_HELP),
) -> None:
    """Show the schema, counts, verifier pass rates, rejection reasons and a few sample rows.

    On a multi-stage OUT: each stage, its inputs, status and rows.
    """
    from synth.core.versions import VersionedRoot, is_versioned_root
    from synth.pipelines.pipeline_inspection import is_pipeline_dir

    if is_versioned_root(out) and not (out / "manifest.json").exists():
        out = show_versions(VersionedRoot(out), as_json=as_json)
        if out is None:
            return
    if is_pipeline_dir(out):
        show_pipeline(out, plots=plots, as_json=as_json)
        return
    from synth.pipelines.inspection import describe_dataset

    info = describe_dataset(out, sample_rows=rows, width=width)
    if plots is not None:
        info["plots"] = [str(p) for p in _write_plots(out, plots)]
    if as_json:
        console.print_json(json.dumps(info, default=str))
        return
    console.print(
        f"[bold]{escape(info['out'])}[/]  domain [cyan]{escape(info['domain'])}[/]  status {info['status']}  "
        f"shards {info['shards']['complete']}/{info['shards']['total']}  config {info['config_hash']}"
    )
    console.print(f"rows kept: [bold]{info['rows']:,}[/]   rows rejected: [bold]{info['rejected_rows']:,}[/]")
    schema = Table("column", "type", title="schema", title_justify="left")
    for field in info["schema"]:
        schema.add_row(escape(field["name"]), escape(field["type"]))
    console.print(schema)
    _show_counts(info)
    _show_curation(info.get("curation") or {})
    for path in info.get("plots", []):
        console.print(f"wrote {path}")
    for index, row in enumerate(info["sample"]):
        sample = Table("column", "value", title=f"sample row {index}", title_justify="left")
        for key, value in row.items():
            sample.add_row(escape(key), escape(repr(value) if not isinstance(value, str) else value))
        console.print(sample)


def _show_curation(report: dict) -> None:
    """The `synth curate` report: rows dropped per operation, then cluster sizes of the dedup steps."""
    if not report:
        return
    table = Table("step", "kind", "rows in", "dropped", "reason", title="curation", title_justify="left")
    for op in report.get("operations", []):
        counts = (f"{op['rows_in']:,}", f"{op['dropped']:,}")
        table.add_row(escape(str(op["name"])), op["kind"], *counts, escape(op["reason"]))
    console.print(table)
    for op in report.get("operations", []):
        if op.get("clusters"):
            title = f"duplicate clusters: {escape(op['name'])}"
            sizes = Table("cluster size", "clusters", title=title, title_justify="left")
            for size, count in op["clusters"].items():
                sizes.add_row(size, f"{count:,}")
            console.print(sizes)


def register(app: typer.Typer) -> None:
    """Add `inspect` to the root app."""
    app.command("inspect")(cli_errors(inspect_command))
