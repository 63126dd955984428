"""The strict replayer: the shipped samples, and random message streams that must never corrupt the book."""

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from synth.generators.lob import SAMPLE_DIR, LobsterMessage, Replayer, read_messages, read_orderbook, replay
from synth.validators.lob.lobster import EMPTY_ASK_PRICE, EMPTY_BID_PRICE

AAPL = SAMPLE_DIR / "AAPL_2012-06-21_34200000_57600000"
AMZN = SAMPLE_DIR / "AMZN_2012-06-21_34200000_57600000"


@pytest.fixture(scope="module")
def aapl():
    return read_messages(f"{AAPL}_message_10.csv"), read_orderbook(f"{AAPL}_orderbook_10.csv")


@pytest.fixture(scope="module")
def amzn():
    return read_messages(f"{AMZN}_message_1.csv"), read_orderbook(f"{AMZN}_orderbook_1.csv")


def test_aapl_replays_strictly_with_no_violation_and_no_mismatch(aapl):
    report = replay(aapl[0], orderbook=aapl[1], mode="strict")
    assert report.violation_count == 0
    assert report.level_mismatches == 0 and report.levels_compared == 999 * 20
    assert report.quirks["pre_window_order"] == 9  # ids resting before the window, served from shown volume


def test_strict_unknown_id_needs_volume_the_orderbook_showed(aapl):
    # Without the orderbook file nothing is known about orders resting before the window.
    report = replay(aapl[0], mode="strict")
    assert report.violations["unknown_id"] == 9


def test_aapl_lenient_replays_with_no_violation_and_no_mismatch(aapl):
    report = replay(aapl[0], orderbook=aapl[1], mode="lenient")
    assert report.violation_count == 0
    assert report.level_mismatches == 0
    assert report.levels_compared == 999 * 20
    assert report.quirks["unknown_id_took_anonymous"] == 9


def test_amzn_prefix_strict_reports_unknown_ids(amzn):
    messages, rows = amzn[0][:5000], amzn[1][:5000]
    report = replay(messages, orderbook=rows, mode="strict")
    assert report.messages == 5000
    assert 0.05 < report.violations["unknown_id"] / report.messages < 0.6
    assert report.codes.count(None) == report.applied


def test_amzn_full_day_lenient_has_no_violation_and_no_level_mismatch(amzn):
    report = replay(amzn[0], orderbook=amzn[1], mode="lenient")
    assert report.messages == 57_515
    assert report.violation_count == 0
    assert report.level_mismatches == 0 and report.levels_compared == 57_515 * 2
    # The residual quirks are reported, not hidden: ids never submitted, and misattributed level volume.
    assert report.quirks["unknown_id_took_anonymous"] + report.quirks["unknown_id_took_tracked_volume"] > 5000
    assert report.quirks["reattributed_not_fifo_head"] > 0


def test_amzn_full_day_strict_resync_reports_each_quirk_once(amzn):
    report = replay(amzn[0], orderbook=amzn[1], mode="strict", resync=True)
    # Without resync a refused message leaves the book off the file and later valid messages are refused too
    # (35,672 violations, 19,495 of them crossing_limit); realigned, only the sources remain.
    assert report.violations == {"unknown_id": 2537, "size_exceeds": 471, "not_fifo_head": 138, "size_mismatch": 1}
    assert report.violation_count == report.row_mismatches == report.level_mismatches == 3147
    assert report.quirks["resynced_rows"] == 3147
    assert report.quirks["resync_volume_removed"] > 0


def test_aapl_strict_resync_changes_nothing(aapl):
    report = replay(aapl[0], orderbook=aapl[1], mode="strict", resync=True)
    assert report.violation_count == 0 and report.level_mismatches == 0
    assert "resynced_rows" not in report.quirks
    assert report.quirks == replay(aapl[0], orderbook=aapl[1], mode="strict").quirks


