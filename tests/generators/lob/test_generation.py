"""ReLOBGen, the rejection baseline and the Santa Fe baseline: masks, pointer, rollouts and their strict replay."""

import math
import re
from pathlib import Path

import numpy as np
import pytest

from synth.core.errors import InputError
from synth.generators.lob import SAMPLE_DIR, LimitOrderBook, read_messages, read_orderbook
from synth.generators.lob.correction import CorrectionSampler
from synth.generators.lob.fields import Categorical, QuantileTable, context_index, spread_bucket
from synth.generators.lob.fit import fit_lob_model
from synth.generators.lob.generator import rollout_row
from synth.generators.lob.history import real_windows
from synth.generators.lob.model import DEFAULT_MODEL, LobModel, load_model
from synth.generators.lob.pointer import FEATURES, PointerModel, candidates, fit_conditional_logit
from synth.generators.lob.rollout import make_sampler, run_rollout
from synth.generators.lob.samplers import FreeFormMessage
from synth.generators.lob.state import InitialOrder, MarketState
from synth.validators.lob import replay_rollout
from synth.validators.lob.book import BUY, SELL

AMZN = SAMPLE_DIR / "AMZN_2012-06-21_34200000_57600000"


@pytest.fixture(scope="module")
def day():
    return read_messages(f"{AMZN}_message_1.csv"), read_orderbook(f"{AMZN}_orderbook_1.csv")


@pytest.fixture(scope="module")
def model() -> LobModel:
    return load_model()


@pytest.fixture(scope="module")
def windows(day):
    return real_windows(*day, starts=[36_000, 44_000, 52_000], horizon=300)


def test_masked_categorical_never_exceeds_its_bound_and_keeps_the_shape():
    sizes = Categorical.fit([100] * 60 + [200] * 30 + [5] * 10, low=1, high=9999)
    draws = [sizes.sample(u) for u in np.linspace(0, 1, 2000, endpoint=False)]
    assert 0.55 < draws.count(100) / len(draws) < 0.62  # the smoothing takes a little mass
    bounded = [sizes.sample(u, at_most=150) for u in np.linspace(0, 1, 500, endpoint=False)]
    assert max(bounded) <= 150 and bounded.count(200) == 0
    assert set(bounded) >= {5, 100}
    assert {sizes.sample(u, at_most=3) for u in np.linspace(0, 1, 50, endpoint=False)} <= {1, 2, 3}
    assert sizes.sample(0.5, at_most=0) is None


def test_quantile_table_reproduces_the_empirical_distribution():
    values = np.random.default_rng(1).exponential(2.0, size=5000)
    table = QuantileTable.fit(values)
    draws = np.array([table.sample(u) for u in np.random.default_rng(2).random(5000)])
    assert abs(np.median(draws) - np.median(values)) < 0.1
    assert draws.min() >= values.min() and draws.max() <= values.max()


def test_context_buckets():
    assert spread_bucket(None) == 8 and spread_bucket(1) == 0 and spread_bucket(13) == 5
    assert context_index(13, 0.9) != context_index(13, -0.9) != context_index(1, -0.9)


def test_conditional_logit_recovers_the_weights_that_generated_the_choices():
    rng = np.random.default_rng(0)
    truth = np.array([-1.5, 2.0, -0.5, -0.3, 0.0, 0.4, -0.8, 1.0])
    choices = []
    for _ in range(3000):
        features = rng.normal(size=(int(rng.integers(2, 12)), len(FEATURES)))
        p = np.exp(features @ truth)
        choices.append((features, int(rng.choice(len(p), p=p / p.sum()))))
    fitted, stats = fit_conditional_logit(choices, l2=0.0)
    assert np.max(np.abs(fitted - truth)) < 0.25
    assert stats["mean_loglik"] > stats["uniform_loglik"]


