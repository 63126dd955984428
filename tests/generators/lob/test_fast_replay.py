"""The compiled strict replayer: the Python engine's report code for code, and the same book after every message."""

from typing import get_args

import numpy as np
import pytest
from hypothesis import HealthCheck, event, given, settings
from hypothesis import strategies as st

from synth.generators.lob import (
    SAMPLE_DIR,
    LimitOrderBook,
    LobsterMessage,
    ReasonCode,
    Replayer,
    read_messages,
    read_orderbook,
)
from synth.validators.lob.engine import replay

fast_replay = pytest.importorskip("synth.validators.lob.fast_replay")
pytest.importorskip("numba")

AAPL = SAMPLE_DIR / "AAPL_2012-06-21_34200000_57600000"
AMZN = SAMPLE_DIR / "AMZN_2012-06-21_34200000_57600000"
REPORT_FIELDS = (
    "mode",
    "messages",
    "applied",
    "violations",
    "codes",
    "rows_compared",
    "row_mismatches",
    "levels_compared",
    "level_mismatches",
    "first_mismatch_row",
)
DEPTH = 12  # prices 95..105 in the random streams: 12 levels show the whole book


@pytest.fixture(scope="module", autouse=True)
def compiled():
    fast_replay.warm_up()  # compiles once (or loads numba's cache) for the whole module


@pytest.fixture(scope="module")
def samples():
    return {
        "AAPL": (read_messages(f"{AAPL}_message_10.csv"), read_orderbook(f"{AAPL}_orderbook_10.csv")),
        "AMZN": (read_messages(f"{AMZN}_message_1.csv"), read_orderbook(f"{AMZN}_orderbook_1.csv")),
    }


def assert_same_report(fast, slow):
    for name in REPORT_FIELDS:
        assert getattr(fast, name) == getattr(slow, name), name
    assert list(fast.violations.items()) == list(slow.violations.items())
    assert list(fast.quirks.items()) == list(slow.quirks.items())  # same keys, values and first-seen order


def python_rows(messages, orderbook=None, depth=DEPTH, resync=False):
    """The Python strict report and the book as a LOBSTER row after every message."""
    rows = []
    report = replay(
        messages, orderbook=orderbook, resync=resync, after_message=lambda _, book: rows.append(book.snapshot(depth))
    )
    return report, rows


def fast_rows(messages, orderbook=None, depth=DEPTH, resync=False):
    report, rows = fast_replay.replay_strict_fast_with_rows(
        messages, orderbook=orderbook, levels=depth, every_message=True, resync=resync
    )
    return report, [tuple(row) for row in np.asarray(rows).tolist()]


def test_code_names_are_the_reason_codes():
    assert (None, *get_args(ReasonCode)) == fast_replay.CODE_NAMES


@pytest.mark.parametrize("with_orderbook", [True, False], ids=["orderbook", "messages"])
@pytest.mark.parametrize("name", ["AAPL", "AMZN"])
def test_samples_give_the_python_report(samples, name, with_orderbook):
    messages, rows = samples[name]
    orderbook = rows if with_orderbook else None
    fast = fast_replay.replay_strict_fast(messages, orderbook=orderbook)
    assert_same_report(fast, replay(messages, orderbook=orderbook, mode="strict"))
    assert fast.seconds > 0 and fast.messages_per_second > 0
    if name == "AAPL" and with_orderbook:
        assert fast.violation_count == 0 and fast.level_mismatches == 0 and fast.levels_compared == 999 * 20
        assert fast.quirks["pre_window_order"] == 9
    if name == "AMZN" and with_orderbook:
        assert fast.level_mismatches > 0 and fast.quirks["scrolled_in_volume_added"] > 0


