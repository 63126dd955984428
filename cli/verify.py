"""`synth verify OUT`: re-run the verifiers on a dataset and report mismatches."""

from __future__ import annotations

import json
from pathlib import Path

import typer

from synth.cli._common import cli_errors, console


def verify_command(
    out: Path = typer.Argument(..., help="Dataset directory written by `synth run` or `synth generate`."),
    examples: int = typer.Option(5, "--examples", min=0, help="How many mismatching rows to show."),
    as_json: bool = typer.Option(False, "--json", help="Print the report as JSON on stdout."),
) -> None:
    """Check shard checksums and recompute every verdict; exit 1 if anything disagrees."""
    from synth.pipelines.reverify import reverify_dataset

    report = reverify_dataset(out, max_examples=examples)
    if as_json:
        console.print_json(json.dumps(report, default=str))
    else:
        for problem in report["integrity_errors"]:
            console.print(f"[red]integrity[/] {problem}")
        for name, counts in report["verifiers"].items():
            style = "green" if counts["mismatched"] == 0 else "red"
            console.print(
                f"[{style}]{name}[/]: {counts['checked']:,} rows checked, {counts['mismatched']:,} mismatched"
            )
        for example in report["examples"]:
            console.print(
                f"  {example['verifier']} {example['id']}: stored {example['stored']} fresh {example['fresh']}"
            )
        console.print("[bold green]ok[/]" if report["ok"] else "[bold red]mismatches found[/]")
    if not report["ok"]:
        raise typer.Exit(1)


def register(app: typer.Typer) -> None:
    """Add `verify` to the root app."""
    app.command("verify")(cli_errors(verify_command))
