"""`synth verify OUT`: re-check a dataset's shards and re-run its verifiers."""

from __future__ import annotations

import json
from pathlib import Path

import typer
from rich.markup import escape

from synth.cli._common import cli_errors, console

INCOMPLETE_EXIT = 4


def verify_command(
    out: Path = typer.Argument(..., help="Dataset directory written by `synth run` or `synth generate`."),
    examples: int = typer.Option(5, "--examples", min=0, help="How many mismatching rows to show."),
    as_json: bool = typer.Option(False, "--json", help="Print the report as JSON on stdout."),
) -> None:
    """Check shard checksums (kept and rejected), unlisted files and every verdict.

    Exit 0: ok. Exit 1: a checksum, file or verdict disagrees. Exit 4: nothing disagrees, but the dataset is
    incomplete (rerun the command that made it to finish it).
    """
    from synth.pipelines.reverify import reverify_dataset

    report = reverify_dataset(out, max_examples=examples)
    broken = bool(report["integrity_errors"]) or any(c["mismatched"] for c in report["verifiers"].values())
    done, total = report["shards"]["complete"], report["shards"]["total"]
    if as_json:
        console.print_json(json.dumps(report, default=str))
    else:
        for problem in report["integrity_errors"]:
            console.print(f"[red]integrity[/] {escape(problem)}", soft_wrap=True)
        for name, counts in report["verifiers"].items():
            style = "green" if counts["mismatched"] == 0 else "red"
            console.print(
                f"[{style}]{escape(name)}[/]: {counts['checked']:,} rows checked, {counts['mismatched']:,} mismatched"
            )
        for example in report["examples"]:
            console.print(
                escape(
                    f"  {example['shard']} row {example['row']} (id {example['id']}), verifier {example['verifier']}: "
                    f"stored {example['stored']} fresh {example['fresh']}"
                ),
                soft_wrap=True,
            )
        if broken:
            console.print("[bold red]mismatches found[/]")
        elif not report["complete"]:
            console.print(
                f"[bold yellow]incomplete[/]: {done} of {total} shards; rerun the command that made "
                f"{escape(report['out'])} to finish it, then verify again",
                soft_wrap=True,
            )
        else:
            console.print("[bold green]ok[/]")
    if broken:
        raise typer.Exit(1)
    if not report["complete"]:
        raise typer.Exit(INCOMPLETE_EXIT)


def register(app: typer.Typer) -> None:
    """Add `verify` to the root app."""
    app.command("verify")(cli_errors(verify_command))
