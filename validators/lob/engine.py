"""A strict LOBSTER replayer: checks every message, applies only valid ones, compares against an orderbook file.

Modes:
- `strict`: every rule of the LOBSTER format is enforced; an id never submitted in the stream is `unknown_id`,
  unless the orderbook file showed resting volume at its price (an order from before the window, or one that
  moved into view) that it can take.
- `lenient`: volume the stream never showed (orders resting before the file starts, or moving in from beyond the
  recorded levels) is discovered from the orderbook file: before message k the book is topped up with anonymous
  volume wherever orderbook row k−1 shows more than the book holds. An unknown id may then cancel, delete or execute
  anonymous volume at its price, a delete may carry less than the tracked remainder, and anonymous volume ahead of
  an executed order does not break FIFO. Each such allowance is counted under `quirks`.

In both modes the book starts from the state before message 1 (orderbook row 1 with message 1 undone) as
anonymous volume, when an orderbook is given. A violating message is never applied.
"""

from __future__ import annotations

import time as clock
from collections import Counter
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import Literal

from synth.validators.lob.book import BUY, SELL, BookError, LimitOrderBook, ReasonCode
from synth.validators.lob.lobster import EMPTY_ASK_PRICE, EMPTY_BID_PRICE, LobsterMessage, OrderbookRow

ReplayMode = Literal["strict", "lenient"]
ReplayEngine = Literal["python", "numba"]


@dataclass
class ReplayReport:
    """What a replay found: violations per reason code, book mismatches against the orderbook file, and speed."""

    mode: ReplayMode
    messages: int = 0
    applied: int = 0
    violations: Counter[str] = field(default_factory=Counter)
    codes: list[ReasonCode | None] = field(default_factory=list)
    rows_compared: int = 0
    row_mismatches: int = 0
    levels_compared: int = 0
    level_mismatches: int = 0
    first_mismatch_row: int | None = None
    quirks: Counter[str] = field(default_factory=Counter)
    seconds: float = 0.0

    @property
    def violation_count(self) -> int:
        """Messages refused, over all reason codes."""
        return sum(self.violations.values())

    @property
    def messages_per_second(self) -> float:
        """Replay throughput (messages over wall-clock seconds, including the orderbook comparison)."""
        return self.messages / self.seconds if self.seconds else 0.0


