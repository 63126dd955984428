"""A compiled (numba) strict replayer: the same checks, book and report as `replay(..., mode="strict")`, faster.

The L3 book lives in flat int64 arrays: one row per order slot (id, side, price, size, FIFO links, level slot), one
row per price level (queue head and tail, volume, anonymous volume, price), and per side a sorted array of level
keys (`price` for bids, `−price` for asks, so the best level is the last entry on both sides). Order ids map to
slots through an open-addressing hash table. Every message is checked in the same order as `LimitOrderBook` and
`Replayer` check it, so the first failing reason is the same, and a refused message changes nothing.

Messages and orderbook rows are converted to numpy arrays outside the compiled loop. Input the arrays cannot hold
exactly (non-numeric fields, non-integral ids, sizes or prices, values beyond ±2**40 that could overflow int64 level
sums, ragged rows) is replayed by the Python engine instead, so the report is always the Python engine's.
"""

from __future__ import annotations

import time as clock
from array import array
from collections import Counter
from collections.abc import Sequence
from itertools import chain
from typing import Any

import numpy as np

from synth.validators.lob.book import ReasonCode
from synth.validators.lob.engine import ReplayReport, undo_first_message
from synth.validators.lob.lobster import EMPTY_ASK_PRICE, EMPTY_BID_PRICE, LobsterMessage, OrderbookRow

try:
    from numba import njit

    NUMBA_AVAILABLE = True
except ImportError:  # pragma: no cover - exercised only where numba is missing
    NUMBA_AVAILABLE = False

    def njit(*args: Any, **kwargs: Any) -> Any:
        """Stand-in decorator so this module imports without numba; `replay_strict_fast` refuses to run."""
        return lambda function: function


def kernel(function: Any) -> Any:
    """Compile a helper that allocates nothing without numba's reference counting (`_nrt=False`).

    Taking arrays out of the book tuple otherwise costs an atomic increment and decrement per array per call,
    several times the work of the replay itself. The few functions that allocate (`njit` below) keep the runtime.
    """
    return njit(cache=True, _nrt=False)(function)


def inline_kernel(function: Any) -> Any:
    """A `kernel` inlined into its callers by numba: the glue of the message loop, where passing the book's arrays
    to a separate function costs more than the function's own work."""
    return njit(cache=True, _nrt=False, inline="always")(function)


CODE_NAMES: tuple[ReasonCode | None, ...] = (
    None,
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
)
"""Reason code strings by the small integer the compiled loop returns (0: applied)."""
_CODE_OBJECTS = np.array(CODE_NAMES, dtype=object)

QUIRK_NAMES = (
    "initial_anonymous_volume",
    "pre_window_order",
    "scrolled_in_volume_added",
    "scrolled_in_volume_removed",
    "resynced_rows",
    "resync_volume_added",
    "resync_volume_removed",
)

UNKNOWN_ID = 1
DUPLICATE_ID = 2
BAD_ID = 3
SIDE_MISMATCH = 4
PRICE_MISMATCH = 5
SIZE_EXCEEDS = 6
SIZE_MISMATCH = 7
NOT_AT_BEST = 8
NOT_FIFO_HEAD = 9
CROSSING_LIMIT = 10
NONPOSITIVE_SIZE = 11
BAD_DIRECTION = 12
TIME_BACKWARDS = 13
BAD_TYPE = 14

# The book: a tuple of arrays, indexed by these constants.
B_ORDERS = 0  # (capacity, ORDER_FIELDS): one row per order slot
B_LEVELS = 1  # (capacity, LEVEL_FIELDS): one row per level slot
B_KEYS = 2  # (2, capacity): per side, the sorted keys of its levels (price for bids, −price for asks)
B_SLOTS = 3  # (2, capacity): per side, the level slot beside each key
B_META = 4  # (META_FIELDS,): free lists, high-water marks, level counts, the next anonymous id, table counts
B_IDS = 5  # hash table keys: order ids (anonymous ones negative)
B_ID_SLOTS = 6  # hash table values: the order's slot
B_WINDOW = 7  # hash table keys: 2·price + side
B_ALLOWANCES = 8  # hash table values: pre-window volume unknown ids may still take there
# Order slot columns.
O_ID = 0
O_SIDE = 1  # 0 bids (direction +1), 1 asks (direction −1)
O_PRICE = 2
O_SIZE = 3
O_PREV = 4
O_NEXT = 5
O_LEVEL = 6
ORDER_FIELDS = 7
# Level slot columns (a free level slot chains to the next free one through L_HEAD).
L_HEAD = 0
L_TAIL = 1
L_VOLUME = 2
L_ANONYMOUS = 3
L_PRICE = 4
LEVEL_FIELDS = 5
# Scalars in `meta`.
M_ORDER_FREE = 0
M_ORDER_HWM = 1
M_LEVEL_FREE = 2
M_LEVEL_HWM = 3
M_COUNT = 4  # 4: bid levels, 5: ask levels
M_NEXT_ANONYMOUS = 6
M_ID_COUNT = 7
M_WINDOW_COUNT = 8
META_FIELDS = 9
# Open-addressing hash tables (ids → order slots; 2·price + side → pre-window allowance).
EMPTY_KEY = -(2**63)
HASH_MULTIPLIER = -7046029254386353131  # 0x9E3779B97F4A7C15 as int64
# `stats`: mismatching rows, mismatching levels, first mismatching row (1-based), next message to replay.
S_ROWS = 0
S_LEVELS = 1
S_FIRST = 2
S_NEXT = 3
# Quirk counters (`QUIRK_NAMES`): values 0..6, first-touch order 7..13 (0: never touched), next touch number at 14.
Q_INITIAL = 0
Q_PRE_WINDOW = 1
Q_ADDED = 2
Q_REMOVED = 3
Q_RESYNCED = 4
Q_RESYNC_ADDED = 5
Q_RESYNC_REMOVED = 6
Q_ORDER = 7
Q_NEXT = 14