# A level-1 file that disagrees with its stream twice: a bid leaves under an id the stream never showed, and the
# ask queue at 5000 holds 30 shares the stream never submitted (taken later by another unseen id).
DRIFT = [
    LobsterMessage(1.0, 1, 1, 100, 5000, 1),
    LobsterMessage(2.0, 3, 99, 100, 5000, 1),  # unknown_id: refused, so the bid at 5000 stays in the book
    LobsterMessage(3.0, 1, 2, 50, 5000, -1),  # valid per the file; crosses the stale bid
    LobsterMessage(4.0, 1, 3, 10, 5001, -1),
    LobsterMessage(5.0, 4, 88, 30, 5000, -1),  # unseen volume the file showed at 5000
]
DRIFT_ROWS = [
    (EMPTY_ASK_PRICE, 0, 5000, 100),
    (EMPTY_ASK_PRICE, 0, EMPTY_BID_PRICE, 0),
    (5000, 50, EMPTY_BID_PRICE, 0),
    (5000, 80, EMPTY_BID_PRICE, 0),
    (5000, 50, EMPTY_BID_PRICE, 0),
]


@pytest.mark.parametrize("mode", ["strict", "lenient"])
def test_resync_realigns_the_book_after_a_refused_message(mode):
    drifting = replay(DRIFT, orderbook=DRIFT_ROWS, mode="strict")
    assert drifting.codes == [None, "unknown_id", "crossing_limit", None, "unknown_id"]
    assert drifting.row_mismatches == 4
    books = []
    report = replay(
        DRIFT,
        orderbook=DRIFT_ROWS,
        mode=mode,
        resync=True,
        after_message=lambda _, book: books.append(book.snapshot(1)),
    )
    assert books == DRIFT_ROWS  # after_message sees the realigned book
    if mode == "lenient":  # lenient takes the unknown ids; only the unseen 30 shares make row 4 differ
        assert report.violation_count == 0 and report.row_mismatches == 1 and report.quirks["resynced_rows"] == 1
        assert replay(DRIFT, orderbook=DRIFT_ROWS, mode=mode).row_mismatches == 1
        return
    assert report.codes == [None, "unknown_id", None, None, None]
    assert report.row_mismatches == report.level_mismatches == 2 and report.first_mismatch_row == 2
    assert list(report.quirks.items()) == [
        ("initial_anonymous_volume", 0),
        ("resynced_rows", 2),
        ("resync_volume_removed", 100),
        ("resync_volume_added", 30),
        ("pre_window_order", 1),  # the unseen id 88 took the volume the resync added
    ]


def test_resync_realigns_only_the_levels_in_view():
    replayer = Replayer()
    for order_id, side, price in [(1, -1, 101), (2, -1, 102), (3, -1, 104), (4, 1, 99), (5, 1, 97), (6, 1, 95)]:
        assert replayer.step(LobsterMessage(1.0, 1, order_id, 10, price, side)) is None
    replayer.resync_to((101, 5, 99, 10, 103, 7, 96, 20))  # two levels: the view is asks ≤ 103, bids ≥ 96
    book = replayer.book
    assert book.snapshot(3) == (101, 5, 99, 10, 103, 7, 96, 20, 104, 10, 95, 10)  # 102 and 97 emptied
    assert next(iter(book.levels[1][96].queue)) < 0 and replayer.pre_window[1, 96] == 20
    assert list(replayer.quirks.items()) == [
        ("resynced_rows", 1),
        ("resync_volume_removed", 10 + 5 + 10),
        ("resync_volume_added", 7 + 20),
    ]
    pad = (EMPTY_ASK_PRICE, 0, EMPTY_BID_PRICE, 0)
    replayer.resync_to((100, 1, EMPTY_BID_PRICE, 0, *pad))  # padding at the deepest level: the whole side is in view
    assert book.snapshot(3) == (100, 1, EMPTY_BID_PRICE, 0, *pad, *pad)
    assert book.invariant_problems() == []


