"""One lenient pass over a real LOBSTER day, exposing the book and each order's history before every message.

Both the trainer (which counts fields and collects pointer choices on the training part of the day) and the
window extractor (which captures the resting orders at the start of each held-out window) read the real
market through `walk_real_day`. Anonymous volume the lenient replayer adds (orders the stream never showed) is
"first seen" when it appears; every other order's time is its submission.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass

from synth.generators.lob.state import InitialOrder, book_orders
from synth.validators.lob.book import LimitOrderBook
from synth.validators.lob.engine import ReplayReport, replay
from synth.validators.lob.lobster import LobsterMessage, OrderbookRow

GENERATED_TYPES = frozenset((1, 2, 3, 4))
"""The event types generators produce (hidden executions, cross trades and halts leave the visible book alone)."""


@dataclass
class OrderHistory:
    """When each order id was submitted or first seen."""

    submitted: dict[int, float]
    _anonymous_floor: int = 0

    def observe(self, book: LimitOrderBook, time: float) -> None:
        """Record anonymous orders created since the last call as first seen at `time`."""
        floor = book._next_anonymous_id
        for order_id in range(self._anonymous_floor - 1, floor, -1):
            self.submitted[order_id] = time
        self._anonymous_floor = floor


Observer = Callable[[int, LobsterMessage, LimitOrderBook, OrderHistory], None]


def walk_real_day(
    messages: Sequence[LobsterMessage],
    orderbook: Sequence[OrderbookRow],
    *,
    observe: Observer,
    stop: int | None = None,
) -> ReplayReport:
    """Replay `messages[:stop]` leniently against `orderbook`, calling `observe` before each message."""
    stop = len(messages) if stop is None else stop
    history = OrderHistory(submitted={}, _anonymous_floor=0)

    def before(index: int, book: LimitOrderBook) -> None:
        message = messages[index]
        history.observe(book, message.time)
        observe(index, message, book, history)

    def after(index: int, book: LimitOrderBook) -> None:
        message = messages[index]
        if message.type == 1 and message.order_id in book.orders:
            history.submitted.setdefault(message.order_id, message.time)

    return replay(
        messages[:stop], orderbook=orderbook[:stop], mode="lenient", before_message=before, after_message=after
    )


@dataclass(frozen=True)
class RealWindow:
    """A held-out window: the resting orders before message `start` (at `time`, that of message `start − 1`), and
    the real continuation from there."""

    start: int
    time: float
    orders: tuple[InitialOrder, ...]
    initial_row: OrderbookRow
    messages: tuple[LobsterMessage, ...]
    books: tuple[OrderbookRow, ...]


def real_windows(
    messages: Sequence[LobsterMessage],
    orderbook: Sequence[OrderbookRow],
    *,
    starts: Sequence[int],
    horizon: int,
) -> list[RealWindow]:
    """Capture the book before each of `starts` and the next `horizon` real messages of types 1–4.

    Anonymous orders get fresh positive ids above every id of the file, so a rollout can reference them; they
    are marked `unseen`.
    """
    wanted = sorted(set(starts))
    if wanted and (wanted[0] < 1 or wanted[-1] >= len(messages)):
        msg = f"window starts must lie in [1, {len(messages) - 1}], got {wanted[0]}..{wanted[-1]}"
        raise ValueError(msg)
    fresh = max((m.order_id for m in messages), default=0) + 1
    captured: dict[int, tuple[float, tuple[InitialOrder, ...]]] = {}
    pending = set(wanted)

    def capture(index: int, message: LobsterMessage, book: LimitOrderBook, history: OrderHistory) -> None:
        nonlocal fresh
        if index not in pending:
            return
        orders = []
        for order_id, side, price, size in book_orders(book):
            unseen = order_id < 0
            submitted = history.submitted.get(order_id, message.time)
            if unseen:
                order_id, fresh = fresh, fresh + 1
            orders.append(InitialOrder(order_id, side, price, size, submitted, unseen))
        captured[index] = (messages[index - 1].time, tuple(orders))

    if wanted:
        walk_real_day(messages, orderbook, observe=capture, stop=wanted[-1] + 1)
    windows = []
    for start in starts:
        time, orders = captured[start]
        continuation: list[tuple[LobsterMessage, OrderbookRow]] = []
        for index in range(start, len(messages)):
            if len(continuation) == horizon:
                break
            if messages[index].type in GENERATED_TYPES:
                continuation.append((messages[index], orderbook[index]))
        windows.append(
            RealWindow(
                start=start,
                time=time,
                orders=orders,
                initial_row=orderbook[start - 1],
                messages=tuple(message for message, _ in continuation),
                books=tuple(row for _, row in continuation),
            )
        )
    return windows