EXACT_LIMIT = 2**40
"""Sizes, prices and orderbook values must stay within ±EXACT_LIMIT for the compiled engine (no int64 overflow)."""

_INITIAL_CAPACITY = 1024


# --------------------------------------------------------------------------------------------------- book arrays


@kernel
def _hash_home(key, mask):  # pragma: no cover - compiled
    """Fibonacci hashing: bits 32 and up of key × 2**64/φ (wrapping int64 arithmetic)."""
    return ((key * HASH_MULTIPLIER) >> 32) & mask


@kernel
def _probe(table, key):  # pragma: no cover - compiled
    """The index holding `key`, or the empty index where it would go (linear probing)."""
    mask = table.shape[0] - 1
    i = _hash_home(key, mask)
    while table[i] != key and table[i] != EMPTY_KEY:
        i = (i + 1) & mask
    return i


@kernel
def _lookup(table, values, key, default):  # pragma: no cover - compiled
    i = _probe(table, key)
    return values[i] if table[i] == key else default


@kernel
def _store(table, values, key, value):  # pragma: no cover - compiled
    """Set `key` to `value`; returns 1 for a new key, 0 for an update."""
    i = _probe(table, key)
    fresh = table[i] == EMPTY_KEY
    table[i] = key
    values[i] = value
    return 1 if fresh else 0


@kernel
def _erase(table, values, key):  # pragma: no cover - compiled
    """Remove a present `key`, shifting later entries of its probe run back (no tombstones)."""
    mask = table.shape[0] - 1
    i = _probe(table, key)
    j = i
    while True:
        j = (j + 1) & mask
        if table[j] == EMPTY_KEY:
            break
        home = _hash_home(table[j], mask)
        if (home <= i or home > j) if j > i else (home <= i and home > j):
            table[i] = table[j]
            values[i] = values[j]
            i = j
    table[i] = EMPTY_KEY


@kernel
def _fill(array, value):  # pragma: no cover - compiled
    for i in range(array.shape[0]):
        array[i] = value


@njit(cache=True)
def _empty_table(capacity):  # pragma: no cover - compiled
    table = np.empty(capacity, dtype=np.int64)
    _fill(table, EMPTY_KEY)
    return table


@kernel
def _copy_into(new, old):  # pragma: no cover - compiled
    """Copy a 2-D array into the top-left corner of a larger one (explicit loops compile much faster)."""
    for i in range(old.shape[0]):
        for j in range(old.shape[1]):
            new[i, j] = old[i, j]


@njit(cache=True)
def _rehash(table, values, capacity):  # pragma: no cover - compiled
    new_table = _empty_table(capacity)
    new_values = np.zeros(capacity, dtype=np.int64)
    for i in range(table.shape[0]):
        if table[i] != EMPTY_KEY:
            _store(new_table, new_values, table[i], values[i])
    return new_table, new_values


@njit(cache=True)
def _new_book(capacity):  # pragma: no cover - compiled
    orders = np.zeros((capacity, ORDER_FIELDS), dtype=np.int64)
    levels = np.zeros((capacity, LEVEL_FIELDS), dtype=np.int64)
    keys = np.zeros((2, capacity), dtype=np.int64)
    slots = np.zeros((2, capacity), dtype=np.int64)
    meta = np.zeros(META_FIELDS, dtype=np.int64)
    meta[M_ORDER_FREE] = -1
    meta[M_LEVEL_FREE] = -1
    meta[M_NEXT_ANONYMOUS] = -1
    table = 16
    while table < 2 * capacity:
        table *= 2
    ids, window = _empty_table(table), _empty_table(table)
    return (orders, levels, keys, slots, meta, ids, np.zeros(table, dtype=np.int64), window, np.zeros(table, np.int64))


@njit(cache=True)
def _grow_orders(book):  # pragma: no cover - compiled
    orders, levels, keys, slots = book[B_ORDERS], book[B_LEVELS], book[B_KEYS], book[B_SLOTS]
    capacity = orders.shape[0] * 2
    new_orders = np.zeros((capacity, ORDER_FIELDS), dtype=np.int64)
    new_levels = np.zeros((capacity, LEVEL_FIELDS), dtype=np.int64)
    new_keys = np.zeros((2, capacity), dtype=np.int64)
    new_slots = np.zeros((2, capacity), dtype=np.int64)
    _copy_into(new_orders, orders)
    _copy_into(new_levels, levels)
    _copy_into(new_keys, keys)
    _copy_into(new_slots, slots)
    _, _, _, _, meta, ids, id_slots, window, allowances = book
    return (new_orders, new_levels, new_keys, new_slots, meta, ids, id_slots, window, allowances)


@njit(cache=True)
def _reserve(book, need):  # pragma: no cover - compiled
    """Room for `need` more orders, levels, ids and pre-window prices: the most one message can add."""
    meta = book[B_META]
    if meta[M_ORDER_HWM] + need > book[B_ORDERS].shape[0]:
        book = _grow_orders(book)
    orders, levels, keys, slots, _, ids, id_slots, window, allowances = book
    if 2 * (meta[M_ID_COUNT] + need) > ids.shape[0]:
        ids, id_slots = _rehash(ids, id_slots, 2 * ids.shape[0])
    if 2 * (meta[M_WINDOW_COUNT] + need) > window.shape[0]:
        window, allowances = _rehash(window, allowances, 2 * window.shape[0])
    return (orders, levels, keys, slots, meta, ids, id_slots, window, allowances)