def test_resync_needs_an_orderbook():
    with pytest.raises(ValueError, match="resync"):
        replay(DRIFT, resync=True)


def test_lenient_reattributes_level_volume_when_orders_left_out_of_view():
    replayer = Replayer(mode="lenient")
    assert replayer.step(LobsterMessage(1.0, 1, 1, 50, 100, 1)) is None
    assert replayer.step(LobsterMessage(1.0, 1, 2, 50, 100, 1)) is None
    # Order 2 executes although order 1 is ahead, and for more than it holds: order 1 left unseen.
    assert replayer.step(LobsterMessage(2.0, 4, 2, 70, 100, 1)) is None
    assert replayer.book.snapshot(1)[2:] == (100, 30)
    assert 2 not in replayer.book.orders
    # An unknown id takes tracked volume; never more than the level holds.
    assert replayer.step(LobsterMessage(3.0, 3, 99, 40, 100, 1)) == "unknown_id"
    assert replayer.step(LobsterMessage(3.0, 3, 99, 30, 100, 1)) is None
    assert replayer.book.snapshot(1)[2:] == (-9999999999, 0)
    assert replayer.quirks == {"reattributed_size_exceeds": 1, "unknown_id_took_tracked_volume": 1}
    strict = Replayer()
    strict.step(LobsterMessage(1.0, 1, 1, 50, 100, 1))
    strict.step(LobsterMessage(1.0, 1, 2, 50, 100, 1))
    assert strict.step(LobsterMessage(2.0, 4, 2, 70, 100, 1)) == "size_exceeds"
    assert strict.step(LobsterMessage(2.0, 4, 2, 20, 100, 1)) == "not_fifo_head"


def test_violating_messages_are_not_applied():
    replayer = Replayer()
    assert replayer.step(LobsterMessage(1.0, 1, 7, 100, 5000, 1)) is None
    assert replayer.step(LobsterMessage(2.0, 1, 8, 50, 5000, -1)) == "crossing_limit"
    assert replayer.step(LobsterMessage(2.0, 9, 7, 1, 5000, 1)) == "bad_type"
    assert replayer.step(LobsterMessage(0.5, 3, 7, 100, 5000, 1)) == "time_backwards"
    assert replayer.book.snapshot(1) == (9999999999, 0, 5000, 100)


ids = st.integers(min_value=-2, max_value=12)
messages = st.builds(
    LobsterMessage,
    time=st.floats(min_value=0, max_value=10) | st.just(float("nan")),
    type=st.integers(min_value=0, max_value=8),
    order_id=ids,
    size=st.integers(min_value=-3, max_value=30),
    price=st.integers(min_value=95, max_value=105),
    direction=st.sampled_from([-1, 1, 1, -1, 0]),
)


def _fifo(book):
    return {(side, price): list(level.queue) for side in (1, -1) for price, level in book.levels[side].items()}


@settings(max_examples=200, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(stream=st.lists(messages, max_size=80), mode=st.sampled_from(["strict", "lenient"]), seed=st.booleans())
def test_random_streams_never_raise_and_keep_the_invariants(stream, mode, seed):
    replayer = Replayer(mode=mode)
    if seed:
        replayer.book.add_anonymous(1, 96, 10)
        replayer.book.add_anonymous(-1, 104, 10)
    stream = (
        sorted(stream[: len(stream) // 2], key=lambda m: m.time if m.time == m.time else 0) + stream[len(stream) // 2 :]
    )
    for message in stream:
        before = _fifo(replayer.book)
        code = replayer.step(message)
        book = replayer.book
        assert book.invariant_problems() == []
        assert sum(level.volume for side in (1, -1) for level in book.levels[side].values()) == sum(
            order.size for order in book.orders.values()
        )
        after = _fifo(book)
        if code is not None:
            assert after == before
        for key, queue in after.items():
            old = [order_id for order_id in before.get(key, []) if order_id in queue]
            assert queue[: len(old)] == old