class Replayer:
    """Checks and applies messages one at a time; `step` returns the reason a message was refused, or None.

    Example:
        >>> replayer = Replayer()
        >>> replayer.step(LobsterMessage(1.0, 1, 7, 100, 5000, 1)) is None
        True
        >>> replayer.step(LobsterMessage(0.5, 3, 7, 100, 5000, 1))
        'time_backwards'
    """

    def __init__(self, book: LimitOrderBook | None = None, *, mode: ReplayMode = "strict") -> None:
        if mode not in ("strict", "lenient"):
            msg = f"`mode` must be 'strict' or 'lenient', got {mode!r}"
            raise ValueError(msg)
        self.book = book if book is not None else LimitOrderBook()
        self.mode: ReplayMode = mode
        self.lenient = mode == "lenient"
        self.last_time = float("-inf")
        self.quirks: Counter[str] = Counter()
        self.pre_window: Counter[tuple[int, int]] = Counter()

    def step(self, message: LobsterMessage) -> ReasonCode | None:
        """Check one message and apply it when valid; never raises for any field values."""
        time, event, order_id, size, price, direction = message
        try:
            if not time >= self.last_time:
                return "time_backwards"
            if event == 1:
                self.book.submit(order_id, side=direction, price=price, size=size)
            elif event in (2, 3, 4):
                self._apply_reference(event, order_id, side=direction, price=price, size=size)
            elif event not in (5, 6, 7):
                return "bad_type"
        except BookError as error:
            return error.reason
        except TypeError:
            return "bad_type"
        self.last_time = time
        return None

    def _apply_reference(self, event: int, order_id: int, *, side: int, price: int, size: int) -> None:
        book = self.book
        if order_id not in book.orders and (self.lenient or self.pre_window[side, price] >= size > 0):
            if side not in (BUY, SELL):
                raise BookError("bad_direction", f"direction {side}")
            if self.lenient and book.anonymous_volume(side, price) < size <= book.volume_at(side, price):
                self._take_level_volume(event, None, side=side, price=price, size=size)
                self.quirks["unknown_id_took_tracked_volume"] += 1
                return
            book.consume_anonymous(side, price, size, at_best=event == 4)
            if self.lenient:
                self.quirks["unknown_id_took_anonymous"] += 1
            else:
                self.pre_window[side, price] -= size
                self.quirks["pre_window_order"] += 1
            return
        try:
            self._apply_known(event, order_id, side=side, price=price, size=size)
        except BookError as error:
            if not (self.lenient and error.reason in ("not_fifo_head", "size_exceeds")):
                raise
            self._take_level_volume(event, order_id, side=side, price=price, size=size)
            self.quirks[f"reattributed_{error.reason}"] += 1

    def _apply_known(self, event: int, order_id: int, *, side: int, price: int, size: int) -> None:
        book = self.book
        if event == 2:
            book.cancel(order_id, side=side, price=price, size=size)
        elif event == 3:
            order = book.orders.get(order_id)
            short = self.lenient and order is not None and 0 < size < order.size
            book.delete(order_id, side=side, price=price, size=size, exact_size=not self.lenient)
            if short:
                self.quirks["delete_below_remainder"] += 1
        else:
            book.execute(order_id, side=side, price=price, size=size)

    def _take_level_volume(self, event: int, order_id: int | None, *, side: int, price: int, size: int) -> None:
        """Lenient: the level's volume is right but its attribution to orders is not (orders left or shrank out of
        view, or were renumbered). Take `size` from the level: the named order first, then anonymous volume, then
        the newest known orders."""
        book = self.book
        if size <= 0:
            raise BookError("nonpositive_size", f"size {size}")
        volume = book.volume_at(side, price)
        if size > volume:
            raise BookError("size_exceeds", f"{size} from a level of {volume} at {price}")
        if event == 4 and price != book.best_price(side):
            raise BookError("not_at_best", f"execution at {price} while the best is {book.best_price(side)}")
        order = book.orders.get(order_id) if order_id is not None else None
        taken = 0
        if order is not None:
            taken = order.size if event == 3 else min(size, order.size)
            book.remove_volume(order, taken)
        if size > taken:
            book.trim_level(side, price, book.volume_at(side, price) - (size - taken))

    def seed_pre_window(self, row: OrderbookRow) -> None:
        """Start from the book `row` shows before the first message: its volume belongs to orders submitted
        before the window, whose ids the stream has never shown. Even strict mode lets an unknown id cancel or
        execute that volume (and only that volume) at its price."""
        self.top_up(row)
        self.quirks["initial_anonymous_volume"] += self.quirks.pop("anonymous_volume_added", 0)
        for index in range(0, len(row), 4):
            ask_price, ask_size, bid_price, bid_size = row[index : index + 4]
            if ask_price != EMPTY_ASK_PRICE and ask_size > 0:
                self.pre_window[SELL, ask_price] += ask_size
            if bid_price != EMPTY_BID_PRICE and bid_size > 0:
                self.pre_window[BUY, bid_price] += bid_size

    def top_up(self, row: OrderbookRow) -> None:
        """Add anonymous volume wherever `row` shows more at a level than the book holds."""
        book = self.book
        for index in range(0, len(row), 4):
            ask_price, ask_size, bid_price, bid_size = row[index : index + 4]
            for side, price, size, empty in (
                (SELL, ask_price, ask_size, EMPTY_ASK_PRICE),
                (BUY, bid_price, bid_size, EMPTY_BID_PRICE),
            ):
                if price == empty or size <= 0:
                    continue
                missing = size - book.volume_at(side, price)
                if missing > 0:
                    book.add_anonymous(side, price, missing)
                    self.quirks["anonymous_volume_added"] += missing

    def sync_beyond_view(self, previous: OrderbookRow, current: OrderbookRow) -> None:
        """Make the book match `current` at prices `previous` could not show (beyond its deepest full level).

        A level-L file never reports events outside its top L levels, so a level that moves into view can hold
        volume the stream never showed, and a level the stream still holds may have been cancelled out of view.
        """
        book = self.book
        levels = len(current) // 4
        for side, offset, empty in ((SELL, 0, EMPTY_ASK_PRICE), (BUY, 2, EMPTY_BID_PRICE)):
            boundary = previous[4 * (levels - 1) + offset]
            if boundary == empty:
                continue
            beyond = (lambda price, edge=boundary: price > edge) if side == SELL else (lambda p, e=boundary: p < e)
            shown = {
                current[index]: current[index + 1]
                for index in range(offset, len(current), 4)
                if current[index] != empty and beyond(current[index])
            }
            for price, size in shown.items():
                missing = size - book.volume_at(side, price)
                if missing > 0:
                    book.add_anonymous(side, price, missing, front=False)
                    self.pre_window[side, price] += missing
                    self.quirks["scrolled_in_volume_added"] += missing
                elif missing < 0:
                    self.quirks["scrolled_in_volume_removed"] += book.trim_level(side, price, size)
            for _ in range(len(book.prices[side])):
                stale = [price for price in self._top_prices(side, levels) if beyond(price) and price not in shown]
                if not stale:
                    break
                for price in stale:
                    self.quirks["scrolled_in_volume_removed"] += book.trim_level(side, price, 0)

    def resync_to(self, row: OrderbookRow) -> None:
        """Realign the book's visible levels to `row` (a row the book differs from), so a refused or misread message
        is reported once rather than making later valid messages fail against a book that drifted from the file.

        Per side, asks then bids: every level inside the row's view (at or better than its deepest shown price; the
        whole side when the deepest level is padding) that the row does not show is emptied, then each shown level
        is topped up with anonymous volume at the front of its queue (which unknown ids may take, as volume from
        before the window) or trimmed (anonymous volume first, then the newest orders) to the row's size.
        """
        book = self.book
        quirks = self.quirks
        levels = len(row) // 4
        quirks["resynced_rows"] += 1
        for side, offset, empty in ((SELL, 0, EMPTY_ASK_PRICE), (BUY, 2, EMPTY_BID_PRICE)):
            shown = {row[index]: row[index + 1] for index in range(offset, len(row), 4) if row[index] != empty}
            deepest = row[4 * (levels - 1) + offset]
            for price in list(book.prices[side]):
                inside = deepest == empty or (price <= deepest if side == SELL else price >= deepest)
                if inside and price not in shown:
                    quirks["resync_volume_removed"] += book.trim_level(side, price, 0)
            for price, size in shown.items():
                have = book.volume_at(side, price)
                if size > have:
                    book.add_anonymous(side, price, size - have)
                    self.pre_window[side, price] += size - have
                    quirks["resync_volume_added"] += size - have
                elif size < have:
                    quirks["resync_volume_removed"] += book.trim_level(side, price, size)

    def _top_prices(self, side: int, levels: int) -> list[int]:
        prices = self.book.prices[side]
        return prices[:levels] if side == SELL else prices[-1 : -levels - 1 : -1]