@inline_kernel
def _short_of_room(book, need):  # pragma: no cover - compiled
    meta = book[B_META]
    return (
        meta[M_ORDER_HWM] + need > book[B_ORDERS].shape[0]
        or 2 * (meta[M_ID_COUNT] + need) > book[B_IDS].shape[0]
        or 2 * (meta[M_WINDOW_COUNT] + need) > book[B_WINDOW].shape[0]
    )


@kernel
def _has_id(book, order_id):  # pragma: no cover - compiled
    table = book[B_IDS]
    return table[_probe(table, order_id)] == order_id


@kernel
def _allowance(book, s, price):  # pragma: no cover - compiled
    """Pre-window volume an unknown id may still take at (side, price)."""
    return _lookup(book[B_WINDOW], book[B_ALLOWANCES], 2 * price + s, 0)


@kernel
def _add_allowance(book, s, price, amount):  # pragma: no cover - compiled
    key = 2 * price + s
    window, allowances = book[B_WINDOW], book[B_ALLOWANCES]
    book[B_META][M_WINDOW_COUNT] += _store(window, allowances, key, _lookup(window, allowances, key, 0) + amount)


@kernel
def _position(book, s, key):  # pragma: no cover - compiled
    """First position on side `s` whose key is not below `key`."""
    keys = book[B_KEYS]
    low = 0
    high = book[B_META][M_COUNT + s]
    while low < high:
        middle = (low + high) >> 1
        if keys[s, middle] < key:
            low = middle + 1
        else:
            high = middle
    return low


@kernel
def _level_slot(book, s, price):  # pragma: no cover - compiled
    """The level slot of `price` on side `s`, or −1."""
    key = price if s == 0 else -price
    position = _position(book, s, key)
    if position < book[B_META][M_COUNT + s] and book[B_KEYS][s, position] == key:
        return book[B_SLOTS][s, position]
    return -1


@kernel
def _volume_at(book, s, price):  # pragma: no cover - compiled
    level = _level_slot(book, s, price)
    return book[B_LEVELS][level, L_VOLUME] if level >= 0 else 0


@kernel
def _level_at_rank(book, s, rank):  # pragma: no cover - compiled
    """The level slot `rank` levels from the best on side `s` (0: the best); the caller checks the count."""
    return book[B_SLOTS][s, book[B_META][M_COUNT + s] - 1 - rank]


@kernel
def _open_level(book, s, price):  # pragma: no cover - compiled
    levels, keys, slots, meta = book[B_LEVELS], book[B_KEYS], book[B_SLOTS], book[B_META]
    key = price if s == 0 else -price
    position = _position(book, s, key)
    count = meta[M_COUNT + s]
    for i in range(count, position, -1):
        keys[s, i] = keys[s, i - 1]
        slots[s, i] = slots[s, i - 1]
    level = meta[M_LEVEL_FREE]
    if level >= 0:
        meta[M_LEVEL_FREE] = levels[level, L_HEAD]
    else:
        level = meta[M_LEVEL_HWM]
        meta[M_LEVEL_HWM] += 1
    keys[s, position] = key
    slots[s, position] = level
    meta[M_COUNT + s] = count + 1
    levels[level, L_HEAD] = -1
    levels[level, L_TAIL] = -1
    levels[level, L_VOLUME] = 0
    levels[level, L_ANONYMOUS] = 0
    levels[level, L_PRICE] = price
    return level


@kernel
def _close_level(book, s, level):  # pragma: no cover - compiled
    levels, keys, slots, meta = book[B_LEVELS], book[B_KEYS], book[B_SLOTS], book[B_META]
    price = levels[level, L_PRICE]
    position = _position(book, s, price if s == 0 else -price)
    count = meta[M_COUNT + s] - 1
    for i in range(position, count):
        keys[s, i] = keys[s, i + 1]
        slots[s, i] = slots[s, i + 1]
    meta[M_COUNT + s] = count
    levels[level, L_HEAD] = meta[M_LEVEL_FREE]
    meta[M_LEVEL_FREE] = level


@kernel
def _rest(book, order_id, s, price, size, front):  # pragma: no cover - compiled
    """Rest an order at the front or back of its level's queue (`LimitOrderBook._rest`)."""
    orders, levels, meta = book[B_ORDERS], book[B_LEVELS], book[B_META]
    level = _level_slot(book, s, price)
    if level < 0:
        level = _open_level(book, s, price)
    slot = meta[M_ORDER_FREE]
    if slot >= 0:
        meta[M_ORDER_FREE] = orders[slot, O_NEXT]
    else:
        slot = meta[M_ORDER_HWM]
        meta[M_ORDER_HWM] += 1
    orders[slot, O_ID] = order_id
    orders[slot, O_SIDE] = s
    orders[slot, O_PRICE] = price
    orders[slot, O_SIZE] = size
    orders[slot, O_LEVEL] = level
    if front:
        head = levels[level, L_HEAD]
        orders[slot, O_PREV] = -1
        orders[slot, O_NEXT] = head
        if head >= 0:
            orders[head, O_PREV] = slot
        else:
            levels[level, L_TAIL] = slot
        levels[level, L_HEAD] = slot
    else:
        tail = levels[level, L_TAIL]
        orders[slot, O_PREV] = tail
        orders[slot, O_NEXT] = -1
        if tail >= 0:
            orders[tail, O_NEXT] = slot
        else:
            levels[level, L_HEAD] = slot
        levels[level, L_TAIL] = slot
    levels[level, L_VOLUME] += size
    if order_id < 0:
        levels[level, L_ANONYMOUS] += size
    meta[M_ID_COUNT] += _store(book[B_IDS], book[B_ID_SLOTS], order_id, slot)


