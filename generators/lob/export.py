"""Write the rollouts of a LOB dataset as original LOBSTER files, and check them with the strict replayer.

Each rollout becomes a folder named after its row id holding `TICKER_DATE_STARTMS_ENDMS_message_L.csv` and the
matching `_orderbook_L.csv` (no header, LF, the book after each message), so LOBSTER tools read it. The strict
replayer knows nothing of the rollout's initial orders: like any LOBSTER file, the book before message 1 comes
from orderbook row 1, and ids it never saw may only take volume the orderbook showed.
"""

from __future__ import annotations

import math
import re
from collections import Counter
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from synth.core.errors import OutputDirError
from synth.validators.lob.engine import replay
from synth.validators.lob.lobster import (
    MESSAGE_COLUMNS,
    LobsterMessage,
    read_messages,
    read_orderbook,
    write_messages,
    write_orderbook,
)

EXPORT_COLUMNS = ("id", "source", "levels", *MESSAGE_COLUMNS, "book")
_SOURCE_NAME = re.compile(r"^(?P<ticker>[^_]+)_(?P<date>\d{4}-\d{2}-\d{2})_")


@dataclass
class ExportReport:
    """What an export wrote and what the strict replay of the written files found."""

    rollouts: int = 0
    messages: int = 0
    violations: Counter[str] = field(default_factory=Counter)
    levels_compared: int = 0
    level_mismatches: int = 0
    folders: list[str] = field(default_factory=list)

    def to_dict(self) -> dict[str, Any]:
        """JSON-ready summary (folder names are left out)."""
        return {
            "rollouts": self.rollouts,
            "messages": self.messages,
            "violations": sum(self.violations.values()),
            "violations_by_code": dict(sorted(self.violations.items())),
            "levels_compared": self.levels_compared,
            "level_mismatches": self.level_mismatches,
        }


def lobster_stem(source: str, messages: list[LobsterMessage]) -> str:
    """`TICKER_DATE_STARTMS_ENDMS` for a rollout cut from `source` (a LOBSTER file name)."""
    match = _SOURCE_NAME.match(source)
    ticker, date = (match["ticker"], match["date"]) if match else ("SYNTH", "1970-01-01")
    start = math.floor(messages[0].time * 1000) if messages else 0
    end = math.ceil(messages[-1].time * 1000) if messages else 0
    return f"{ticker}_{date}_{start}_{end}"


def export_dataset(dataset: Path, out: Path, *, limit: int | None = None, check: bool = True) -> ExportReport:
    """Write up to `limit` rollouts of `dataset` under `out` (which must be empty or new); replay them if `check`."""
    from synth.core.dataset import read_rows

    frame = read_rows(dataset, domain="lob", columns=EXPORT_COLUMNS, needs="LOBSTER export")
    if out.exists() and any(out.iterdir()):
        msg = f"{out}: not empty; choose a new directory for the LOBSTER files"
        raise OutputDirError(msg)
    report = ExportReport()
    rows = frame.head(limit) if limit is not None else frame
    for row in rows.iter_rows(named=True):
        messages = [LobsterMessage(*fields) for fields in zip(*(row[c] for c in MESSAGE_COLUMNS), strict=True)]
        books = [tuple(book) for book in row["book"]]
        folder = out / row["id"]
        folder.mkdir(parents=True)
        stem = folder / lobster_stem(row["source"], messages)
        message_file = Path(f"{stem}_message_{row['levels']}.csv")
        orderbook_file = Path(f"{stem}_orderbook_{row['levels']}.csv")
        write_messages(messages, path=message_file)
        write_orderbook(books, path=orderbook_file)
        report.rollouts += 1
        report.messages += len(messages)
        report.folders.append(row["id"])
        if check:
            replayed = replay(read_messages(message_file), orderbook=read_orderbook(orderbook_file), mode="strict")
            report.violations.update(replayed.violations)
            report.levels_compared += replayed.levels_compared
            report.level_mismatches += replayed.level_mismatches
    return report