@pytest.mark.parametrize("name", ["AAPL", "AMZN"])
def test_samples_with_resync_give_the_python_report(samples, name):
    messages, rows = samples[name]
    fast = replay(messages, orderbook=rows, engine="numba", resync=True)
    assert_same_report(fast, replay(messages, orderbook=rows, resync=True))
    if name == "AAPL":
        assert fast.violation_count == 0 and fast.level_mismatches == 0 and "resynced_rows" not in fast.quirks
    else:
        assert fast.violations == {"unknown_id": 2537, "size_exceeds": 471, "not_fifo_head": 138, "size_mismatch": 1}
        assert fast.row_mismatches == fast.quirks["resynced_rows"] == 3147


def test_resync_realigns_the_book_after_a_refused_message():
    stream = [
        LobsterMessage(1.0, 1, 1, 100, 5000, 1),
        LobsterMessage(2.0, 3, 99, 100, 5000, 1),  # unknown_id: the bid at 5000 stays in the book
        LobsterMessage(3.0, 1, 2, 50, 5000, -1),  # crosses the stale bid unless the book is realigned
        LobsterMessage(4.0, 1, 3, 10, 5001, -1),
        LobsterMessage(5.0, 4, 88, 30, 5000, -1),  # takes 30 shares the file showed and the stream never did
    ]
    pad = (9999999999, 0, -9999999999, 0)
    rows = [(pad[0], 0, 5000, 100), pad, (5000, 50, *pad[2:]), (5000, 80, *pad[2:]), (5000, 50, *pad[2:])]
    drifting, _ = fast_rows(stream, rows, depth=1)
    assert drifting.codes == [None, "unknown_id", "crossing_limit", None, "unknown_id"]
    fast, books = fast_rows(stream, rows, depth=1, resync=True)
    assert fast.codes == [None, "unknown_id", None, None, None] and fast.row_mismatches == 2
    assert books == rows  # rows recorded after a mismatching message show the realigned book
    slow, slow_books = python_rows(stream, rows, depth=1, resync=True)
    assert_same_report(fast, slow)
    assert slow_books == books
    assert list(fast.quirks) == [
        "initial_anonymous_volume",
        "resynced_rows",
        "resync_volume_removed",
        "resync_volume_added",
        "pre_window_order",
    ]


def test_resync_needs_an_orderbook():
    stream = [LobsterMessage(1.0, 1, 1, 5, 100, 1)]
    with pytest.raises(ValueError, match="resync"):
        replay(stream, engine="numba", resync=True)
    with pytest.raises(ValueError, match="resync"):
        fast_replay.replay_strict_fast(stream, resync=True)


def test_aapl_book_matches_after_every_message(samples):
    messages, rows = samples["AAPL"]
    slow, slow_rows = python_rows(messages, rows, depth=10)
    fast, rows_after = fast_rows(messages, rows, depth=10)
    assert rows_after == slow_rows == rows  # strict AAPL reproduces the orderbook file exactly
    assert_same_report(fast, slow)


def test_replay_dispatches_to_the_numba_engine(samples):
    messages, rows = samples["AAPL"]
    report = replay(messages[:300], orderbook=rows[:300], engine="numba")
    assert_same_report(report, replay(messages[:300], orderbook=rows[:300]))
    with pytest.raises(ValueError, match="mode='strict'"):
        replay(messages, mode="lenient", engine="numba")
    with pytest.raises(ValueError, match="hooks"):
        replay(messages, engine="numba", after_message=lambda index, book: None)
    with pytest.raises(ValueError, match="engine"):
        replay(messages, engine="cuda")  # type: ignore[arg-type]
    with pytest.raises(ValueError, match="row for row"):
        replay(messages, orderbook=rows[:10], engine="numba")


def test_numba_engine_without_numba_names_the_install(monkeypatch):
    monkeypatch.setattr(fast_replay, "NUMBA_AVAILABLE", False)
    with pytest.raises(ImportError, match="pip install numba"):
        replay([LobsterMessage(1.0, 1, 1, 5, 100, 1)], engine="numba")