def _book():
    book = LimitOrderBook()
    for order_id, side, price, size in [
        (1, BUY, 9900, 50),
        (2, BUY, 9900, 10),
        (3, BUY, 9800, 5),
        (4, SELL, 10100, 7),
        (5, BUY, 9700, 1),
        (6, SELL, 10300, 40),
    ]:
        book.submit(order_id, side=side, price=price, size=size)
    return book


def test_pointer_fast_draw_matches_the_feature_matrix_softmax(model):
    book = _book()
    submitted = {1: 0.0, 2: 3.0, 3: 1.0, 5: 9.0}
    pointer = PointerModel(weights=model.pointer.weights, levels=10)
    for min_size in (1, 2):
        choice = candidates(book, BUY, time=10.0, submitted=submitted, initial={3}, min_size=min_size)
        assert choice.ids == ([1, 2, 3, 5] if min_size == 1 else [1, 2, 3])
        for u in np.linspace(0, 1, 41, endpoint=False):
            fast = pointer.draw_from_book(
                3, book, BUY, time=10.0, submitted=submitted, initial={3}, u=float(u), min_size=min_size
            )
            assert fast == pointer.choose(3, choice, float(u))
    empty = LimitOrderBook()
    assert pointer.draw_from_book(3, empty, SELL, time=0.0, submitted={}, initial=set(), u=0.3) is None


def test_real_windows_capture_a_consistent_book(day, windows):
    rows = day[1]
    for window in windows:
        assert window.initial_row == rows[window.start - 1]
        assert len(window.messages) == 300 and all(m.type in (1, 2, 3, 4) for m in window.messages)
        ids = [order.order_id for order in window.orders]
        assert len(set(ids)) == len(ids) and min(ids) > 0
        best_ask = min(o.price for o in window.orders if o.side == SELL)
        best_bid = max(o.price for o in window.orders if o.side == BUY)
        assert (best_ask, best_bid) == (window.initial_row[0], window.initial_row[2])
        assert any(order.unseen for order in window.orders) and not all(order.unseen for order in window.orders)


@pytest.mark.parametrize("method", ["relobgen", "rejection", "correction", "zero-intelligence"])
def test_rollouts_replay_strictly_from_their_own_initial_book(method, model, windows):
    for index, window in enumerate(windows):
        sampler = make_sampler(method, model)
        rollout = run_rollout(
            sampler, window.orders, time=window.time, horizon=300, levels=10, rng=np.random.default_rng(index)
        )
        assert len(rollout.messages) == 300
        row = rollout_row(window, rollout, method=method, source="AMZN", replicate=0, levels=10)
        result = replay_rollout(row)
        assert result.replayable, result.reasons()
        assert all(code is None for code in result.codes)
        if method == "relobgen":
            assert rollout.attempts == 300 and not rollout.rejections
        if method == "rejection":
            assert rollout.attempts > 300 and sum(rollout.rejections.values()) == rollout.attempts - 300
            assert not rollout.corrections
        if method == "correction":  # repairs most messages it would otherwise refuse, discards the rest
            assert sum(rollout.rejections.values()) == rollout.attempts - 300
            assert set(rollout.rejections) <= {"no_reference", "marketable_discarded"}
            assert sum(rollout.corrections.values()) > 0
            assert row["corrections"] == sum(rollout.corrections.values())
        times = [m.time for m in rollout.messages]
        assert times == sorted(times) and times[0] >= window.time


def test_relobgen_uses_every_event_type_and_references_resting_orders(model, windows):
    window = windows[1]
    rollout = run_rollout(
        make_sampler("relobgen", model),
        window.orders,
        time=window.time,
        horizon=300,
        levels=10,
        rng=np.random.default_rng(5),
    )
    types = {m.type for m in rollout.messages}
    assert {1, 3, 4} <= types
    initial_ids = {o.order_id for o in window.orders}
    referenced = {m.order_id for m in rollout.messages if m.type in (2, 3, 4)}
    assert referenced & initial_ids  # the pointer also picks orders resting before the window
    assert referenced - initial_ids  # ... and orders the rollout submitted


