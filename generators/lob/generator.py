"""The LOB generator: rollouts continuing held-out windows of a real LOBSTER day, one dataset row per rollout.

A row is self-contained so the replay verifier needs nothing else: the resting orders at the window start (ids,
sides, prices, sizes in queue order, submission times), the generated messages as parallel list columns, the
book (top `levels`, LOBSTER layout) after each message, and the sampler's cost
(attempts, refusals by reason, model positions sampled, repairs by kind).
Windows start in the part of the day the model was not fit on (after `train_fraction`).
"""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from dataclasses import dataclass
from functools import cached_property, lru_cache
from pathlib import Path
from typing import Any, ClassVar

import pyarrow as pa

from synth.core.errors import InputError
from synth.core.steps import GeneratedBatch, Generator, ShardContext
from synth.generators.lob.history import RealWindow, real_windows
from synth.generators.lob.model import LobModel, load_model
from synth.generators.lob.rollout import Method, Rollout, make_sampler, run_rollout
from synth.validators.lob.lobster import (
    INITIAL_COLUMNS,
    MESSAGE_COLUMNS,
    LobsterMessage,
    OrderbookRow,
    read_messages,
    read_orderbook,
)

LOB_SCHEMA = pa.schema(
    [
        ("method", pa.string()),
        ("source", pa.string()),
        ("window_start", pa.int64()),
        ("window_time", pa.float64()),
        ("replicate", pa.int32()),
        ("levels", pa.int32()),
        ("initial_order_id", pa.list_(pa.int64())),
        ("initial_side", pa.list_(pa.int8())),
        ("initial_price", pa.list_(pa.int64())),
        ("initial_size", pa.list_(pa.int64())),
        ("initial_time", pa.list_(pa.float64())),
        ("initial_unseen", pa.list_(pa.bool_())),
        ("messages", pa.int32()),
        ("time", pa.list_(pa.float64())),
        ("type", pa.list_(pa.int8())),
        ("order_id", pa.list_(pa.int64())),
        ("size", pa.list_(pa.int64())),
        ("price", pa.list_(pa.int64())),
        ("direction", pa.list_(pa.int8())),
        ("book", pa.list_(pa.list_(pa.int64()))),
        ("attempts", pa.int64()),
        ("rejections", pa.int64()),
        ("rejection_reasons", pa.list_(pa.struct([("reason", pa.string()), ("count", pa.int64())]))),
        ("draws", pa.int64()),
        ("corrections", pa.int64()),
        ("correction_kinds", pa.list_(pa.struct([("kind", pa.string()), ("count", pa.int64())]))),
    ]
)


def window_starts(total: int, *, train_fraction: float, windows: int, horizon: int) -> list[int]:
    """`windows` evenly spaced start indices in the held-out part of a day of `total` messages."""
    first = max(int(total * train_fraction), 1)
    last = total - int(horizon * 1.5) - 1
    if windows < 1 or last < first:
        msg = (
            f"no room for {windows} windows of {horizon} messages after the first {first} of {total} messages; "
            "lower `horizon` or `train_fraction`"
        )
        raise InputError(msg)
    if windows == 1:
        return [first]
    step = (last - first) / (windows - 1)
    return [first + round(index * step) for index in range(windows)]


@lru_cache(maxsize=4)
def read_day(messages: Path, orderbook: Path) -> tuple[tuple[LobsterMessage, ...], tuple[OrderbookRow, ...]]:
    """Read (and cache per process) a LOBSTER message file and its orderbook file; they must match row for row."""
    rows = tuple(read_messages(messages))
    books = tuple(read_orderbook(orderbook))
    if len(rows) != len(books):
        msg = f"{orderbook}: {len(books)} rows for the {len(rows)} messages of {messages}; they must match row for row"
        raise InputError(msg)
    return rows, books


@lru_cache(maxsize=8)
def cached_windows(messages: Path, orderbook: Path, starts: tuple[int, ...], horizon: int) -> tuple[RealWindow, ...]:
    """`real_windows` over a day read by `read_day`, cached per process."""
    day, books = read_day(messages, orderbook)
    return tuple(real_windows(day, books, starts=starts, horizon=horizon))


