"""The Santa Fe zero-intelligence baseline (Smith, Farmer, Gillemot & Krishnamurthy 2003), with order ids.

Order flow is three Poisson streams, simulated by Gillespie: limit orders at rate λ with prices uniform over the
`window` ticks behind the opposite best, market orders at rate μ (buy and sell equally likely), and cancels at
rate δ per resting order in the top levels. Deviations from the textbook model, so it is replayable at order
level and comparable with the learned generators: sizes are drawn from the real size distributions instead of a
constant σ, a market order walks the opposite queue head first and is written as one type-4 execution per
resting order it hits (all at its arrival time), and a cancel removes a whole order (type 3), chosen uniformly.
"""

from __future__ import annotations

import math
from collections import Counter
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from synth.generators.lob.fields import Categorical
from synth.generators.lob.state import MarketState
from synth.validators.lob.book import BUY, SELL
from synth.validators.lob.lobster import LobsterMessage


@dataclass(frozen=True)
class ZIParameters:
    """Rates per second, the price window in ticks, size distributions, and the levels cancels act on."""

    limit_rate: float
    market_rate: float
    cancel_rate: float
    window_ticks: int
    limit_size: Categorical
    market_size: Categorical
    tick: int = 100
    levels: int = 10

    def to_dict(self) -> dict[str, Any]:
        """JSON-ready form."""
        return {
            "limit_rate": self.limit_rate,
            "market_rate": self.market_rate,
            "cancel_rate": self.cancel_rate,
            "window_ticks": self.window_ticks,
            "limit_size": self.limit_size.to_dict(),
            "market_size": self.market_size.to_dict(),
            "tick": self.tick,
            "levels": self.levels,
        }

    @classmethod
    def from_dict(cls, data: Mapping[str, Any]) -> ZIParameters:
        """Inverse of `to_dict`."""
        return cls(
            limit_rate=float(data["limit_rate"]),
            market_rate=float(data["market_rate"]),
            cancel_rate=float(data["cancel_rate"]),
            window_ticks=int(data["window_ticks"]),
            limit_size=Categorical.from_dict(data["limit_size"]),
            market_size=Categorical.from_dict(data["market_size"]),
            tick=int(data["tick"]),
            levels=int(data["levels"]),
        )


@dataclass
class ZeroIntelligenceSampler:
    """Draws the next message of a Santa Fe market; every message it returns was accepted by the replayer."""

    parameters: ZIParameters
    attempts: int = 0
    rejections: Counter[str] = field(default_factory=Counter)
    draws: int = 0
    """Random variates drawn (a market order's walk along the queue draws none)."""
    corrections: Counter[str] = field(default_factory=Counter)
    """Always empty: every message is valid as drawn."""
    _market: tuple[int, int] | None = None  # (resting side, shares left) of a market order being walked

    def step(self, state: MarketState, rng: np.random.Generator) -> LobsterMessage | None:
        """Apply and return the next message, or None when the market has no event left to draw."""
        for _ in range(1000):
            self.attempts += 1
            message = self._walk(state) if self._market else self._draw(state, rng)
            if message is None:
                continue
            code = state.apply(message)
            if code is None:
                return message
            self.rejections[code] += 1
        return None

    def _draw(self, state: MarketState, rng: np.random.Generator) -> LobsterMessage | None:
        p = self.parameters
        resting = [
            order_id
            for side in (BUY, SELL)
            for price in state.top_prices(side, p.levels)
            for order_id in state.book.levels[side][price].queue
        ]
        total = p.limit_rate + p.market_rate + p.cancel_rate * len(resting)
        time = round(state.time + float(rng.exponential(1.0 / total)), 9)
        pick = rng.random() * total
        side = BUY if rng.random() < 0.5 else SELL
        self.draws += 4  # the time, the event, the side, and the price, size or order below
        if pick < p.limit_rate:
            return self._limit(state, rng, side=side, time=time)
        if pick < p.limit_rate + p.market_rate:
            size = p.market_size.sample(float(rng.random()))
            self._market = (-side, int(size or 1))
            state.time = time
            return self._walk(state)
        order = state.book.orders[resting[min(int(rng.random() * len(resting)), len(resting) - 1)]]
        return LobsterMessage(time, 3, order.order_id, order.size, order.price, order.side)

    def _limit(self, state: MarketState, rng: np.random.Generator, *, side: int, time: float) -> LobsterMessage:
        p = self.parameters
        opposite = state.book.best_price(-side)
        if opposite is None:
            anchor = state.book.best_price(side) or _tick_floor(state.last_mid or p.tick * 1000, p.tick)
            opposite = anchor + side * p.tick
        distance = 1 + int(rng.random() * p.window_ticks)
        price = max(opposite - side * distance * p.tick, p.tick)
        size = p.limit_size.sample(float(rng.random())) or 1
        self.draws += 1
        return LobsterMessage(time, 1, state.take_id(), int(size), int(price), side)

    def _walk(self, state: MarketState) -> LobsterMessage | None:
        assert self._market is not None
        resting_side, left = self._market
        best = state.book.best_price(resting_side)
        if best is None:
            self._market = None
            return None
        order = next(iter(state.book.levels[resting_side][best].queue.values()))
        size = min(left, order.size)
        self._market = (resting_side, left - size) if left > size else None
        return LobsterMessage(state.time, 4, order.order_id, size, best, resting_side)


def _tick_floor(price: float, tick: int) -> int:
    return math.floor(price / tick) * tick
