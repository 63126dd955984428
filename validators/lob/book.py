"""An L3 limit order book with price-time priority that refuses, rather than absorbs, invalid operations.

Orders are kept by id; each price level holds a FIFO queue (an `OrderedDict`, so a partial cancel keeps the
order's place and a delete anywhere is O(1)) and its total volume. Prices per side are a sorted list, so the best
price is at one end. Every operation checks everything before it mutates, so a refused operation (`BookError`)
leaves the book exactly as it was.

Anonymous orders stand for volume whose orders the message stream never showed (orders resting before the file
starts, or placed outside the recorded levels). They have negative ids that messages can never reference.
"""

from __future__ import annotations

from bisect import bisect_left, insort
from collections import OrderedDict
from typing import Literal

from synth.validators.lob.lobster import EMPTY_ASK_PRICE, EMPTY_BID_PRICE

ReasonCode = Literal[
    "unknown_id",
    "duplicate_id",
    "bad_id",
    "side_mismatch",
    "price_mismatch",
    "size_exceeds",
    "size_mismatch",
    "not_at_best",
    "not_fifo_head",
    "crossing_limit",
    "nonpositive_size",
    "bad_direction",
    "time_backwards",
    "bad_type",
]
"""Why a message was refused; `time_backwards` and `bad_type` are detected by the replayer."""

BUY = 1
SELL = -1


class BookError(Exception):
    """An operation the book refused; `reason` says why and the book is unchanged."""

    def __init__(self, reason: ReasonCode, detail: str = "") -> None:
        super().__init__(f"{reason}: {detail}" if detail else reason)
        self.reason: ReasonCode = reason


class Order:
    """A resting order: id, side (+1 buy, −1 sell), price and remaining size."""

    __slots__ = ("order_id", "price", "side", "size")

    def __init__(self, order_id: int, side: int, price: int, size: int) -> None:
        self.order_id = order_id
        self.side = side
        self.price = price
        self.size = size

    def __repr__(self) -> str:
        return f"Order({self.order_id}, side={self.side}, price={self.price}, size={self.size})"


class PriceLevel:
    """The FIFO queue of orders at one price on one side, with its total volume."""

    __slots__ = ("queue", "volume")

    def __init__(self) -> None:
        self.queue: OrderedDict[int, Order] = OrderedDict()
        self.volume = 0