def rollout_row(
    window: RealWindow, rollout: Rollout, *, method: str, source: str, replicate: int, levels: int
) -> dict[str, Any]:
    """The dataset row of one rollout (see `LOB_SCHEMA`)."""
    columns = list(zip(*rollout.messages, strict=True)) if rollout.messages else [()] * len(MESSAGE_COLUMNS)
    initial = [(o.order_id, o.side, o.price, o.size, o.time, o.unseen) for o in window.orders]
    initial_columns = list(zip(*initial, strict=True)) if initial else [()] * len(INITIAL_COLUMNS)
    row: dict[str, Any] = {
        "method": method,
        "source": source,
        "window_start": window.start,
        "window_time": window.time,
        "replicate": replicate,
        "levels": levels,
        **{name: list(values) for name, values in zip(INITIAL_COLUMNS, initial_columns, strict=True)},
        "messages": len(rollout.messages),
        **{name: list(values) for name, values in zip(MESSAGE_COLUMNS, columns, strict=True)},
        "book": [list(book) for book in rollout.books],
        "attempts": rollout.attempts,
        "rejections": sum(rollout.rejections.values()),
        "rejection_reasons": [{"reason": r, "count": c} for r, c in sorted(rollout.rejections.items())],
        "draws": rollout.draws,
        "corrections": sum(rollout.corrections.values()),
        "correction_kinds": [{"kind": k, "count": c} for k, c in sorted(rollout.corrections.items())],
    }
    return row


@dataclass(frozen=True, kw_only=True)
class LobRolloutGenerator(Generator):
    """Rollouts of `horizon` messages by `method`, `replicates` per window, from `windows` held-out windows."""

    schema: ClassVar[pa.Schema] = LOB_SCHEMA
    method: Method = "relobgen"
    messages_path: Path
    orderbook_path: Path
    model_path: Path | None = None
    train_fraction: float = 0.6
    windows: int = 100
    replicates: int = 1
    horizon: int = 500
    levels: int = 10
    max_attempts: int = 1000

    @cached_property
    def model(self) -> LobModel:
        """The fitted model (the shipped default when `model_path` is None)."""
        return load_model(self.model_path)

    @cached_property
    def starts(self) -> tuple[int, ...]:
        """Window start indices (checks the day is long enough)."""
        day, _ = read_day(self.messages_path, self.orderbook_path)
        return tuple(
            window_starts(len(day), train_fraction=self.train_fraction, windows=self.windows, horizon=self.horizon)
        )

    def describe_input(self) -> dict[str, Any]:
        """Source files, the model and where the windows start."""
        return {
            "messages": str(self.messages_path),
            "orderbook": str(self.orderbook_path),
            "model": str(self.model_path) if self.model_path else "shipped default",
            "model_training": dict(self.model.training),
            "window_starts": list(self.starts),
        }

    def generate(self, ctx: ShardContext) -> Iterator[GeneratedBatch]:
        """One batch per window of this shard's (window, replicate) items."""
        items: Sequence[tuple[int, int]] = ctx.partition(
            [(start, replicate) for start in self.starts for replicate in range(self.replicates)]
        )
        if not items:
            return
        wanted = tuple(sorted({start for start, _ in items}))
        windows = {w.start: w for w in cached_windows(self.messages_path, self.orderbook_path, wanted, self.horizon)}
        source = self.messages_path.name
        batch = GeneratedBatch()
        for start, replicate in items:
            window = windows[start]
            sampler = make_sampler(self.method, self.model, max_attempts=self.max_attempts)
            rng = ctx.rng("rollout", start, replicate, self.method)
            rollout = run_rollout(
                sampler, window.orders, time=window.time, horizon=self.horizon, levels=self.levels, rng=rng
            )
            parents = [f"{source}:{start}"]
            if len(rollout.messages) < self.horizon:
                batch.reject(
                    "gave_up",
                    detail=f"{self.method} gave up after {len(rollout.messages)} of {self.horizon} messages",
                    values={"window_start": start, "replicate": replicate, "attempts": rollout.attempts},
                    parents=parents,
                )
                continue
            batch.add(
                rollout_row(
                    window, rollout, method=self.method, source=source, replicate=replicate, levels=self.levels
                ),
                parents=parents,
            )
        yield batch
