"""ReLOBGen and its LOBS5-style rejection baseline: the same field model, sampled two ways.

- `ReLOBGenSampler` is replayable by construction: the event head is masked to types the book can take, the
  referenced order is drawn by the pointer from the eligible resting orders, and the remaining fields are drawn
  under masks that admit only consistent values (a new order's price strictly behind the opposite best, a
  partial cancel below the remainder, an execution at the head of the best queue).
- `RejectionSampler` draws every field free-form, the reference as LOBS5 does (its price level, original size
  and age, matched to a resting order after the fact, falling back to pre-window volume at that price), lets
  the strict replayer judge the message, and redraws the whole message on a refusal, counting why.
"""

from __future__ import annotations

from bisect import bisect_right
from collections import Counter
from collections.abc import Sequence
from dataclasses import dataclass, field
from itertools import accumulate
from typing import NamedTuple

import numpy as np

from synth.generators.lob.fields import FieldModel, context_index, event_index, spread_bucket
from synth.generators.lob.model import LobModel
from synth.generators.lob.state import MarketState, imbalance
from synth.validators.lob.book import BUY, SELL, LimitOrderBook
from synth.validators.lob.lobster import LobsterMessage

EVENTS = [(event, side) for event in (1, 2, 3, 4) for side in (BUY, SELL)]
"""(type, side) in `event_index` order."""
ANCHOR_TICKS = 10
"""With its own side empty, a new order is priced from this many ticks behind the opposite best."""


def _draw(probabilities: Sequence[float], u: float) -> int:
    """The index drawn with uniform `u` from unnormalised `probabilities` (plain Python: they are few)."""
    cumulative = list(accumulate(probabilities))
    return min(bisect_right(cumulative, u * cumulative[-1]), len(cumulative) - 1)


def _limit_price(state: MarketState, fields: FieldModel, *, side: int, offset_u: float, masked: bool) -> int:
    """A new order's price from the offset field; `masked` admits only prices behind the opposite best."""
    book, tick = state.book, fields.tick
    same, opposite = book.best_price(side), book.best_price(-side)
    if same is None:
        reference = opposite if opposite is not None else round((state.last_mid or 1_000 * tick) / tick) * tick
        same = reference - side * ANCHOR_TICKS * tick
    spread = state.spread_ticks(tick=tick)
    bucket = spread_bucket(spread)
    bound = None
    if masked and opposite is not None:
        bound = (opposite - same) * side // tick - 1
    offset = fields.limit_offset[bucket].sample(offset_u, at_most=bound)
    price = same + side * (offset if offset is not None else 0) * tick
    return max(price, tick)


def _has_splittable(book: LimitOrderBook, side: int, top: list[int]) -> bool:
    return any(order.size >= 2 for price in top for order in book.levels[side][price].queue.values())


@dataclass
class ReLOBGenSampler:
    """Draws messages that the strict replayer accepts by construction."""

    model: LobModel
    attempts: int = 0
    rejections: Counter[str] = field(default_factory=Counter)
    draws: int = 0
    """Model positions sampled (event head, field heads, pointer); a forced field costs none."""
    corrections: Counter[str] = field(default_factory=Counter)
    """Always empty: nothing is repaired after the fact."""

    def step(self, state: MarketState, rng: np.random.Generator) -> LobsterMessage | None:
        """Apply and return the next message (a refusal would be a construction bug, counted and raised)."""
        fields, pointer = self.model.fields, self.model.pointer
        book, tick, levels = state.book, fields.tick, pointer.levels
        self.attempts += 1
        u = rng.random(6)
        context = context_index(state.spread_ticks(tick=tick), imbalance(book))
        probabilities = fields.event_probabilities(context).tolist()
        for side in (BUY, SELL):
            top = state.top_prices(side, levels)
            if not top:
                for event in (2, 3, 4):
                    probabilities[event_index(event, side)] = 0.0
            elif not _has_splittable(book, side, top):
                probabilities[event_index(2, side)] = 0.0
        event, side = EVENTS[_draw(probabilities, float(u[0]))]
        time = round(state.time + fields.delay[event].sample(float(u[1])), 9)
        self.draws += 2  # event head, delay
        if event == 1:
            price = _limit_price(state, fields, side=side, offset_u=float(u[2]), masked=True)
            size = fields.size[1].sample(float(u[3])) or 1
            self.draws += 2
            message = LobsterMessage(time, 1, state.take_id(), size, price, side)
        else:
            message = self._reference_message(state, event=event, side=side, time=time, u=u)
        code = state.apply(message)
        if code is not None:
            self.rejections[code] += 1
            msg = f"ReLOBGen drew a message the replayer refused ({code}): {message}"
            raise AssertionError(msg)
        return message

    def _reference_message(
        self, state: MarketState, *, event: int, side: int, time: float, u: np.ndarray
    ) -> LobsterMessage:
        fields, pointer, book = self.model.fields, self.model.pointer, state.book
        if event == 4:
            best = book.best_price(side)
            assert best is not None
            order = next(iter(book.levels[side][best].queue.values()))
        else:
            order_id = pointer.draw_from_book(
                event,
                book,
                side,
                time=time,
                submitted=state.submitted,
                initial=state.unseen,
                u=float(u[2]),
                min_size=2 if event == 2 else 1,
                tick=fields.tick,
                spread_ticks=state.spread_ticks(tick=fields.tick),
                imbalance=imbalance(book),
            )
            assert order_id is not None, "the event mask admits a cancel only with an eligible order"
            order = book.orders[order_id]
            self.draws += 1  # the pointer
        remaining = order.size
        if event == 3:
            size = remaining
        elif event == 2:
            size = fields.size[2].sample(float(u[3]), at_most=remaining - 1) or 1
            self.draws += 1
        elif remaining == 1 or u[4] < fields.full[4]:
            size = remaining
            self.draws += remaining > 1  # the full-fill head
        else:
            size = fields.size[4].sample(float(u[3]), at_most=remaining - 1) or 1
            self.draws += 2
        return LobsterMessage(time, event, order.order_id, size, order.price, side)


