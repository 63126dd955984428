"""Fit the LOB model on the training part of a real day: field counts, pointer MLE and Santa Fe rates.

One lenient replay of `messages[:train]` (`walk_real_day`) shows the book before every message. Only
messages of types 1–4 are counted (the generated types); a cancel's pointer choice is recorded when its order is
among the eligible ones (top `levels` levels of its side), an unknown id choosing the pre-window volume at its
price.
"""

from __future__ import annotations

import math
from collections import defaultdict
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any, Literal

import numpy as np

from synth.generators.lob.fields import (
    CONTEXTS,
    SPREAD_BUCKETS,
    Categorical,
    FieldModel,
    QuantileTable,
    context_index,
    event_index,
    spread_bucket,
)
from synth.generators.lob.history import GENERATED_TYPES, OrderHistory, walk_real_day
from synth.generators.lob.model import LobModel
from synth.generators.lob.pointer import (
    FEATURES,
    Choice,
    Pointer,
    PointerModel,
    candidates,
    context_vector,
    evaluate_pointer,
    fit_conditional_logit,
)
from synth.generators.lob.state import imbalance, spread_ticks
from synth.generators.lob.zero_intelligence import ZIParameters
from synth.validators.lob.book import BUY, SELL, LimitOrderBook
from synth.validators.lob.lobster import LobsterMessage, OrderbookRow

PointerKind = Literal["logit", "attention"]
MAX_SIZE = 9999
"""Sizes are clipped here, as LOBS5's size token does."""
OFFSET_RANGE = (-50, 50)
DEPTH_RANGE = (0, 50)


@dataclass
class _Counts:
    """What the training pass accumulates."""

    events: np.ndarray = field(default_factory=lambda: np.zeros((CONTEXTS, 8)))
    delays: dict[int, list[float]] = field(default_factory=lambda: defaultdict(list))
    offsets: dict[int, list[int]] = field(default_factory=lambda: defaultdict(list))
    sizes: dict[int, list[int]] = field(default_factory=lambda: defaultdict(list))
    full: dict[int, list[bool]] = field(default_factory=lambda: defaultdict(list))
    depths: dict[int, list[int]] = field(default_factory=lambda: defaultdict(list))
    ages: list[float] = field(default_factory=list)
    choices: dict[int, list[Choice]] = field(default_factory=lambda: defaultdict(list))
    held_out: list[Choice] = field(default_factory=list)
    market_sizes: list[int] = field(default_factory=list)
    limit_distances: list[int] = field(default_factory=list)
    resting: list[int] = field(default_factory=list)
    previous: LobsterMessage | None = None
    counted: int = 0