class LimitOrderBook:
    """An L3 book. Methods named after LOBSTER event types raise `BookError` and leave the book unchanged.

    Example:
        >>> book = LimitOrderBook()
        >>> book.submit(1, side=BUY, price=100, size=5)
        >>> book.execute(1, side=BUY, price=100, size=2)
        >>> book.snapshot(1)
        (9999999999, 0, 100, 3)
    """

    def __init__(self) -> None:
        self.orders: dict[int, Order] = {}
        self.levels: dict[int, dict[int, PriceLevel]] = {BUY: {}, SELL: {}}
        self.prices: dict[int, list[int]] = {BUY: [], SELL: []}
        self._next_anonymous_id = -1

    def best_bid(self) -> int | None:
        """The highest bid price, or None for an empty bid side."""
        prices = self.prices[BUY]
        return prices[-1] if prices else None

    def best_ask(self) -> int | None:
        """The lowest ask price, or None for an empty ask side."""
        prices = self.prices[SELL]
        return prices[0] if prices else None

    def best_price(self, side: int) -> int | None:
        """The best price on `side` (+1 bids, −1 asks)."""
        return self.best_bid() if side == BUY else self.best_ask()

    def volume_at(self, side: int, price: int) -> int:
        """Total resting volume at `price` on `side` (0 for no level)."""
        level = self.levels[side].get(price)
        return level.volume if level else 0

    def submit(self, order_id: int, *, side: int, price: int, size: int) -> None:
        """Type 1: rest a new limit order at the back of its level's queue."""
        if side not in (BUY, SELL):
            raise BookError("bad_direction", f"direction {side}")
        if order_id <= 0:
            raise BookError("bad_id", f"order id {order_id} must be positive")
        if order_id in self.orders:
            raise BookError("duplicate_id", f"order {order_id} is already resting")
        if size <= 0:
            raise BookError("nonpositive_size", f"size {size}")
        opposite = self.best_ask() if side == BUY else self.best_bid()
        if opposite is not None and (price >= opposite if side == BUY else price <= opposite):
            raise BookError("crossing_limit", f"price {price} reaches the opposite best {opposite}")
        self._rest(Order(order_id, side, price, size), front=False)

    def add_anonymous(self, side: int, price: int, size: int, *, front: bool = True) -> int:
        """Rest anonymous volume (unseen orders) at a level, by default ahead of every known order; returns its id."""
        if side not in (BUY, SELL) or size <= 0:
            msg = f"anonymous volume needs side ±1 and a positive size, got side={side}, size={size}"
            raise ValueError(msg)
        order_id = self._next_anonymous_id
        self._next_anonymous_id -= 1
        self._rest(Order(order_id, side, price, size), front=front)
        return order_id

    def cancel(self, order_id: int, *, side: int, price: int, size: int) -> None:
        """Type 2: reduce an order by `size`, keeping its queue position; it must keep at least one share."""
        order = self._checked(order_id, side=side, price=price, size=size)
        if size >= order.size:
            raise BookError("size_exceeds", f"partial cancel of {size} from an order of {order.size}")
        self._reduce(order, size)

    def delete(self, order_id: int, *, side: int, price: int, size: int, exact_size: bool = True) -> None:
        """Type 3: remove an order; `size` must equal its remainder (at most, with `exact_size=False`)."""
        order = self._checked(order_id, side=side, price=price, size=size)
        if size > order.size:
            raise BookError("size_exceeds", f"delete of {size} from an order of {order.size}")
        if exact_size and size != order.size:
            raise BookError("size_mismatch", f"delete of {size} from an order of {order.size}")
        self._reduce(order, order.size)

    def execute(self, order_id: int, *, side: int, price: int, size: int, anonymous_may_lead: bool = False) -> None:
        """Type 4: fill `size` of an order at the best price that must be at the head of its queue.

        Args:
            anonymous_may_lead: let anonymous volume ahead of the order be skipped (its true priority is unknown).
        """
        order = self._checked(order_id, side=side, price=price, size=size)
        if size > order.size:
            raise BookError("size_exceeds", f"execution of {size} from an order of {order.size}")
        best = self.best_price(side)
        if price != best:
            raise BookError("not_at_best", f"execution at {price} while the best is {best}")
        for queued_id in self.levels[side][price].queue:
            if queued_id == order_id:
                break
            if queued_id > 0 or not anonymous_may_lead:
                raise BookError("not_fifo_head", f"order {queued_id} is ahead of order {order_id}")
        self._reduce(order, size)

    def anonymous_volume(self, side: int, price: int) -> int:
        """Anonymous volume resting at one level."""
        level = self.levels[side].get(price)
        if level is None:
            return 0
        return sum(order.size for order_id, order in level.queue.items() if order_id < 0)

    def consume_anonymous(self, side: int, price: int, size: int, *, at_best: bool = False) -> None:
        """Take `size` from the anonymous volume at a level, oldest first (an unknown id's cancel or execution)."""
        if side not in (BUY, SELL):
            raise BookError("bad_direction", f"direction {side}")
        if size <= 0:
            raise BookError("nonpositive_size", f"size {size}")
        available = self.anonymous_volume(side, price)
        if available == 0:
            raise BookError("unknown_id", f"no anonymous volume at {price}")
        if size > available:
            raise BookError("size_exceeds", f"{size} from {available} anonymous shares at {price}")
        if at_best and price != self.best_price(side):
            raise BookError("not_at_best", f"execution at {price} while the best is {self.best_price(side)}")
        anonymous = [order for order_id, order in self.levels[side][price].queue.items() if order_id < 0]
        for order in anonymous:
            taken = min(size, order.size)
            self._reduce(order, taken)
            size -= taken
            if not size:
                break

    def trim_level(self, side: int, price: int, volume: int) -> int:
        """Shrink a level to `volume`, taking anonymous volume first, then the newest orders; returns shares removed."""
        level = self.levels[side].get(price)
        excess = (level.volume if level else 0) - max(volume, 0)
        if level is None or excess <= 0:
            return 0
        queue = list(level.queue.values())
        ordered = [order for order in queue if order.order_id < 0] + [o for o in reversed(queue) if o.order_id > 0]
        removed = 0
        for order in ordered:
            taken = min(excess - removed, order.size)
            self._reduce(order, taken)
            removed += taken
            if removed == excess:
                break
        return removed

    def remove_volume(self, order: Order, size: int) -> None:
        """Take `size` (at most its remainder) from a resting order without any check: for lenient replay only."""
        self._reduce(order, min(size, order.size))

    def snapshot(self, levels: int) -> tuple[int, ...]:
        """The top `levels` levels as a LOBSTER orderbook row, padded with LOBSTER's dummy values."""
        asks = self.prices[SELL][:levels]
        bids = self.prices[BUY][-1 : -levels - 1 : -1] if levels else []
        ask_levels = self.levels[SELL]
        bid_levels = self.levels[BUY]
        row: list[int] = []
        for index in range(levels):
            if index < len(asks):
                row += (asks[index], ask_levels[asks[index]].volume)
            else:
                row += (EMPTY_ASK_PRICE, 0)
            if index < len(bids):
                row += (bids[index], bid_levels[bids[index]].volume)
            else:
                row += (EMPTY_BID_PRICE, 0)
        return tuple(row)

    def invariant_problems(self) -> list[str]:
        """Check the book's internal consistency; returns a description of each problem (empty when sound)."""
        problems: list[str] = []
        bid, ask = self.best_bid(), self.best_ask()
        if bid is not None and ask is not None and bid >= ask:
            problems.append(f"crossed book: bid {bid} >= ask {ask}")
        queued = 0
        for side in (BUY, SELL):
            if self.prices[side] != sorted(self.levels[side]):
                problems.append(f"side {side}: price list out of sync with levels")
            for price, level in self.levels[side].items():
                sizes = [order.size for order in level.queue.values()]
                if not sizes or min(sizes) <= 0:
                    problems.append(f"side {side} price {price}: empty level or nonpositive size")
                if sum(sizes) != level.volume:
                    problems.append(f"side {side} price {price}: level volume {level.volume} != {sum(sizes)}")
                for order_id, order in level.queue.items():
                    if order.price != price or order.side != side or order.order_id != order_id:
                        problems.append(f"order {order_id} filed under the wrong level")
                queued += len(level.queue)
        if queued != len(self.orders):
            problems.append(f"{queued} queued orders but {len(self.orders)} indexed")
        return problems

    def _checked(self, order_id: int, *, side: int, price: int, size: int) -> Order:
        order = self.orders.get(order_id) if order_id > 0 else None
        if order is None:
            raise BookError("unknown_id", f"order {order_id} is not resting")
        if side != order.side:
            raise BookError("side_mismatch", f"direction {side} for a resting order on side {order.side}")
        if price != order.price:
            raise BookError("price_mismatch", f"price {price} for an order resting at {order.price}")
        if size <= 0:
            raise BookError("nonpositive_size", f"size {size}")
        return order

    def _rest(self, order: Order, *, front: bool) -> None:
        levels = self.levels[order.side]
        level = levels.get(order.price)
        if level is None:
            level = levels[order.price] = PriceLevel()
            insort(self.prices[order.side], order.price)
        level.queue[order.order_id] = order
        if front:
            level.queue.move_to_end(order.order_id, last=False)
        level.volume += order.size
        self.orders[order.order_id] = order

    def _reduce(self, order: Order, size: int) -> None:
        levels = self.levels[order.side]
        level = levels[order.price]
        level.volume -= size
        order.size -= size
        if order.size:
            return
        del level.queue[order.order_id]
        del self.orders[order.order_id]
        if not level.queue:
            del levels[order.price]
            prices = self.prices[order.side]
            del prices[bisect_left(prices, order.price)]