@dataclass
class RejectionSampler:
    """Draws free-form messages, matches their reference after the fact, and redraws what the replayer refuses."""

    model: LobModel
    max_attempts: int = 1000
    attempts: int = 0
    rejections: Counter[str] = field(default_factory=Counter)
    draws: int = 0
    """Model positions sampled over all attempts, refused ones included."""
    corrections: Counter[str] = field(default_factory=Counter)
    """Repairs by kind (only the correction baseline repairs)."""

    def step(self, state: MarketState, rng: np.random.Generator) -> LobsterMessage | None:
        """Apply and return the next accepted message; None after `max_attempts` refusals in a row."""
        for _ in range(self.max_attempts):
            self.attempts += 1
            message = self._candidate(state, rng.random(8))
            if message is None:
                continue
            code = state.apply(message)
            if code is None:
                if message.type == 1:
                    state.take_id()
                return message
            self.rejections[code] += 1
        return None

    def _candidate(self, state: MarketState, u: np.ndarray) -> LobsterMessage | None:
        """The message to hand to the replayer, or None (counted under `rejections`) when there is none."""
        message = self._propose(state, u)
        if message is None:
            self.rejections["no_reference"] += 1
        return message

    def _propose(self, state: MarketState, u: np.ndarray) -> LobsterMessage | None:
        raw = self._propose_fields(state, u)
        if raw is None:
            return None
        if raw.event == 1:
            return LobsterMessage(raw.time, 1, state.next_id, raw.size, raw.price, raw.side)
        order_id = match_reference(
            state, side=raw.side, price=raw.price, original_size=raw.reference_size, submitted=raw.submitted
        )
        if order_id is None:
            return None
        return LobsterMessage(raw.time, raw.event, order_id, raw.size, raw.price, raw.side)

    def _propose_fields(self, state: MarketState, u: np.ndarray) -> FreeFormMessage | None:
        """Every field drawn free-form from the field model (None: a reference on an empty side)."""
        fields, book, tick = self.model.fields, state.book, self.model.fields.tick
        probabilities = fields.event_probabilities(context_index(state.spread_ticks(tick=tick), imbalance(book)))
        event, side = EVENTS[_draw(probabilities, float(u[0]))]
        time = round(state.time + fields.delay[event].sample(float(u[1])), 9)
        self.draws += 2  # event head, delay
        if event == 1:
            price = _limit_price(state, fields, side=side, offset_u=float(u[2]), masked=False)
            size = fields.size[1].sample(float(u[3])) or 1
            self.draws += 2
            return FreeFormMessage(time, 1, side, price, size, size, time)
        same = book.best_price(side)
        if same is None:
            return None
        depth = fields.reference_depth[event].sample(float(u[2])) or 0
        price = same - side * depth * tick
        reference_size = fields.size[1].sample(float(u[3])) or 1
        age = fields.reference_age.sample(float(u[4]))
        full = u[5] < fields.full[event]
        size = reference_size if full else fields.size[event].sample(float(u[6])) or 1
        self.draws += 4 if full else 5  # reference price, size and age, the full-size head, the size
        return FreeFormMessage(time, event, side, price, size, reference_size, time - age)


class FreeFormMessage(NamedTuple):
    """A message as the free-form field model draws it: a reference is described (its price, original size and
    submission time), not named."""

    time: float
    event: int
    side: int
    price: int
    size: int
    reference_size: int
    submitted: float


def match_reference(state: MarketState, *, side: int, price: int, original_size: int, submitted: float) -> int | None:
    """LOBS5's matching: a resting order at the price with that original size (closest submission time first),
    else the oldest pre-window order at the price; None when neither exists."""
    level = state.book.levels[side].get(price)
    if level is None:
        return None
    best: tuple[float, int] | None = None
    fallback = None
    for order_id in level.queue:
        if state.original_size.get(order_id) == original_size:
            gap = abs(state.submitted.get(order_id, submitted) - submitted)
            if best is None or gap < best[0]:
                best = (gap, order_id)
        elif fallback is None and order_id in state.unseen:
            fallback = order_id
    return best[1] if best is not None else fallback
