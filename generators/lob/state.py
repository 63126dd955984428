"""The market state a generator continues: an L3 book checked by the strict replayer, plus per-order caches.

A rollout starts from `InitialOrder`s (the resting orders of a real book, in queue order, each with a positive
id) and every generated message goes through `Replayer.step`, so a state can never hold what the strict
replayer would refuse. The caches (submission time, original size, whether the order predates the rollout) are
the static parts of each order's representation; they are written once, when the order enters the book.
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator, Sequence
from dataclasses import dataclass

from synth.validators.lob.book import BUY, SELL, LimitOrderBook, ReasonCode
from synth.validators.lob.engine import Replayer
from synth.validators.lob.lobster import LobsterMessage


@dataclass(frozen=True, slots=True)
class InitialOrder:
    """A resting order at the start of a rollout; `time` is when it was submitted, or first seen when the stream
    never showed its submission (`unseen`: volume resting before the file, or moved in from beyond its levels)."""

    order_id: int
    side: int
    price: int
    size: int
    time: float
    unseen: bool = False


class MarketState:
    """A strict replayer's book with the caches generators read; `apply` is the only way to change it.

    Example:
        >>> state = MarketState([InitialOrder(1, 1, 100, 5, 0.0), InitialOrder(2, -1, 103, 7, 0.0)], time=1.0)
        >>> state.spread_ticks(tick=1)
        3
        >>> state.apply(LobsterMessage(1.5, 1, state.take_id(), 10, 101, 1)) is None
        True
        >>> state.book.best_bid()
        101
    """

    def __init__(self, orders: Iterable[InitialOrder], *, time: float, next_id: int | None = None) -> None:
        self.replayer = Replayer(mode="strict")
        self.book: LimitOrderBook = self.replayer.book
        self.submitted: dict[int, float] = {}
        self.original_size: dict[int, int] = {}
        self.unseen: set[int] = set()
        highest = 0
        for order in orders:
            self.book.submit(order.order_id, side=order.side, price=order.price, size=order.size)
            self.submitted[order.order_id] = order.time
            self.original_size[order.order_id] = order.size
            if order.unseen:
                self.unseen.add(order.order_id)
            highest = max(highest, order.order_id)
        self.time = time
        self.replayer.last_time = time
        self.next_id = max(highest + 1, next_id or 0)
        self.last_mid = self._mid_or(None)

    def take_id(self) -> int:
        """A fresh order id (ids only grow, so they are unique over the rollout)."""
        order_id = self.next_id
        self.next_id += 1
        return order_id

    def apply(self, message: LobsterMessage) -> ReasonCode | None:
        """Check and apply one message with the strict replayer; returns its reason code if refused."""
        code = self.replayer.step(message)
        if code is None:
            self.time = message.time
            if message.type == 1:
                self.submitted[message.order_id] = message.time
                self.original_size[message.order_id] = message.size
            self.last_mid = self._mid_or(self.last_mid)
        return code

    def spread_ticks(self, *, tick: int) -> int | None:
        """Best ask minus best bid in ticks; None when a side is empty."""
        return spread_ticks(self.book, tick=tick)

    def top_prices(self, side: int, levels: int) -> list[int]:
        """The `levels` best occupied prices of `side`, best first."""
        prices = self.book.prices[side]
        return prices[:levels] if side == SELL else prices[-1 : -levels - 1 : -1]

    def _mid_or(self, fallback: float | None) -> float | None:
        bid, ask = self.book.best_bid(), self.book.best_ask()
        return fallback if bid is None or ask is None else (bid + ask) / 2


def spread_ticks(book: LimitOrderBook, *, tick: int) -> int | None:
    """Best ask minus best bid in ticks; None when a side is empty."""
    bid, ask = book.best_bid(), book.best_ask()
    return None if bid is None or ask is None else (ask - bid) // tick


def imbalance(book: LimitOrderBook) -> float:
    """L1 volume imbalance (bid − ask) / (bid + ask); 0 when both sides are empty."""
    bid, ask = book.best_bid(), book.best_ask()
    bid_volume = book.levels[BUY][bid].volume if bid is not None else 0
    ask_volume = book.levels[SELL][ask].volume if ask is not None else 0
    total = bid_volume + ask_volume
    return (bid_volume - ask_volume) / total if total else 0.0


def book_orders(book: LimitOrderBook) -> Iterator[tuple[int, int, int, int]]:
    """Every resting order as (id, side, price, size): asks then bids, best level first, FIFO within a level."""
    for side in (SELL, BUY):
        prices: Sequence[int] = book.prices[side] if side == SELL else book.prices[side][::-1]
        for price in prices:
            for order in book.levels[side][price].queue.values():
                yield order.order_id, side, price, order.size