def undo_first_message(row: OrderbookRow, message: LobsterMessage) -> OrderbookRow:
    """Orderbook row 1 with message 1's effect on level volumes undone: the book before the file starts.

    A message that emptied a level gets the level back in its sorted place (the deepest shown level drops out of
    view); a submission that opened a level loses it (the level that would come into view is unknown: padding).
    """
    _, event, _, size, price, direction = message
    delta = -size if event == 1 else size if event in (2, 3, 4) else 0
    if not delta or direction not in (BUY, SELL):
        return tuple(row)
    levels = len(row) // 4
    offset, empty = (0, EMPTY_ASK_PRICE) if direction == SELL else (2, EMPTY_BID_PRICE)
    shown = {row[i]: row[i + 1] for i in range(offset, len(row), 4) if row[i] != empty}
    shown[price] = shown.get(price, 0) + delta
    ordered = sorted((p, v) for p, v in shown.items() if v > 0)
    if direction == BUY:
        ordered.reverse()
    ordered = ordered[:levels] + [(empty, 0)] * (levels - len(ordered))
    values = list(row)
    for level, (level_price, volume) in enumerate(ordered):
        values[4 * level + offset : 4 * level + offset + 2] = (level_price, volume)
    return tuple(values)


def _count_level_mismatches(expected: OrderbookRow, actual: tuple[int, ...]) -> int:
    return sum(expected[index : index + 2] != actual[index : index + 2] for index in range(0, len(expected), 2))