class _Trainer:
    def __init__(self, *, levels: int, tick: int, train: int) -> None:
        self.levels, self.tick, self.train = levels, tick, train
        self.counts = _Counts()

    def observe(self, index: int, message: LobsterMessage, book: LimitOrderBook, history: OrderHistory) -> None:
        if message.type not in GENERATED_TYPES or message.direction not in (BUY, SELL):
            return
        if index >= self.train:
            if message.type in (2, 3):
                choice = self._choice(message, book, history)
                if choice is not None:
                    self.counts.held_out.append(choice)
            return
        counts, tick, side = self.counts, self.tick, message.direction
        spread = spread_ticks(book, tick=tick)
        counts.events[context_index(spread, imbalance(book)), event_index(message.type, side)] += 1
        previous = counts.previous
        if previous is not None:
            counts.delays[message.type].append(max(message.time - previous.time, 0.0))
        counts.counted += 1
        if counts.counted % 10 == 0:
            counts.resting.append(self._resting(book))
        same = book.best_price(side)
        if message.type == 1:
            self._observe_limit(message, book, spread=spread, same=same)
        else:
            self._observe_reference(message, book, history, same=same)
        counts.previous = message

    def _observe_limit(
        self, message: LobsterMessage, book: LimitOrderBook, *, spread: int | None, same: int | None
    ) -> None:
        counts, side = self.counts, message.direction
        counts.sizes[1].append(message.size)
        if same is not None:
            counts.offsets[spread_bucket(spread)].append((message.price - same) * side // self.tick)
        opposite = book.best_price(-side)
        if opposite is not None:
            counts.limit_distances.append((opposite - message.price) * side // self.tick)

    def _observe_reference(
        self, message: LobsterMessage, book: LimitOrderBook, history: OrderHistory, *, same: int | None
    ) -> None:
        counts, side, event = self.counts, message.direction, message.type
        counts.sizes[event].append(message.size)
        if same is not None:
            counts.depths[event].append(abs(message.price - same) // self.tick)
        if event == 4:
            previous = counts.previous
            joined = previous is not None and previous.type == 4 and previous.time == message.time
            if joined and previous.direction == side and counts.market_sizes:
                counts.market_sizes[-1] += message.size
            else:
                counts.market_sizes.append(message.size)
        order = book.orders.get(message.order_id)
        if order is not None:
            counts.full[event].append(message.size == order.size)
            counts.ages.append(max(message.time - history.submitted.get(order.order_id, message.time), 0.0))
        if event != 4:
            choice = self._choice(message, book, history)
            if choice is not None:
                counts.choices[event].append(choice)

    def _choice(self, message: LobsterMessage, book: LimitOrderBook, history: OrderHistory) -> Choice | None:
        """The pointer choice a real cancel made: its own order, or for an unknown id the pre-window volume at its
        price; None when that is not among the eligible orders."""
        side, event = message.direction, message.type
        chosen_id = message.order_id
        if chosen_id not in book.orders:
            level = book.levels[side].get(message.price)
            anonymous = [order_id for order_id in level.queue if order_id < 0] if level else []
            if not anonymous:
                return None
            chosen_id = anonymous[0]
        choice = candidates(
            book,
            side,
            time=message.time,
            submitted=history.submitted,
            levels=self.levels,
            min_size=2 if event == 2 else 1,
            tick=self.tick,
        )
        if chosen_id not in choice.ids:
            return None
        context = context_vector(event, spread_ticks(book, tick=self.tick), imbalance(book))
        return Choice(choice.features, choice.ids.index(chosen_id), context)

    def _resting(self, book: LimitOrderBook) -> int:
        total = 0
        for side in (BUY, SELL):
            prices = book.prices[side]
            for price in prices[: self.levels] if side == SELL else prices[-1 : -self.levels - 1 : -1]:
                total += len(book.levels[side][price].queue)
        return total


def fit_lob_model(
    messages: Sequence[LobsterMessage],
    orderbook: Sequence[OrderbookRow],
    *,
    train_fraction: float = 0.6,
    levels: int = 10,
    tick: int = 100,
    source: str = "",
    pointer: PointerKind = "logit",
    seed: int = 0,
) -> LobModel:
    """Fit every part of the model on the first `train_fraction` of the day (see the module docstring).

    The pointer is the conditional logit, or with `pointer="attention"` the small key/query network (trained with
    torch); either way the report holds both pointers' fit on the held-out rest of the day.
    """
    if not 0.0 < train_fraction <= 1.0:
        msg = f"`train_fraction` must lie in (0, 1], got {train_fraction}"
        raise ValueError(msg)
    train = max(int(len(messages) * train_fraction), 2)
    trainer = _Trainer(levels=levels, tick=tick, train=train)
    report = walk_real_day(messages, orderbook, observe=trainer.observe)
    counts = trainer.counts
    fields = _field_model(counts, tick=tick)
    weights: dict[int, tuple[float, ...]] = {}
    pointer_stats: dict[str, Any] = {}
    pooled = counts.choices[2] + counts.choices[3]
    for event in (2, 3):
        own = counts.choices[event]
        fitted, stats = fit_conditional_logit([(c.features, c.chosen) for c in (own if len(own) >= 50 else pooled)])
        weights[event] = tuple(float(w) for w in fitted)
        pointer_stats[str(event)] = {**stats, "pooled": len(own) < 50}
    logit = PointerModel(weights=weights, levels=levels)
    chosen: Pointer = logit
    held_out = {"logit": evaluate_pointer(logit, counts.held_out)}
    if pointer == "attention":
        from synth.generators.lob.neural_pointer import fit_attention_pointer

        chosen = fit_attention_pointer(pooled, levels=levels, seed=seed)
        held_out["attention"] = evaluate_pointer(chosen, counts.held_out)
    seconds = max(messages[train - 1].time - messages[0].time, 1e-9)
    zero_intelligence = _zero_intelligence(counts, seconds=seconds, tick=tick, levels=levels, fields=fields)
    training = {
        "source": source,
        "messages": len(messages),
        "train_messages": train,
        "train_fraction": train_fraction,
        "train_seconds": seconds,
        "generated_type_messages": counts.counted,
        "levels": levels,
        "tick": tick,
        "replay_violations": report.violation_count,
        "replay_level_mismatches": report.level_mismatches,
        "pointer": {"kind": pointer, "features": list(FEATURES), "fit": pointer_stats, "held_out": held_out},
    }
    return LobModel(fields, chosen, zero_intelligence, training)


def _field_model(counts: _Counts, *, tick: int) -> FieldModel:
    low, high = OFFSET_RANGE
    pooled_offsets = [offset for offsets in counts.offsets.values() for offset in offsets]
    limit_offset = tuple(
        Categorical.fit(counts.offsets.get(bucket) or pooled_offsets or [0], low=low, high=high)
        for bucket in range(SPREAD_BUCKETS)
    )
    sizes = {event: Categorical.fit(counts.sizes.get(event) or [1], low=1, high=MAX_SIZE) for event in (1, 2, 3, 4)}
    full = {event: float(np.mean(counts.full[event])) if counts.full.get(event) else 0.0 for event in (2, 3, 4)}
    depth_low, depth_high = DEPTH_RANGE
    depths = {
        event: Categorical.fit(counts.depths.get(event) or [0], low=depth_low, high=depth_high) for event in (2, 3, 4)
    }
    return FieldModel(
        tick=tick,
        event_counts=tuple(tuple(float(c) for c in row) for row in counts.events),
        delay={event: QuantileTable.fit(counts.delays.get(event, [])) for event in (1, 2, 3, 4)},
        limit_offset=limit_offset,
        size=sizes,
        full=full,
        reference_depth=depths,
        reference_age=QuantileTable.fit(counts.ages),
    )


def _zero_intelligence(counts: _Counts, *, seconds: float, tick: int, levels: int, fields: FieldModel) -> ZIParameters:
    limits = len(counts.sizes.get(1, []))
    cancels = len(counts.sizes.get(2, [])) + len(counts.sizes.get(3, []))
    mean_resting = float(np.mean(counts.resting)) if counts.resting else 1.0
    distances = [d for d in counts.limit_distances if d >= 1]
    window = math.ceil(np.quantile(distances, 0.95)) if distances else 10
    return ZIParameters(
        limit_rate=limits / seconds,
        market_rate=len(counts.market_sizes) / seconds,
        cancel_rate=cancels / seconds / max(mean_resting, 1.0),
        window_ticks=max(window, 1),
        limit_size=fields.size[1],
        market_size=Categorical.fit(counts.market_sizes or [1], low=1, high=MAX_SIZE),
        tick=tick,
        levels=levels,
    )
