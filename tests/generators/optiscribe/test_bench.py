"""The OptiScribe bench on a tiny instruction: self-played vs default groups, rates, ratios and deciles."""

import json
import shutil
import statistics

import pytest

pytest.importorskip("pyscipopt")
pytest.importorskip("ortools")

from synth.core.errors import ConfigError
from synth.generators.optiscribe.bench import bench_optiscribe, draw_until_landed, median_ratio_interval

TINY = {"max_cut": "a max-cut problem with 13 nodes, density 0.4"}


@pytest.fixture(scope="module")
def report(tmp_path_factory):
    state_dir = tmp_path_factory.mktemp("bench-state")
    result = bench_optiscribe(rounds=2, candidates=3, eval_instances=4, instructions=TINY, state_dir=state_dir)
    return result, state_dir


def test_report_is_json_with_both_groups_and_their_ratios(report):
    result, state_dir = report
    assert json.loads(json.dumps(result)) == result
    family = result["families"]["max_cut"]
    played, default = family["selfplay"], family["default"]
    assert played["instances"] == default["instances"] == 4
    for group in (played, default):
        assert group["feasibility_rate"] == 1.0 and group["instruction_following_rate"] == 1.0
        assert group["crosschecked"] == 4 and group["crosscheck_agreement"] == 1.0
        deciles = list(group["node_deciles"].values())
        assert deciles == sorted(deciles) and deciles[5] == group["median_nodes"]
    assert family["median_nodes_ratio"] == played["median_nodes"] / default["median_nodes"]
    low, high = family["median_nodes_ratio_90ci"]
    assert low <= family["median_nodes_ratio"] <= high
    assert family["default_spec"]["knobs"] == {"weight_low": 1, "weight_high": 10, "negative_fraction": 0.0}
    assert [r["round"] for r in family["training"]["rounds"]] == [0, 1]
    assert json.loads((state_dir / "max_cut.json").read_text())["round"] == 2


def test_a_rerun_resumes_from_the_saved_state_and_gives_the_same_evaluation(report):
    result, state_dir = report
    again = bench_optiscribe(rounds=2, candidates=3, eval_instances=4, instructions=TINY, state_dir=state_dir)
    first, second = result["families"]["max_cut"], again["families"]["max_cut"]
    assert second["training"]["policy"] == first["training"]["policy"]
    assert second["selfplay"]["node_deciles"] == first["selfplay"]["node_deciles"]
    assert second["selfplay_knobs"] == first["selfplay_knobs"]


def test_resuming_to_more_rounds_plays_what_an_uninterrupted_run_plays(report, tmp_path):
    _, state_dir = report
    resumed_dir = tmp_path / "resumed"
    shutil.copytree(state_dir, resumed_dir)
    options = {"candidates": 3, "eval_instances": 4, "instructions": TINY}
    resumed = bench_optiscribe(rounds=3, state_dir=resumed_dir, **options)["families"]["max_cut"]
    straight = bench_optiscribe(rounds=3, state_dir=tmp_path / "straight", **options)["families"]["max_cut"]
    assert resumed["training"]["resumed_from_round"] == 2 and straight["training"]["resumed_from_round"] == 0
    assert [r["round"] for r in resumed["training"]["rounds"]] == [0, 1, 2]
    assert resumed["training"]["rounds"] == straight["training"]["rounds"]
    assert resumed["training"]["policy"] == straight["training"]["policy"]
    assert resumed["selfplay_nodes"] == straight["selfplay_nodes"]


def test_a_state_dir_refuses_other_selfplay_settings_and_keeps_its_state(report, tmp_path):
    _, state_dir = report
    kept = tmp_path / "kept"
    shutil.copytree(state_dir, kept)
    before = (kept / "max_cut.json").read_bytes()
    with pytest.raises(ConfigError, match=r"selfplay-settings.json: .* with selfplay.candidates=3, not 4"):
        bench_optiscribe(rounds=3, candidates=4, eval_instances=4, instructions=TINY, state_dir=kept)
    with pytest.raises(ConfigError, match=r"with seed=0, not 1"):
        bench_optiscribe(rounds=3, candidates=3, eval_instances=4, instructions=TINY, state_dir=kept, seed=1)
    assert (kept / "max_cut.json").read_bytes() == before


def _solves(nodes, feasible=None):
    return [{"nodes": n, "feasible": True if feasible is None else feasible[i]} for i, n in enumerate(nodes)]


def test_the_ratio_interval_resamples_instance_seeds_in_pairs():
    default = [3, 40, 7, 900, 12, 55, 1, 260]
    doubled = median_ratio_interval(_solves([2 * n for n in default]), _solves(default))
    assert doubled == [2.0, 2.0]  # every resample keeps each seed's pair together, so the ratio never moves
    played = [500, 20, 1000, 80, 35, 700, 5, 1000]
    interval = median_ratio_interval(_solves(played), _solves(default))
    point = statistics.median(played) / statistics.median(default)
    assert interval is not None and interval[0] < point < interval[1]
    assert median_ratio_interval(_solves(played), _solves(default)) == interval  # seeded: the same every run
    infeasible = [True, True, False, False, False, False, False, False]
    assert median_ratio_interval(_solves(played, infeasible), _solves(default)) is None  # under 3 shared seeds


def test_draw_until_landed_redraws_only_the_requests_that_missed_and_stops_at_max_draws():
    calls: list[tuple[list[int], int]] = []
    outcomes = {0: [5], 1: [0, 7], 2: [0, 0, 0], 3: [0, 0, 9]}  # request -> its draws' values; > 0 lands

    def draw(pending, k):
        calls.append((list(pending), k))
        return [outcomes[i][k] for i in pending]

    result = draw_until_landed(4, 3, draw, lambda value: value > 0)
    assert calls == [([0, 1, 2, 3], 0), ([1, 2, 3], 1), ([2, 3], 2)]
    assert result == [(5, 1, True), (7, 2, False), (0, 3, False), (9, 3, False)]
    assert draw_until_landed(4, 1, lambda pending, k: [outcomes[i][k] for i in pending], lambda v: v > 0) == [
        (5, 1, True),
        (0, 1, False),
        (0, 1, False),
        (0, 1, False),
    ]