def test_rollouts_are_deterministic_per_seed(model, windows):
    window = windows[0]

    def draw(seed):
        return run_rollout(
            make_sampler("rejection", model),
            window.orders,
            time=window.time,
            horizon=100,
            levels=10,
            rng=np.random.default_rng(seed),
        )

    assert draw(3) == draw(3)
    assert draw(3).messages != draw(4).messages


def test_verifier_reports_the_message_and_code_of_a_tampered_rollout(model, windows):
    window = windows[0]
    rollout = run_rollout(
        make_sampler("relobgen", model),
        window.orders,
        time=window.time,
        horizon=50,
        levels=10,
        rng=np.random.default_rng(0),
    )
    row = rollout_row(window, rollout, method="relobgen", source="AMZN", replicate=0, levels=10)
    index = next(i for i, t in enumerate(row["type"]) if t in (2, 3))
    tampered = {**row, "order_id": list(row["order_id"])}
    tampered["order_id"][index] = 10**12
    result = replay_rollout(tampered)
    assert not result.replayable
    assert result.codes[index] == "unknown_id"
    assert f"unknown_id: message {index + 1}" in result.reasons()
    shifted = {**row, "book": [list(b) for b in row["book"]]}
    shifted["book"][7][1] += 1
    assert replay_rollout(shifted).mismatched_rows == (7,)
    assert replay_rollout(shifted).reasons() == ["book_mismatch: book row 8 differs from the replayed book"]
    short = {**row, "book": row["book"][:-1]}
    assert replay_rollout(short).reasons() == ["book_row_count: 49 book rows for 50 messages"]
    doubled = {**row, "initial_order_id": [row["initial_order_id"][0]] * len(row["initial_order_id"])}
    assert replay_rollout(doubled).reasons()[0].startswith("initial_book: duplicate_id: order ")


def test_fit_on_a_prefix_beats_the_uniform_pointer(day, tmp_path):
    messages, rows = day
    fitted = fit_lob_model(messages[:8000], rows[:8000], train_fraction=1.0)
    assert fitted.training["replay_level_mismatches"] == 0
    stats = fitted.training["pointer"]["fit"]["3"]
    assert stats["choices"] > 500 and stats["mean_loglik"] > stats["uniform_loglik"] + 1.0
    assert 0.5 < fitted.fields.full[3] <= 1.0
    assert math.isclose(sum(map(sum, fitted.fields.event_counts)), fitted.training["generated_type_messages"])
    path = fitted.save(tmp_path)
    again = load_model(path)
    assert again.to_dict() == fitted.to_dict()


def test_model_loading_errors_are_one_line(tmp_path):
    with pytest.raises(InputError, match="LOB model not found"):
        load_model(tmp_path / "none.json")
    bad = tmp_path / "lob_model.json"
    bad.write_text('{"format_version": 99}')
    with pytest.raises(InputError, match="format_version"):
        load_model(tmp_path)
    assert DEFAULT_MODEL.is_file()


def test_attention_pointer_learns_the_choices_and_drives_replayable_rollouts(model, windows):
    pytest.importorskip("torch")
    from synth.generators.lob.model import LobModel
    from synth.generators.lob.neural_pointer import AttentionPointer, fit_attention_pointer
    from synth.generators.lob.pointer import Choice, context_vector, evaluate_pointer

    rng = np.random.default_rng(0)
    truth = np.array(model.pointer.weights[3])
    choices = []
    for _ in range(1500):
        features = rng.normal(size=(int(rng.integers(2, 10)), len(FEATURES)))
        p = np.exp(features @ truth)
        choices.append(Choice(features, int(rng.choice(len(p), p=p / p.sum())), context_vector(3, 13, 0.0)))
    pointer = fit_attention_pointer(choices[:1000], epochs=40)
    held_out = evaluate_pointer(pointer, choices[1000:])
    oracle = evaluate_pointer(PointerModel(weights={2: tuple(truth), 3: tuple(truth)}), choices[1000:])
    assert held_out["mean_loglik"] > held_out["uniform_loglik"] + 0.5
    assert held_out["mean_loglik"] > oracle["mean_loglik"] - 0.2
    again = AttentionPointer.from_dict(pointer.to_dict())
    assert np.allclose(again.choice_probabilities(choices[0]), pointer.choice_probabilities(choices[0]))
    attention_model = LobModel(model.fields, pointer, model.zero_intelligence)
    window = windows[2]
    rollout = run_rollout(
        make_sampler("relobgen", attention_model),
        window.orders,
        time=window.time,
        horizon=300,
        levels=10,
        rng=np.random.default_rng(1),
    )
    row = rollout_row(window, rollout, method="relobgen", source="AMZN", replicate=0, levels=10)
    assert replay_rollout(row).replayable