@kernel
def _reduce(book, slot, size):  # pragma: no cover - compiled
    """Take `size` from an order; an emptied order leaves its queue, an emptied level leaves its side."""
    orders, levels, meta = book[B_ORDERS], book[B_LEVELS], book[B_META]
    level = orders[slot, O_LEVEL]
    levels[level, L_VOLUME] -= size
    if orders[slot, O_ID] < 0:
        levels[level, L_ANONYMOUS] -= size
    orders[slot, O_SIZE] -= size
    if orders[slot, O_SIZE] != 0:
        return
    previous, following = orders[slot, O_PREV], orders[slot, O_NEXT]
    if previous >= 0:
        orders[previous, O_NEXT] = following
    else:
        levels[level, L_HEAD] = following
    if following >= 0:
        orders[following, O_PREV] = previous
    else:
        levels[level, L_TAIL] = previous
    _erase(book[B_IDS], book[B_ID_SLOTS], orders[slot, O_ID])
    meta[M_ID_COUNT] -= 1
    orders[slot, O_NEXT] = meta[M_ORDER_FREE]
    meta[M_ORDER_FREE] = slot
    if levels[level, L_HEAD] < 0:
        _close_level(book, orders[slot, O_SIDE], level)


@kernel
def _add_anonymous(book, s, price, size, front):  # pragma: no cover - compiled
    meta = book[B_META]
    order_id = meta[M_NEXT_ANONYMOUS]
    meta[M_NEXT_ANONYMOUS] -= 1
    _rest(book, order_id, s, price, size, front)


@kernel
def _trim_level(book, s, price, volume):  # pragma: no cover - compiled
    """Shrink a level to `volume`: anonymous volume first (queue order), then the newest known orders."""
    orders, levels = book[B_ORDERS], book[B_LEVELS]
    level = _level_slot(book, s, price)
    if level < 0:
        return 0
    excess = levels[level, L_VOLUME] - max(volume, 0)
    if excess <= 0:
        return 0
    removed = 0
    slot = levels[level, L_HEAD]
    while slot >= 0:
        following = orders[slot, O_NEXT]
        if orders[slot, O_ID] < 0:
            taken = min(excess - removed, orders[slot, O_SIZE])
            _reduce(book, slot, taken)
            removed += taken
            if removed == excess:
                return removed
        slot = following
    slot = levels[level, L_TAIL]
    while slot >= 0:
        previous = orders[slot, O_PREV]
        if orders[slot, O_ID] > 0:
            taken = min(excess - removed, orders[slot, O_SIZE])
            _reduce(book, slot, taken)
            removed += taken
            if removed == excess:
                return removed
        slot = previous
    return removed


# ------------------------------------------------------------------------------------------------------ messages


@kernel
def _side_index(direction):  # pragma: no cover - compiled
    """0 for bids (+1), 1 for asks (−1), −1 for any other direction."""
    if direction == 1:
        return 0
    if direction == -1:
        return 1
    return -1


@kernel
def _best_price(book, s):  # pragma: no cover - compiled
    return book[B_LEVELS][_level_at_rank(book, s, 0), L_PRICE]


@inline_kernel
def _submit(book, order_id, direction, price, size):  # pragma: no cover - compiled
    s = _side_index(direction)
    if s < 0:
        return BAD_DIRECTION
    if order_id <= 0:
        return BAD_ID
    if _has_id(book, order_id):
        return DUPLICATE_ID
    if size <= 0:
        return NONPOSITIVE_SIZE
    other = 1 - s
    if book[B_META][M_COUNT + other] > 0:
        opposite = _best_price(book, other)
        if (price >= opposite) if s == 0 else (price <= opposite):
            return CROSSING_LIMIT
    _rest(book, order_id, s, price, size, False)
    return 0


@kernel
def _consume_anonymous(book, s, price, size, at_best):  # pragma: no cover - compiled
    """An unknown id takes pre-window volume at its level, oldest (queue order) first."""
    orders, levels = book[B_ORDERS], book[B_LEVELS]
    level = _level_slot(book, s, price)
    available = levels[level, L_ANONYMOUS] if level >= 0 else 0
    if available == 0:
        return UNKNOWN_ID
    if size > available:
        return SIZE_EXCEEDS
    if at_best and price != _best_price(book, s):
        return NOT_AT_BEST
    slot = levels[level, L_HEAD]
    while slot >= 0 and size > 0:
        following = orders[slot, O_NEXT]
        if orders[slot, O_ID] < 0:
            taken = min(size, orders[slot, O_SIZE])
            _reduce(book, slot, taken)
            size -= taken
        slot = following
    return 0


@inline_kernel
def _checked(book, order_id, direction, price, size):  # pragma: no cover - compiled
    """(code, slot) as `LimitOrderBook._checked` decides them."""
    if order_id <= 0:
        return UNKNOWN_ID, -1
    slot = _lookup(book[B_IDS], book[B_ID_SLOTS], order_id, -1)
    if slot < 0:
        return UNKNOWN_ID, -1
    orders = book[B_ORDERS]
    if direction != 1 - 2 * orders[slot, O_SIDE]:
        return SIDE_MISMATCH, -1
    if price != orders[slot, O_PRICE]:
        return PRICE_MISMATCH, -1
    if size <= 0:
        return NONPOSITIVE_SIZE, -1
    return 0, slot


