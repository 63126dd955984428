"""Realism scores on hand-built rollouts, and the L1 / W1 distances with their bootstrap intervals."""

import math

import numpy as np
import pytest

from synth.generators.lob.metrics import (
    SCORES,
    RolloutView,
    bin_edges,
    distance,
    message_scores,
    plot_histograms,
    realism_table,
)
from synth.validators.lob.lobster import LobsterMessage

TICK = 100
EMPTY_ASK, EMPTY_BID = 9999999999, -9999999999


def _rollout():
    # Book before: ask 10100 x 50, bid 9900 x 30 (mid 10000).
    initial = (10100, 50, 9900, 30)
    messages = [
        LobsterMessage(1.000, 1, 1, 100, 10000, 1),  # buy at the mid: 0 ticks from mid
        LobsterMessage(1.000, 3, 1, 100, 10000, 1),  # zero gap; deletes it from the best (depth 0)
        LobsterMessage(1.010, 1, 2, 10, 10300, -1),  # sell 3 ticks above the mid: -3 (passive)
        LobsterMessage(1.110, 3, 7, 30, 9900, 1),  # delete the whole bid: depth 0
        LobsterMessage(1.210, 2, 8, 20, 10100, -1),  # partial cancel at the ask
    ]
    books = [
        (10100, 50, 10000, 100),
        (10100, 50, 9900, 30),
        (10100, 50, 9900, 30),
        (10100, 50, EMPTY_BID, 0),
        (10100, 30, EMPTY_BID, 0),
    ]
    return RolloutView(messages, books, initial)


def test_scores_of_a_hand_built_rollout():
    scores = message_scores([_rollout()], tick=TICK)
    assert scores["spread"].tolist() == [1.0, 2.0, 2.0]  # an empty side has no spread
    assert scores["ask_volume_l1"].tolist() == [50, 50, 50, 50, 30]
    assert scores["bid_volume_l1"].tolist() == [100, 30, 30]
    assert scores["imbalance_l1"] == pytest.approx([50 / 150, -20 / 80, -20 / 80, -1.0, -1.0])
    assert scores["log_inter_arrival"] == pytest.approx([-3.0, 1.0, 2.0, 2.0])  # 0 ms clipped to 1 µs
    assert scores["order_size"] == pytest.approx([2.0, 1.0])
    assert scores["limit_price_ticks"].tolist() == [0.0, -3.0]
    # Message 2's previous mid is (10100 + 10000) / 2; message 5 has no previous mid (the bid side is empty).
    assert scores["message_price_ticks"].tolist() == [0.0, -0.5, -3.0, -1.0]
    assert scores["cancel_depth"].tolist() == [0.0, 0.0, 0.0]
    assert set(scores) == set(SCORES)


def test_distance_of_a_sample_to_itself_is_zero():
    sample = np.random.default_rng(0).normal(size=2000)
    result = distance(sample, sample, discrete=False, bootstrap=50)
    assert result["l1"] == 0.0 and result["w1"] == 0.0
    # Independent resampling of both sides makes the bootstrap L1 of identical samples small but positive.
    assert 0.0 < result["l1_ci"][0] <= result["l1_ci"][1] < 0.1
    assert result["n_real"] == result["n_generated"] == 2000


def test_distance_separates_different_distributions():
    rng = np.random.default_rng(1)
    near = distance(rng.normal(size=3000), rng.normal(size=3000), discrete=False, bootstrap=20)
    far = distance(rng.normal(size=3000), rng.normal(loc=6.0, size=3000), discrete=False, bootstrap=20)
    assert near["l1"] < 0.1 and far["l1"] > 0.95
    assert far["w1"] > 10 * near["w1"]
    assert far["l1_ci"][0] <= far["l1"] <= far["l1_ci"][1]


def test_discrete_scores_bin_on_exact_values():
    edges = bin_edges(np.array([1.0, 2.0, 2.0]), np.array([5.0]), discrete=True)
    assert edges.tolist() == [0.5, 1.5, 4.5, 5.5]  # one bin per distinct value
    result = distance(np.array([1.0, 1.0, 2.0, 2.0]), np.array([1.0, 2.0, 2.0, 2.0]), discrete=True, bootstrap=0)
    assert result["l1"] == pytest.approx(0.25)


def test_bootstrap_is_deterministic_per_seed_and_empty_input_gives_nan():
    rng = np.random.default_rng(2)
    a, b = rng.exponential(size=500), rng.exponential(size=400)
    assert distance(a, b, discrete=False, seed=3) == distance(a, b, discrete=False, seed=3)
    assert distance(a, b, discrete=False, seed=3)["l1_ci"] != distance(a, b, discrete=False, seed=4)["l1_ci"]
    empty = distance(a, np.zeros(0), discrete=False)
    assert math.isnan(empty["l1"]) and math.isnan(empty["w1"]) and empty["n_generated"] == 0


def test_realism_table_and_plot(tmp_path):
    real = message_scores([_rollout()], tick=TICK)
    table = realism_table(real, {"copy": real}, bootstrap=5)
    assert table["copy"]["summary"]["mean_l1"] == 0.0
    assert set(table["copy"]["scores"]) == set(SCORES)
    path = plot_histograms(real, {"copy": real}, tmp_path / "plots" / "lob.png")
    assert path.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