def _free_form(event, side, price, size, reference_size=100):
    return FreeFormMessage(2.0, event, side, price, size, reference_size, 1.0)


def test_correction_rules_repair_as_lobs5_does(model):
    # Bids: 9900 holds order 1 (100, head) then 2 (50); asks: 10100 holds order 3 (100).
    orders = [
        InitialOrder(1, BUY, 9900, 100, 0.5),
        InitialOrder(2, BUY, 9900, 50, 0.9),
        InitialOrder(3, SELL, 10100, 100, 0.5),
    ]
    sampler = CorrectionSampler(model)
    state = MarketState(orders, time=1.0)
    repair = sampler._repair
    # A buy at or through the best ask is marketable: discarded.
    assert repair(state, _free_form(1, BUY, 10100, 10)) is None
    assert sampler.rejections["marketable_discarded"] == 1
    # An execution drawn one level deep moves to the best price and the head of its queue, its size clipped.
    executed = repair(state, _free_form(4, BUY, 9800, 500))
    assert (executed.type, executed.order_id, executed.price, executed.size) == (4, 1, 9900, 100)
    assert sampler.corrections["execution_moved_to_best"] == sampler.corrections["execution_size_clipped"] == 1
    # A partial cancel of the whole remainder becomes a delete; a short delete becomes a partial cancel.
    cancel = repair(state, _free_form(2, BUY, 9900, 60, reference_size=50))
    assert (cancel.type, cancel.order_id, cancel.size) == (3, 2, 50)
    delete = repair(state, _free_form(3, BUY, 9900, 30, reference_size=100))
    assert (delete.type, delete.order_id, delete.size) == (2, 1, 30)
    clipped = repair(state, _free_form(3, SELL, 10100, 400, reference_size=100))
    assert (clipped.type, clipped.order_id, clipped.size) == (3, 3, 100)
    # Nothing rests at 9700: no reference to match, discarded.
    assert repair(state, _free_form(3, BUY, 9700, 10)) is None
    assert sampler.rejections["no_reference"] == 1
    for message in (executed, cancel, clipped):
        assert state.apply(message) is None  # every repaired message is strictly valid


def test_a_rollout_that_gives_up_is_rejected_with_a_code_and_the_count_as_detail():
    from synth.core.steps import ShardContext
    from synth.generators.lob.generator import LobRolloutGenerator

    generator = LobRolloutGenerator(
        name="rejection",
        method="rejection",
        messages_path=Path(f"{AMZN}_message_1.csv"),
        orderbook_path=Path(f"{AMZN}_orderbook_1.csv"),
        windows=2,
        horizon=200,
        max_attempts=1,
    )
    ctx = ShardContext(seed=0, shard_index=0, num_shards=1, config_hash="x")
    rejections = [r for batch in generator.generate(ctx) for r in batch.rejections]
    assert rejections and {r.reason for r in rejections} == {"gave_up"}
    for rejection in rejections:
        assert re.fullmatch(r"rejection gave up after \d+ of 200 messages", rejection.detail), rejection.detail