@inline_kernel
def _apply_known(book, event, order_id, direction, price, size):  # pragma: no cover - compiled
    code, slot = _checked(book, order_id, direction, price, size)
    if code:
        return code
    orders = book[B_ORDERS]
    resting = orders[slot, O_SIZE]
    if event == 2:
        if size >= resting:
            return SIZE_EXCEEDS
        _reduce(book, slot, size)
        return 0
    if size > resting:
        return SIZE_EXCEEDS
    if event == 3:
        if size != resting:
            return SIZE_MISMATCH
        _reduce(book, slot, resting)
        return 0
    s = orders[slot, O_SIDE]
    if price != _best_price(book, s):
        return NOT_AT_BEST
    if book[B_LEVELS][orders[slot, O_LEVEL], L_HEAD] != slot:
        return NOT_FIFO_HEAD
    _reduce(book, slot, size)
    return 0


@inline_kernel
def _apply_reference(book, event, order_id, direction, price, size, quirks):  # pragma: no cover - compiled
    """Cancel, delete or execute: a known order, or pre-window volume for an id the book never held."""
    s = _side_index(direction)
    allowance = 0
    if s >= 0 and not _has_id(book, order_id):
        allowance = _allowance(book, s, price)
    if size > 0 and allowance >= size:
        code = _consume_anonymous(book, s, price, size, event == 4)
        if code:
            return code
        _add_allowance(book, s, price, -size)
        _count_quirk(quirks, Q_PRE_WINDOW, 1)
        return 0
    return _apply_known(book, event, order_id, direction, price, size)


@inline_kernel
def _step(book, event, order_id, size, price, direction, quirks):  # pragma: no cover - compiled
    if event == 1:
        return _submit(book, order_id, direction, price, size)
    if event == 2 or event == 3 or event == 4:
        return _apply_reference(book, event, order_id, direction, price, size, quirks)
    if event == 5 or event == 6 or event == 7:
        return 0
    return BAD_TYPE


# ----------------------------------------------------------------------------------------------- orderbook rows


@kernel
def _count_quirk(quirks, which, amount):  # pragma: no cover - compiled
    if quirks[Q_ORDER + which] == 0:
        quirks[Q_NEXT] += 1
        quirks[Q_ORDER + which] = quirks[Q_NEXT]
    quirks[which] += amount


@kernel
def _seed(book, row, quirks):  # pragma: no cover - compiled
    """`Replayer.seed_pre_window`: anonymous volume up to the row's levels, each an allowance for unknown ids."""
    added = 0
    for index in range(0, row.shape[0], 4):
        for s in range(1, -1, -1):
            price, size = row[index + 2 - 2 * s], row[index + 3 - 2 * s]
            if price == (EMPTY_ASK_PRICE if s == 1 else EMPTY_BID_PRICE) or size <= 0:
                continue
            missing = size - _volume_at(book, s, price)
            if missing > 0:
                _add_anonymous(book, s, price, missing, True)
                added += missing
    _count_quirk(quirks, Q_INITIAL, added)
    for index in range(0, row.shape[0], 4):
        for s in range(1, -1, -1):
            price, size = row[index + 2 - 2 * s], row[index + 3 - 2 * s]
            if price != (EMPTY_ASK_PRICE if s == 1 else EMPTY_BID_PRICE) and size > 0:
                _add_allowance(book, s, price, size)


@inline_kernel
def _collect_shown(current, s, boundary, shown):  # pragma: no cover - compiled
    """Prices beyond `boundary` that `current` shows on side `s`, in first-seen order, last size winning."""
    empty = EMPTY_ASK_PRICE if s == 1 else EMPTY_BID_PRICE
    count = 0
    for index in range(2 - 2 * s, current.shape[0], 4):
        price = current[index]
        if price == empty or ((price <= boundary) if s == 1 else (price >= boundary)):
            continue
        seen = -1
        for j in range(count):
            if shown[0, j] == price:
                seen = j
        if seen < 0:
            seen = count
            shown[0, count] = price
            count += 1
        shown[1, seen] = current[index + 1]
    return count


@inline_kernel
def _sync_shown(book, s, shown, count, quirks):  # pragma: no cover - compiled
    for j in range(count):
        price, size = shown[0, j], shown[1, j]
        missing = size - _volume_at(book, s, price)
        if missing > 0:
            _add_anonymous(book, s, price, missing, False)
            _add_allowance(book, s, price, missing)
            _count_quirk(quirks, Q_ADDED, missing)
        elif missing < 0:
            _count_quirk(quirks, Q_REMOVED, _trim_level(book, s, price, size))


@inline_kernel
def _drop_stale(book, s, boundary, shown, count, depth, quirks):  # pragma: no cover - compiled
    """Empty levels beyond `boundary` that the row does not show, until `depth` levels from the best are kept."""
    kept = 0
    position = book[B_META][M_COUNT + s] - 1
    while kept < depth and position >= 0:
        level = book[B_SLOTS][s, position]
        price = book[B_LEVELS][level, L_PRICE]
        stale = (price > boundary) if s == 1 else (price < boundary)
        for j in range(count):
            if shown[0, j] == price:
                stale = False
        if stale:
            _count_quirk(quirks, Q_REMOVED, _trim_level(book, s, price, 0))
        else:
            kept += 1
        position -= 1


@inline_kernel
def _sync_beyond_view(book, previous, current, shown, quirks):  # pragma: no cover - compiled
    """`Replayer.sync_beyond_view`: asks, then bids."""
    depth = current.shape[0] // 4
    for s in range(1, -1, -1):
        boundary = previous[4 * (depth - 1) + 2 - 2 * s]
        if boundary == (EMPTY_ASK_PRICE if s == 1 else EMPTY_BID_PRICE):
            continue
        count = _collect_shown(current, s, boundary, shown)
        _sync_shown(book, s, shown, count, quirks)
        _drop_stale(book, s, boundary, shown, count, depth, quirks)