def test_refused_messages_leave_the_book_unchanged():
    stream = [
        LobsterMessage(1.0, 1, 7, 100, 5000, 1),
        LobsterMessage(1.0, 1, 8, 30, 5000, 1),
        LobsterMessage(2.0, 1, 9, 50, 5000, -1),  # crossing_limit
        LobsterMessage(2.0, 9, 7, 1, 5000, 1),  # bad_type
        LobsterMessage(0.5, 3, 7, 100, 5000, 1),  # time_backwards
        LobsterMessage(2.0, 4, 8, 10, 5000, 1),  # not_fifo_head
        LobsterMessage(2.0, 3, 7, 99, 5000, 1),  # size_mismatch
        LobsterMessage(2.0, 2, 7, 100, 5000, 1),  # size_exceeds
    ]
    report, rows = fast_rows(stream, depth=2)
    assert report.codes == [
        None,
        None,
        "crossing_limit",
        "bad_type",
        "time_backwards",
        "not_fifo_head",
        "size_mismatch",
        "size_exceeds",
    ]
    assert rows[2:] == [(9999999999, 0, 5000, 130, 9999999999, 0, -9999999999, 0)] * 6


def test_input_the_arrays_cannot_hold_goes_to_the_python_engine():
    stream = [
        LobsterMessage(1.0, 1, 7, 100, 5000, 1),
        LobsterMessage(2.0, 1, 8, 10, 5000.5, 1),  # type: ignore[arg-type]
        LobsterMessage(None, 1, 9, 10, 4000, 1),  # type: ignore[arg-type]
        LobsterMessage(3.0, 1, 2**70, 10, 4000, 1),
    ]
    report, rows = fast_rows(stream, depth=3)
    slow, slow_rows = python_rows(stream, depth=3)
    assert_same_report(report, slow)
    assert rows == slow_rows
    assert report.codes[2] == "bad_type"


# Random streams, as in test_replay: mostly refused messages, every field value allowed.
ids = st.integers(min_value=-2, max_value=12)
random_messages = st.builds(
    LobsterMessage,
    time=st.floats(min_value=0, max_value=10) | st.just(float("nan")),
    type=st.integers(min_value=0, max_value=8),
    order_id=ids,
    size=st.integers(min_value=-3, max_value=30),
    price=st.integers(min_value=95, max_value=105),
    direction=st.sampled_from([-1, 1, 1, -1, 0]),
)


def _half_sorted(stream):
    half = len(stream) // 2
    return sorted(stream[:half], key=lambda m: m.time if m.time == m.time else 0) + stream[half:]


@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(stream=st.lists(random_messages, max_size=80), in_order=st.booleans())
def test_random_streams_give_the_python_codes_and_books(stream, in_order):
    stream = sorted(stream, key=lambda m: m.time if m.time == m.time else 0) if in_order else _half_sorted(stream)
    fast, rows = fast_rows(stream)
    slow, slow_rows = python_rows(stream)
    assert_same_report(fast, slow)
    assert rows == slow_rows
    final = fast_replay.replay_strict_fast_with_rows(stream, levels=10)[1]
    assert tuple(final.tolist()) == (slow_rows[-1][:40] if stream else LimitOrderBook().snapshot(10))
    for index, code in enumerate(fast.codes):
        if code is not None:  # a refused message changes nothing
            assert rows[index] == (rows[index - 1] if index else LimitOrderBook().snapshot(DEPTH))


