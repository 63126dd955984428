"""`synth lob replay|export`: check LOBSTER files with the strict replayer, and write datasets as LOBSTER files.

synth lob replay AMZN_..._message_1.csv --mode lenient      # orderbook file found by name
synth lob replay AMZN_..._message_1.csv --resync            # strict, each quirk reported once, at its source
synth lob export out/lob --out lobster/ --limit 10          # one folder per rollout, replayed strictly
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Literal

import typer
from rich.table import Table

from synth.cli._common import cli_errors, console
from synth.core.errors import InputError

app = typer.Typer(help="LOBSTER files: strict replay and export of LOB datasets.", no_args_is_help=True)

ModeOption = Literal["strict", "lenient"]
EngineOption = Literal["auto", "python", "numba"]


@app.command("replay")
@cli_errors
def replay_command(
    messages: Path = typer.Argument(..., help="LOBSTER message file (with or without header, LF or CRLF)."),
    orderbook: Path | None = typer.Option(
        None, "--orderbook", help="Its orderbook file (default: named after the message file, if it exists)."
    ),
    no_orderbook: bool = typer.Option(False, "--no-orderbook", help="Replay the messages alone."),
    mode: ModeOption = typer.Option("strict", "--mode", help="strict: every rule; lenient: see the docs."),
    resync: bool = typer.Option(
        False,
        "--resync/--no-resync",
        help="after a row that differs from the orderbook file, realign the visible levels to it, so each quirk is "
        "reported once",
    ),
    engine: EngineOption = typer.Option(
        "auto", "--engine", help="auto: the compiled numba engine for strict replays when numba is installed."
    ),
    as_json: bool = typer.Option(False, "--json", help="Print the report as JSON."),
) -> None:
    """Replay a message file, refusing each invalid message with a reason code; compare with the orderbook file.

    Exits 1 when a message is refused or a book row differs.
    """
    from synth.generators.lob import read_messages, read_orderbook, replay
    from synth.pipelines.lob import orderbook_for

    rows = read_messages(messages)
    if orderbook is None and not no_orderbook and orderbook_for(messages).is_file():
        orderbook = orderbook_for(messages)
    books = read_orderbook(orderbook) if orderbook is not None and not no_orderbook else None
    if books is not None and len(books) != len(rows):
        msg = f"{orderbook}: {len(books)} rows for the {len(rows)} messages of {messages}; they must match"
        raise InputError(msg)
    if resync and books is None:
        msg = f"--resync realigns the book to the orderbook file, and {messages} is replayed without one"
        raise InputError(msg)
    if engine == "auto":
        from synth.validators.lob.fast_replay import NUMBA_AVAILABLE

        engine = "numba" if mode == "strict" and NUMBA_AVAILABLE else "python"
    report = replay(rows, orderbook=books, mode=mode, resync=resync, engine=engine)
    first = next((index for index, code in enumerate(report.codes) if code is not None), None)
    summary = {
        "messages": report.messages,
        "mode": mode,
        "engine": engine,
        "resync": resync,
        "orderbook": str(orderbook) if books is not None else None,
        "applied": report.applied,
        "violations": report.violation_count,
        "violations_by_code": dict(sorted(report.violations.items())),
        "first_violation_row": first + 1 if first is not None else None,
        "levels_compared": report.levels_compared,
        "level_mismatches": report.level_mismatches,
        "first_mismatch_row": report.first_mismatch_row,
        "quirks": dict(sorted(report.quirks.items())),
        "messages_per_second": round(report.messages_per_second),
    }
    if as_json:
        console.print_json(json.dumps(summary))
    else:
        table = Table(title=f"{mode} replay of {messages.name}", show_header=False)
        for key, value in summary.items():
            table.add_row(key, json.dumps(value) if isinstance(value, dict) else str(value))
        console.print(table)
    if report.violation_count or report.level_mismatches:
        raise typer.Exit(1)


@app.command("export")
@cli_errors
def export_command(
    dataset: Path = typer.Argument(..., help="LOB dataset directory written by `synth run configs/lob.yaml`."),
    out: Path = typer.Option(..., "--out", "-o", help="New (or empty) directory for the LOBSTER files."),
    limit: int | None = typer.Option(None, "--limit", min=1, help="Export only the first N rollouts."),
    check: bool = typer.Option(True, "--check/--no-check", help="Replay every written file strictly."),
) -> None:
    """Write each rollout as original LOBSTER message + orderbook files; with --check, replay them strictly.

    Exits 1 when the check finds a refused message or a book mismatch.
    """
    from synth.generators.lob.export import export_dataset

    report = export_dataset(dataset, out, limit=limit, check=check)
    console.print_json(json.dumps(report.to_dict()))
    console.print(f"wrote {report.rollouts} rollouts to {out}")
    if check and (report.violations or report.level_mismatches):
        raise typer.Exit(1)


def register(root: typer.Typer) -> None:
    """Add the `lob` group to the root app."""
    root.add_typer(app, name="lob")