@inline_kernel
def _drop_unshown(book, s, deepest, shown, count, quirks):  # pragma: no cover - compiled
    """Empty the levels at or better than `deepest` (all, for padding) that `shown` lacks."""
    position = book[B_META][M_COUNT + s] - 1  # from the best outwards: closing a level moves only better ones
    while position >= 0:
        price = book[B_LEVELS][book[B_SLOTS][s, position], L_PRICE]
        if deepest != (EMPTY_ASK_PRICE if s == 1 else EMPTY_BID_PRICE) and (
            (price > deepest) if s == 1 else (price < deepest)
        ):
            return  # this level and every worse one lie beyond the view
        stale = True
        for j in range(count):
            if shown[0, j] == price:
                stale = False
        if stale:
            _count_quirk(quirks, Q_RESYNC_REMOVED, _trim_level(book, s, price, 0))
        position -= 1


@kernel
def _resync_side(book, row, s, shown, quirks):  # pragma: no cover - compiled
    """`Replayer.resync_to` on side `s`: empty the unshown levels inside the row's view, then match shown sizes."""
    # Every shown price, first-seen order, last size winning: no price lies beyond ±2**62 (`EXACT_LIMIT`).
    count = _collect_shown(row, s, -(2**62) if s == 1 else 2**62, shown)
    _drop_unshown(book, s, row[row.shape[0] - 2 - 2 * s], shown, count, quirks)
    for j in range(count):
        price, size = shown[0, j], shown[1, j]
        have = _volume_at(book, s, price)
        if size > have:
            _add_anonymous(book, s, price, size - have, True)
            _add_allowance(book, s, price, size - have)
            _count_quirk(quirks, Q_RESYNC_ADDED, size - have)
        elif size < have:
            _count_quirk(quirks, Q_RESYNC_REMOVED, _trim_level(book, s, price, size))


@kernel
def _resync(book, row, shown, quirks):  # pragma: no cover - compiled
    """`Replayer.resync_to`: asks, then bids."""
    _count_quirk(quirks, Q_RESYNCED, 1)
    _resync_side(book, row, 1, shown, quirks)
    _resync_side(book, row, 0, shown, quirks)


@inline_kernel
def _level_pair(book, s, rank):  # pragma: no cover - compiled
    """(price, volume) of the level `rank` from the best on side `s`, or LOBSTER's padding."""
    if rank < book[B_META][M_COUNT + s]:
        level = _level_at_rank(book, s, rank)
        return book[B_LEVELS][level, L_PRICE], book[B_LEVELS][level, L_VOLUME]
    return (EMPTY_ASK_PRICE if s == 1 else EMPTY_BID_PRICE), 0