@st.composite
def valid_streams(draw, max_size=90):
    """Mostly valid LOBSTER streams, built against a Python book: submits, and cancels, deletes and executions of
    resting orders with their true side, price and size (executions at the best queue's head)."""
    replayer = Replayer()
    book = replayer.book
    stream = []
    next_id = 1
    for step in range(draw(st.integers(min_value=0, max_value=max_size))):
        kind = draw(st.sampled_from([1, 1, 1, 1, 2, 3, 3, 4, 4, 5]))
        resting = sorted(book.orders.values(), key=lambda order: order.order_id)
        time = float(step)
        if kind == 1 or not resting:
            side = draw(st.sampled_from([1, -1]))
            best = book.best_price(-side)
            price = draw(st.integers(min_value=95, max_value=105))
            if best is not None and (price >= best if side == 1 else price <= best):
                price = best - side * draw(st.integers(min_value=1, max_value=3))
            message = LobsterMessage(time, 1, next_id, draw(st.integers(min_value=1, max_value=30)), price, side)
            next_id += 1
        else:
            order = resting[draw(st.integers(min_value=0, max_value=len(resting) - 1))]
            if kind == 4:
                level = book.levels[order.side][book.best_price(order.side)]
                order = next(iter(level.queue.values()))
            size = {2: max(order.size - 1, 1), 3: order.size, 4: min(order.size, 5), 5: 1}[kind]
            message = LobsterMessage(time, kind, order.order_id, size, order.price, order.side)
        stream.append(message)
        replayer.step(message)
    return stream


@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large])
@given(
    source=valid_streams(),
    cut=st.integers(min_value=0, max_value=9),
    levels=st.integers(min_value=1, max_value=3),
    noise=st.lists(st.tuples(st.integers(min_value=0, max_value=90), random_messages), max_size=6),
    row_noise=st.lists(
        st.tuples(st.integers(min_value=0, max_value=90), st.integers(0, 11), st.integers(90, 110)), max_size=4
    ),
    with_orderbook=st.booleans(),
)
def test_streams_against_an_orderbook_give_the_python_report(source, cut, levels, noise, row_noise, with_orderbook):
    messages, orderbook = _window(source, cut, levels, noise, row_noise)
    fast, fast_book = fast_rows(messages, orderbook if with_orderbook else None)
    slow, slow_book = python_rows(messages, orderbook if with_orderbook else None)
    assert_same_report(fast, slow)
    assert fast_book == slow_book


@settings(max_examples=100, deadline=None, suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large])
@given(
    source=valid_streams(),
    cut=st.integers(min_value=0, max_value=9),
    levels=st.integers(min_value=1, max_value=3),
    noise=st.lists(st.tuples(st.integers(min_value=0, max_value=90), random_messages), max_size=6),
    row_noise=st.lists(
        st.tuples(st.integers(min_value=0, max_value=90), st.integers(0, 11), st.integers(90, 110)), max_size=4
    ),
)
def test_streams_with_resync_give_the_python_report(source, cut, levels, noise, row_noise):
    # Refused messages and rows that disagree with the stream (duplicate, unsorted or crossed prices) get resynced.
    messages, orderbook = _window(source, cut, levels, noise, row_noise)
    fast, fast_book = fast_rows(messages, orderbook, resync=True)
    slow, slow_book = python_rows(messages, orderbook, resync=True)
    assert_same_report(fast, slow)
    assert fast_book == slow_book
    assert fast.quirks["resynced_rows"] == fast.row_mismatches
    event("resynced" if fast.row_mismatches else "in sync")
    event("resync added volume" if fast.quirks["resync_volume_added"] else "resync added nothing")


def _window(source, cut, levels, noise, row_noise):
    # The orderbook comes from replaying the whole source; the window starts `cut` tenths in, so orders resting
    # before it are unknown ids only pre-window volume can serve, and a shallow orderbook makes levels scroll in/out.
    _, rows = python_rows(source, depth=levels)
    cut = len(source) * cut // 10
    messages, window = list(source[cut:]), [list(row) for row in rows[cut:]]
    for position, message in noise:  # refused or misplaced messages
        if messages:
            messages[position % len(messages)] = message._replace(time=messages[position % len(messages)].time)
    for position, column, value in row_noise:  # an orderbook that disagrees with the stream
        if window:
            window[position % len(window)][column % (4 * levels)] = value
    return messages, [tuple(row) for row in window]
