"""`synth inspect OUT`: describe a dataset directory."""

from __future__ import annotations

import json
from pathlib import Path

import typer
from rich.table import Table

from synth.cli._common import cli_errors, console


def inspect_command(
    out: Path = typer.Argument(..., help="Dataset directory written by `synth run` or `synth generate`."),
    rows: int = typer.Option(3, "--rows", min=0, help="Number of sample rows to show."),
    width: int = typer.Option(60, "--width", min=8, help="Clip long string values to this many characters."),
    as_json: bool = typer.Option(False, "--json", help="Print the description as JSON on stdout."),
) -> None:
    """Show the schema, counts, verifier pass rates, rejection reasons and a few sample rows."""
    from synth.pipelines.inspection import describe_dataset

    info = describe_dataset(out, sample_rows=rows, width=width)
    if as_json:
        console.print_json(json.dumps(info, default=str))
        return
    console.print(
        f"[bold]{info['out']}[/]  domain [cyan]{info['domain']}[/]  status {info['status']}  "
        f"shards {info['shards']['complete']}/{info['shards']['total']}  config {info['config_hash']}"
    )
    console.print(f"rows kept: [bold]{info['rows']:,}[/]   rows rejected: [bold]{info['rejected_rows']:,}[/]")
    schema = Table("column", "type", title="schema", title_justify="left")
    for field in info["schema"]:
        schema.add_row(field["name"], field["type"])
    console.print(schema)
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
            verdicts.add_row(name, str(counts["passed"]), str(counts["total"]), rate)
        console.print(verdicts)
    if info["rejected"]:
        reasons = Table("reason", "rows", title="rejection reasons", title_justify="left")
        for reason, count in info["rejected"].items():
            reasons.add_row(reason, str(count))
        console.print(reasons)
    for index, row in enumerate(info["sample"]):
        sample = Table("column", "value", title=f"sample row {index}", title_justify="left")
        for key, value in row.items():
            sample.add_row(key, repr(value) if not isinstance(value, str) else value)
        console.print(sample)


def register(app: typer.Typer) -> None:
    """Add `inspect` to the root app."""
    app.command("inspect")(cli_errors(inspect_command))
