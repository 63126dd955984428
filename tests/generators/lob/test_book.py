"""The L3 book: price-time priority, and refusals that leave the book unchanged."""

import pytest

from synth.validators.lob.book import BUY, SELL, BookError, LimitOrderBook


def _book() -> LimitOrderBook:
    book = LimitOrderBook()
    book.submit(1, side=BUY, price=100, size=5)
    book.submit(2, side=BUY, price=100, size=7)
    book.submit(3, side=BUY, price=99, size=4)
    book.submit(4, side=SELL, price=102, size=3)
    return book


def test_snapshot_lists_best_levels_with_dummy_padding():
    assert _book().snapshot(3) == (102, 3, 100, 12, 9999999999, 0, 99, 4, 9999999999, 0, -9999999999, 0)


def test_partial_cancel_keeps_queue_position():
    book = _book()
    book.cancel(1, side=BUY, price=100, size=2)
    assert list(book.levels[BUY][100].queue) == [1, 2]
    book.execute(1, side=BUY, price=100, size=3)
    assert list(book.levels[BUY][100].queue) == [2]
    assert book.snapshot(1) == (102, 3, 100, 7)


def test_execution_must_hit_the_queue_head_at_the_best_price():
    book = _book()
    with pytest.raises(BookError) as caught:
        book.execute(2, side=BUY, price=100, size=1)
    assert caught.value.reason == "not_fifo_head"
    with pytest.raises(BookError) as caught:
        book.execute(3, side=BUY, price=99, size=1)
    assert caught.value.reason == "not_at_best"


def test_anonymous_volume_ahead_may_be_skipped_only_when_allowed():
    book = _book()
    book.add_anonymous(BUY, 100, 10)
    with pytest.raises(BookError, match="not_fifo_head"):
        book.execute(1, side=BUY, price=100, size=1)
    book.execute(1, side=BUY, price=100, size=1, anonymous_may_lead=True)
    book.consume_anonymous(BUY, 100, 4, at_best=True)
    assert book.anonymous_volume(BUY, 100) == 6
    assert book.invariant_problems() == []


@pytest.mark.parametrize(
    ("operation", "reason"),
    [
        (lambda b: b.submit(1, side=BUY, price=98, size=1), "duplicate_id"),
        (lambda b: b.submit(9, side=BUY, price=102, size=1), "crossing_limit"),
        (lambda b: b.submit(9, side=SELL, price=100, size=1), "crossing_limit"),
        (lambda b: b.submit(9, side=BUY, price=98, size=0), "nonpositive_size"),
        (lambda b: b.submit(9, side=0, price=98, size=1), "bad_direction"),
        (lambda b: b.submit(-9, side=BUY, price=98, size=1), "bad_id"),
        (lambda b: b.delete(9, side=BUY, price=100, size=5), "unknown_id"),
        (lambda b: b.delete(1, side=SELL, price=100, size=5), "side_mismatch"),
        (lambda b: b.delete(1, side=BUY, price=101, size=5), "price_mismatch"),
        (lambda b: b.delete(1, side=BUY, price=100, size=6), "size_exceeds"),
        (lambda b: b.delete(1, side=BUY, price=100, size=4), "size_mismatch"),
        (lambda b: b.cancel(1, side=BUY, price=100, size=5), "size_exceeds"),
        (lambda b: b.cancel(1, side=BUY, price=100, size=-1), "nonpositive_size"),
        (lambda b: b.execute(1, side=BUY, price=100, size=6), "size_exceeds"),
        (lambda b: b.consume_anonymous(BUY, 100, 1), "unknown_id"),
    ],
)
def test_refusals_name_the_reason_and_change_nothing(operation, reason):
    book = _book()
    before = (book.snapshot(5), {i: (o.side, o.price, o.size) for i, o in book.orders.items()})
    with pytest.raises(BookError) as caught:
        operation(book)
    assert caught.value.reason == reason
    assert (book.snapshot(5), {i: (o.side, o.price, o.size) for i, o in book.orders.items()}) == before


def test_delete_and_full_execution_empty_the_level():
    book = _book()
    book.delete(4, side=SELL, price=102, size=3)
    book.execute(1, side=BUY, price=100, size=5)
    book.execute(2, side=BUY, price=100, size=7)
    assert book.best_ask() is None
    assert book.best_bid() == 99
    assert book.invariant_problems() == []


def test_trim_level_takes_anonymous_then_newest():
    book = _book()
    book.add_anonymous(BUY, 100, 3)
    assert book.trim_level(BUY, 100, 6) == 9
    assert [(i, o.size) for i, o in book.levels[BUY][100].queue.items()] == [(1, 5), (2, 1)]