@inline_kernel
def _mismatched_levels(book, expected):  # pragma: no cover - compiled
    """How many (price, size) pairs of `expected` the book's snapshot differs in."""
    mismatches = 0
    for rank in range(expected.shape[0] // 4):
        for s in range(1, -1, -1):
            price, volume = _level_pair(book, s, rank)
            offset = 4 * rank + 2 * (1 - s)
            if expected[offset] != price or expected[offset + 1] != volume:
                mismatches += 1
    return mismatches


@kernel
def _snapshot_into(book, out):  # pragma: no cover - compiled
    for rank in range(out.shape[0] // 4):
        for s in range(1, -1, -1):
            price, volume = _level_pair(book, s, rank)
            out[4 * rank + 2 * (1 - s)] = price
            out[4 * rank + 2 * (1 - s) + 1] = volume


# ---------------------------------------------------------------------------------------------------- main loop


@inline_kernel
def _compare_row(book, rows, seed, i, stats, quirks, shown, resync):  # pragma: no cover - compiled
    """Sync levels that came into view with orderbook row i, count its mismatching levels, and with `resync`
    realign the book to a mismatching row."""
    _sync_beyond_view(book, seed if i == 0 else rows[i - 1], rows[i], shown, quirks)
    mismatches = _mismatched_levels(book, rows[i])
    if mismatches:
        if stats[S_ROWS] == 0:
            stats[S_FIRST] = i + 1
        stats[S_ROWS] += 1
        stats[S_LEVELS] += mismatches
        if resync:
            _resync(book, rows[i], shown, quirks)


@kernel
def _replay_range(book, inputs, outputs, has_rows, record, resync):  # pragma: no cover - compiled
    """Replay from message `stats[S_NEXT]` until the end or until the book needs room, then move `S_NEXT` on.

    The start is read from `stats` rather than passed: numba compiles a separate copy for a literal argument.
    """
    times, fields, rows, seed = inputs
    codes, stats, quirks, shown, snapshots, last_time = outputs
    need = 2 + rows.shape[1]  # a submission, levels coming into view and a resync's levels
    for i in range(stats[S_NEXT], times.shape[0]):
        if _short_of_room(book, need):
            stats[S_NEXT] = i
            return
        if not times[i] >= last_time[0]:
            code = TIME_BACKWARDS
        else:
            code = _step(book, fields[0, i], fields[1, i], fields[2, i], fields[3, i], fields[4, i], quirks)
            if code == 0:
                last_time[0] = times[i]
        codes[i] = code
        if has_rows:
            _compare_row(book, rows, seed, i, stats, quirks, shown, resync)
        if record:
            _snapshot_into(book, snapshots[i])
    stats[S_NEXT] = times.shape[0]


@njit(cache=True)
def _replay_loop(times, fields, rows, seed, has_rows, snapshot_levels, record, resync):  # pragma: no cover - compiled
    """Replay every message; returns codes, mismatch stats, quirk counters, recorded and final snapshots."""
    count = times.shape[0]
    width = rows.shape[1]
    book = _new_book(_INITIAL_CAPACITY + 2 * width)
    codes = np.zeros(count, dtype=np.int8)
    stats = np.zeros(4, dtype=np.int64)
    quirks = np.zeros(Q_NEXT + 1, dtype=np.int64)
    snapshots = np.zeros((count if record else 0, 4 * snapshot_levels), dtype=np.int64)
    outputs = (codes, stats, quirks, np.zeros((2, width), dtype=np.int64), snapshots, np.zeros(1))
    outputs[5][0] = -np.inf  # the time of the last applied message
    if has_rows:
        _seed(book, seed, quirks)
    while stats[S_NEXT] < count:
        _replay_range(book, (times, fields, rows, seed), outputs, has_rows, record, resync)
        if stats[S_NEXT] < count:
            book = _reserve(book, 2 + width)
    final = np.zeros(4 * snapshot_levels, dtype=np.int64)
    _snapshot_into(book, final)
    return codes, stats, quirks, snapshots, final


# ------------------------------------------------------------------------------------------------ conversion


def _inferred_int64(column: np.ndarray) -> np.ndarray | None:
    """A numpy-inferred column as int64 when every value is an integer (bools, integral floats), else None."""
    kind = column.dtype.kind
    if kind not in "biuf" or column.ndim != 1:
        return None
    if kind == "f" and not (np.isfinite(column).all() and (column == np.trunc(column)).all()):
        return None
    if kind == "u" and column.size and column.max() > 2**62:
        return None
    return column.astype(np.int64)


def _within(column: np.ndarray | None, limit: int) -> np.ndarray | None:
    if column is None or (column.size and (column.max() > limit or column.min() < -limit)):
        return None
    return column


def _exact_int64(values: Sequence[Any], limit: int) -> np.ndarray | None:
    """`values` as int64 when every one is an integer within ±limit, else None.

    Python ints (the common case) go through `array("q")`, which refuses anything that is not an integer; other
    numbers (floats that hold integers, numpy scalars) through numpy's type inference.
    """
    try:
        column = np.frombuffer(array("q", values), dtype=np.int64)
    except (TypeError, OverflowError):
        column = _inferred_int64(np.array(values))
    return _within(column, limit)


def _message_arrays(messages: Sequence[LobsterMessage]) -> tuple[np.ndarray, np.ndarray] | None:
    """(times float64 (n,), fields int64 (5, n): type, id, size, price, direction), or None if not exact."""
    try:
        columns = list(zip(*messages, strict=False))  # as many columns as the shortest message has fields
        if len(columns) != len(LobsterMessage._fields) or max(map(len, messages)) != len(columns):
            return None
    except TypeError:
        return None
    times = np.array(columns[0])
    if times.dtype.kind not in "biuf" or times.ndim != 1:
        return None
    if times.dtype.kind in "iu" and (times.max() > 2**53 or times.min() < -(2**53)):
        return None  # Python compares such integers with float times exactly
    limits = (2**62, 2**62, EXACT_LIMIT, EXACT_LIMIT, 2**62)
    fields = [_exact_int64(column, limit) for column, limit in zip(columns[1:], limits, strict=True)]
    if any(column is None for column in fields):
        return None
    return times.astype(np.float64), np.stack(fields)


def _row_arrays(orderbook: Sequence[OrderbookRow], seed: OrderbookRow) -> tuple[np.ndarray, np.ndarray] | None:
    """(rows int64 (n, 4L), seed int64 (4L,)), or None if not exact or not 4L values per row."""
    try:
        width = len(orderbook[B_ORDERS])
        if not width or width % 4 or len(seed) != width or min(map(len, orderbook)) != width:
            return None
    except TypeError:
        return None
    try:
        flat: np.ndarray | None = np.frombuffer(array("q", chain.from_iterable(orderbook)), dtype=np.int64)
    except (TypeError, OverflowError):
        flat = None
    if flat is None or len(flat) != len(orderbook) * width:  # not all ints, or a row longer than the first
        try:
            flat = _inferred_int64(np.array(orderbook).reshape(-1))  # refuses ragged rows
        except ValueError:
            return None
    rows, first = _within(flat, EXACT_LIMIT), _exact_int64(seed, EXACT_LIMIT)
    if rows is None or first is None or len(rows) != len(orderbook) * width:
        return None
    return rows.reshape(len(orderbook), width), first


def _require_numba() -> None:
    if not NUMBA_AVAILABLE:
        msg = "the numba replay engine needs numba: pip install numba"
        raise ImportError(msg)


def _run(
    messages: Sequence[LobsterMessage],
    orderbook: Sequence[OrderbookRow] | None,
    snapshot_levels: int,
    record: bool,
    *,
    resync: bool = False,
) -> tuple[ReplayReport, np.ndarray, np.ndarray] | None:
    """Convert and replay; None when the input cannot be held exactly in int64 arrays."""
    start = clock.perf_counter()
    converted = _message_arrays(messages) if len(messages) else (np.zeros(0), np.zeros((5, 0), dtype=np.int64))
    if converted is None:
        return None
    times, fields = converted
    rows, seed = np.zeros((0, 4), dtype=np.int64), np.zeros(4, dtype=np.int64)
    if orderbook is not None and len(messages):
        arrays = _row_arrays(orderbook, undo_first_message(orderbook[B_ORDERS], messages[0]))
        if arrays is None:
            return None
        rows, seed = arrays
    codes, stats, quirks, snapshots, final = _replay_loop(
        times, fields, rows, seed, orderbook is not None and len(messages) > 0, snapshot_levels, record, resync
    )
    report = _report(codes, stats, quirks, rows_compared=len(rows), levels=rows.shape[1] // 4 if len(rows) else 0)
    report.seconds = clock.perf_counter() - start
    return report, snapshots, final


def _report(
    codes: np.ndarray, stats: np.ndarray, quirks: np.ndarray, *, rows_compared: int, levels: int
) -> ReplayReport:
    """The Python engine's report from the loop's arrays, counters keyed in the same first-seen order."""
    names = CODE_NAMES
    report = ReplayReport(mode="strict", messages=len(codes))
    report.codes = _CODE_OBJECTS[codes].tolist()
    tally = np.bincount(codes, minlength=len(names))
    refused = [int(code) for code in np.flatnonzero(tally[1:]) + 1]
    refused.sort(key=lambda code: int(np.argmax(codes == code)))
    report.violations = Counter({names[code]: int(tally[code]) for code in refused})
    report.applied = report.messages - report.violation_count
    if rows_compared:
        report.rows_compared = rows_compared
        report.levels_compared = rows_compared * levels * 2
        report.row_mismatches, report.level_mismatches = int(stats[S_ROWS]), int(stats[S_LEVELS])
        report.first_mismatch_row = int(stats[S_FIRST]) if stats[S_ROWS] else None
    touched = sorted((int(quirks[Q_ORDER + k]), k) for k in range(len(QUIRK_NAMES)) if quirks[Q_ORDER + k])
    report.quirks = Counter({QUIRK_NAMES[k]: int(quirks[k]) for _, k in touched})
    return report


# --------------------------------------------------------------------------------------------------- public API


def replay_strict_fast(
    messages: Sequence[LobsterMessage], *, orderbook: Sequence[OrderbookRow] | None = None, resync: bool = False
) -> ReplayReport:
    """The compiled equivalent of `replay(messages, orderbook=orderbook, mode="strict", resync=resync)`.

    Args:
        messages: LOBSTER messages (any sequence of 6-field rows).
        orderbook: LOBSTER orderbook rows, row k the book after message k; seeds and checks the book as in `replay`.
        resync: realign the book to every row it differs from, as `replay(..., resync=True)`; needs `orderbook`.

    Returns:
        The same report as the Python engine; `seconds` covers the array conversion and the compiled loop.

    Raises:
        ImportError: numba is not installed.
        ValueError: `orderbook` and `messages` differ in length, or `resync` without `orderbook`.

    Example:
        >>> from synth.generators.lob import SAMPLE_DIR, read_messages, read_orderbook
        >>> stem = SAMPLE_DIR / "AAPL_2012-06-21_34200000_57600000"
        >>> messages, rows = read_messages(f"{stem}_message_10.csv"), read_orderbook(f"{stem}_orderbook_10.csv")
        >>> replay_strict_fast(messages, orderbook=rows).violation_count
        0
    """
    report, _ = replay_strict_fast_with_rows(messages, orderbook=orderbook, levels=0, resync=resync)
    return report


def replay_strict_fast_with_rows(
    messages: Sequence[LobsterMessage],
    *,
    orderbook: Sequence[OrderbookRow] | None = None,
    levels: int = 10,
    every_message: bool = False,
    resync: bool = False,
) -> tuple[ReplayReport, np.ndarray]:
    """`replay_strict_fast` that also returns the book as LOBSTER rows of `levels` levels.

    Args:
        levels: depth of the returned rows.
        every_message: return one row after every message (shape (n, 4·levels)) instead of the final row only
            (shape (4·levels,)).
        resync: as in `replay_strict_fast`; rows recorded after a mismatching message show the realigned book.
    """
    _require_numba()
    if resync and orderbook is None:
        msg = "`resync` realigns the book to orderbook rows: it needs `orderbook`"
        raise ValueError(msg)
    if orderbook is not None and len(orderbook) != len(messages):
        msg = f"`orderbook` has {len(orderbook)} rows for {len(messages)} messages; they must match row for row"
        raise ValueError(msg)
    if levels < 0:
        msg = f"`levels` must be non-negative, got {levels}"
        raise ValueError(msg)
    result = _run(messages, orderbook, levels, every_message, resync=resync)
    if result is None:
        return _python_with_rows(messages, orderbook, levels, every_message, resync=resync)
    report, snapshots, final = result
    return report, snapshots if every_message else final


def _python_with_rows(
    messages: Sequence[LobsterMessage],
    orderbook: Sequence[OrderbookRow] | None,
    levels: int,
    every_message: bool,
    *,
    resync: bool = False,
) -> tuple[ReplayReport, np.ndarray]:
    """The Python engine, for input the arrays cannot hold exactly."""
    from synth.validators.lob.engine import replay

    rows: list[tuple[int, ...]] = []
    final: list[Any] = [()]

    def after(_: int, book: Any) -> None:
        final[0] = book.snapshot(levels)
        if every_message:
            rows.append(final[0])

    report = replay(messages, orderbook=orderbook, mode="strict", after_message=after, resync=resync)
    if not messages:
        from synth.validators.lob.book import LimitOrderBook

        final[0] = LimitOrderBook().snapshot(levels)
    if every_message:
        return report, np.array(rows, dtype=object).reshape(len(messages), 4 * levels)
    return report, np.array(final[0], dtype=object)


def warm_up() -> float:
    """Compile (or load from numba's cache) the replay loop on a tiny stream; returns the seconds it took."""
    _require_numba()
    start = clock.perf_counter()
    stream = [LobsterMessage(1.0, 1, 1, 10, 100, 1), LobsterMessage(2.0, 3, 1, 10, 100, 1)]
    rows = [(EMPTY_ASK_PRICE, 0, 100, 10), (EMPTY_ASK_PRICE, 0, EMPTY_BID_PRICE, 0)]
    replay_strict_fast_with_rows(stream, orderbook=rows, levels=1, every_message=True)
    return clock.perf_counter() - start