def replay(
    messages: Sequence[LobsterMessage],
    *,
    orderbook: Sequence[OrderbookRow] | None = None,
    mode: ReplayMode = "strict",
    after_message: Callable[[int, LimitOrderBook], None] | None = None,
    before_message: Callable[[int, LimitOrderBook], None] | None = None,
    engine: ReplayEngine = "python",
    resync: bool = False,
) -> ReplayReport:
    """Replay `messages`, checking each one and, when `orderbook` is given, each resulting book row.

    Args:
        orderbook: LOBSTER orderbook rows, row k being the book after message k; it seeds the initial book and is
            compared level by level (at its own level count) after every message.
        after_message: called with the 0-based message index and the book after each message, applied or not.
        before_message: called with the index and the book just before each message is checked (after any
            lenient top-up), e.g. to read the state a model conditions on.
        engine: `"numba"` runs strict replays without hooks compiled (`fast_replay.replay_strict_fast`): the same
            report, several times faster.
        resync: after a row the book differs from (counted as a mismatch as usual), realign the visible levels to
            it (`Replayer.resync_to`) before the next message, so each quirk of the data is reported once, at its
            source, instead of again by every later message the drifted book would refuse. Needs `orderbook`;
            quirks `resynced_rows`, `resync_volume_added` and `resync_volume_removed` count what it changed, and
            `after_message` sees the realigned book.

    Raises:
        ValueError: `orderbook` and `messages` differ in length, `resync` without `orderbook`, or `engine="numba"`
            with `mode="lenient"` or hooks.
        ImportError: `engine="numba"` without numba installed.

    Example:
        >>> from synth.generators.lob import SAMPLE_DIR, read_messages, read_orderbook
        >>> stem = SAMPLE_DIR / "AAPL_2012-06-21_34200000_57600000"
        >>> messages, rows = read_messages(f"{stem}_message_10.csv"), read_orderbook(f"{stem}_orderbook_10.csv")
        >>> report = replay(messages, orderbook=rows, mode="lenient")
        >>> report.level_mismatches
        0
    """
    if resync and orderbook is None:
        msg = "`resync` realigns the book to orderbook rows: it needs `orderbook`"
        raise ValueError(msg)
    if engine != "python":
        return _replay_compiled(
            messages,
            orderbook=orderbook,
            mode=mode,
            engine=engine,
            hooked=(before_message, after_message),
            resync=resync,
        )
    if orderbook is not None and len(orderbook) != len(messages):
        msg = f"`orderbook` has {len(orderbook)} rows for {len(messages)} messages; they must match row for row"
        raise ValueError(msg)
    replayer = Replayer(mode=mode)
    report = ReplayReport(mode=mode, messages=len(messages))
    codes = report.codes
    step = replayer.step
    start = clock.perf_counter()
    if orderbook is None:
        for index, message in enumerate(messages):
            if before_message is not None:
                before_message(index, replayer.book)
            codes.append(step(message))
            if after_message is not None:
                after_message(index, replayer.book)
    else:
        _replay_against(
            replayer, messages, orderbook, report=report, hooks=(before_message, after_message), resync=resync
        )
    report.seconds = clock.perf_counter() - start
    report.violations = Counter(code for code in codes if code is not None)
    report.applied = report.messages - report.violation_count
    report.quirks = replayer.quirks
    return report


def _replay_compiled(
    messages: Sequence[LobsterMessage],
    *,
    orderbook: Sequence[OrderbookRow] | None,
    mode: ReplayMode,
    engine: str,
    hooked: tuple[object, object],
    resync: bool,
) -> ReplayReport:
    if engine != "numba":
        msg = f"`engine` must be 'python' or 'numba', got {engine!r}"
        raise ValueError(msg)
    if mode != "strict":
        msg = f"engine='numba' replays only mode='strict', got mode={mode!r}; use engine='python'"
        raise ValueError(msg)
    if any(hook is not None for hook in hooked):
        msg = "engine='numba' takes no before_message/after_message hooks; use engine='python'"
        raise ValueError(msg)
    from synth.validators.lob.fast_replay import replay_strict_fast  # numba is optional: imported on demand

    return replay_strict_fast(messages, orderbook=orderbook, resync=resync)


def _replay_against(
    replayer: Replayer,
    messages: Sequence[LobsterMessage],
    orderbook: Sequence[OrderbookRow],
    *,
    report: ReplayReport,
    hooks: tuple[Callable[[int, LimitOrderBook], None] | None, Callable[[int, LimitOrderBook], None] | None],
    resync: bool = False,
) -> None:
    before_message, after_message = hooks
    if not messages:
        return
    levels = len(orderbook[0]) // 4
    seed = undo_first_message(orderbook[0], messages[0])
    replayer.seed_pre_window(seed)
    codes = report.codes
    step = replayer.step
    snapshot = replayer.book.snapshot
    top_up = replayer.top_up if replayer.lenient else None
    row_mismatches = level_mismatches = 0
    previous: OrderbookRow = seed  # levels message 1 brings into view are synced like any later ones
    for index, message in enumerate(messages):
        if top_up is not None and index:
            top_up(previous)
        if before_message is not None:
            before_message(index, replayer.book)
        codes.append(step(message))
        expected = orderbook[index]
        replayer.sync_beyond_view(previous, expected)
        actual = snapshot(levels)
        if actual != expected:
            if not row_mismatches:
                report.first_mismatch_row = index + 1
            row_mismatches += 1
            level_mismatches += _count_level_mismatches(expected, actual)
            if resync:
                replayer.resync_to(expected)
        if after_message is not None:
            after_message(index, replayer.book)
        previous = expected
    report.rows_compared = len(messages)
    report.levels_compared = len(messages) * levels * 2
    report.row_mismatches = row_mismatches
    report.level_mismatches = level_mismatches
