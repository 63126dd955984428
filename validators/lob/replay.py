"""Replay each generated rollout strictly from its own initial book, message by message, checking every book row."""

from __future__ import annotations

from collections import Counter
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any, ClassVar

import pyarrow as pa

from synth.core.records import Verdict
from synth.core.steps import Verifier
from synth.validators.lob.book import BookError, ReasonCode
from synth.validators.lob.engine import Replayer
from synth.validators.lob.lobster import INITIAL_COLUMNS, MESSAGE_COLUMNS, LobsterMessage

SHOWN_REASONS = 5


@dataclass(frozen=True)
class RolloutReplay:
    """The strict replay of one rollout: a code per message (None = accepted) and book rows that differ, or the
    reason (`initial_book: …`, `book_row_count: …`) the row could not be replayed at all."""

    codes: tuple[ReasonCode | None, ...]
    mismatched_rows: tuple[int, ...]
    initial_error: str | None = None

    @property
    def violations(self) -> int:
        """Messages the replayer refused."""
        return sum(code is not None for code in self.codes)

    @property
    def replayable(self) -> bool:
        """Every message accepted and every stored book row equal to the replayed book."""
        return self.initial_error is None and not self.violations and not self.mismatched_rows

    def reasons(self) -> list[str]:
        """One `code: detail` line per problem: the initial book, then the first refused messages (the replayer's
        reason code) and mismatched rows."""
        if self.initial_error is not None:
            return [self.initial_error]
        lines = [f"{code}: message {index + 1}" for index, code in enumerate(self.codes) if code is not None]
        lines += [
            f"book_mismatch: book row {index + 1} differs from the replayed book" for index in self.mismatched_rows
        ]
        if len(lines) > SHOWN_REASONS:
            lines = [*lines[:SHOWN_REASONS], f"truncated: {len(lines) - SHOWN_REASONS} more problems"]
        return lines


def replay_rollout(row: Mapping[str, Any]) -> RolloutReplay:
    """Strictly replay one dataset row (the `LOB_SCHEMA` columns) from its own initial orders."""
    replayer = Replayer(mode="strict")
    book = replayer.book
    try:
        for order_id, side, price, size, _, _ in zip(*(row[name] for name in INITIAL_COLUMNS), strict=True):
            book.submit(order_id, side=side, price=price, size=size)
    except (BookError, ValueError) as error:
        return RolloutReplay((), (), initial_error=f"initial_book: {error}")
    replayer.last_time = row["window_time"]
    messages: Sequence[tuple[Any, ...]] = list(zip(*(row[name] for name in MESSAGE_COLUMNS), strict=True))
    stored = row["book"]
    if len(stored) != len(messages):
        detail = f"{len(stored)} book rows for {len(messages)} messages"
        return RolloutReplay((), (), initial_error=f"book_row_count: {detail}")
    levels = row["levels"]
    codes: list[ReasonCode | None] = []
    mismatched: list[int] = []
    for index, fields in enumerate(messages):
        codes.append(replayer.step(LobsterMessage(*fields)))
        if tuple(stored[index]) != book.snapshot(levels):
            mismatched.append(index)
    return RolloutReplay(tuple(codes), tuple(mismatched))


@dataclass(frozen=True, kw_only=True)
class LobReplayVerifier(Verifier):
    """Pass a rollout only if the strict replayer accepts every message and reproduces every stored book row."""

    reads: ClassVar[tuple[str, ...]] = (*INITIAL_COLUMNS, *MESSAGE_COLUMNS, "book", "levels", "window_time")
    scores: ClassVar[tuple[str, ...]] = ("violations", "book_mismatches", "accepted_fraction")

    def verify(self, table: pa.Table) -> list[Verdict]:
        verdicts = []
        for row in table.select(list(self.reads)).to_pylist():
            result = replay_rollout(row)
            total = len(result.codes)
            verdicts.append(
                Verdict(
                    result.replayable,
                    tuple(result.reasons()),
                    {
                        "violations": float(result.violations),
                        "book_mismatches": float(len(result.mismatched_rows)),
                        "accepted_fraction": (total - result.violations) / total if total else 0.0,
                    },
                )
            )
        return verdicts


def violation_counts(results: Sequence[RolloutReplay]) -> Counter[str]:
    """Refusals by reason code over many rollouts."""
    return Counter(code for result in results for code in result.codes if code is not None)
