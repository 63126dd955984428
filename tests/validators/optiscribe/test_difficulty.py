"""Difficulty as SCIP effort: the bands words and node targets ask, membership of capped solves, the band reward."""

import math

import pytest

from synth.validators.optiscribe.difficulty import (
    DIFFICULTY_BANDS,
    band_from_asked,
    band_reward,
    check_band_reachable,
    effort_band,
    effort_violations,
    target_band,
)
from synth.validators.optiscribe.grammar import parse_instruction, render_instruction
from synth.validators.optiscribe.reward import compute_reward, request_reward
from synth.validators.optiscribe.spec import SpecError


def test_words_and_targets_map_to_node_bands_and_the_target_wins():
    assert effort_band("easy", None).to_list() == [1, 10]
    assert effort_band("medium", None).to_list() == [11, 299]
    assert effort_band("hard", None).to_list() == [300, None]
    assert effort_band("hard", 10_000).to_list() == [3334, 30_000]
    assert effort_band(None, None) is None
    lows = [DIFFICULTY_BANDS[d][0] for d in ("easy", "medium", "hard")]
    assert lows == sorted(lows) and DIFFICULTY_BANDS["easy"][1] + 1 == DIFFICULTY_BANDS["medium"][0]
    with pytest.raises(SpecError) as caught:
        target_band(0)
    assert caught.value.code == "invalid_target"


@pytest.mark.parametrize(
    ("instruction", "nodes", "target"),
    [
        ("a max-cut problem with 200 nodes, needs about 10,000 nodes", 200, 10_000),
        ("a max-cut problem with 150 nodes that takes 5k B&B nodes", 150, 5000),
        ("a max-cut problem with 80 nodes requiring roughly 400 branch-and-bound nodes", 80, 400),
        ("a max-cut problem with 80 nodes, about 900 search nodes, hard", 80, 900),
    ],
)
def test_a_node_target_is_never_read_as_a_graph_size(instruction, nodes, target):
    request = parse_instruction(instruction)
    assert request.sizes["nodes"] == (nodes, nodes) and request.target_nodes == target
    assert request.asked()["effort"] == target_band(target).to_list()
    assert parse_instruction(render_instruction(request)) == request


def test_two_targets_contradict_and_a_plain_size_asks_no_effort():
    with pytest.raises(SpecError) as caught:
        parse_instruction("a max-cut problem with 50 nodes, needs about 100 nodes, takes 900 B&B nodes")
    assert caught.value.code == "contradiction"
    assert "effort" not in parse_instruction("a max-cut problem with about 200 nodes").asked()


def test_a_capped_solve_only_shows_at_least_its_nodes():
    hard, medium = effort_band("hard", None), effort_band("medium", None)
    assert effort_violations(hard, status="totalnodelimit", nodes=2000) == []
    assert effort_violations(medium, status="totalnodelimit", nodes=200) == [
        "effort_outside: 200+ (node cap) nodes, asked [11, 299]"
    ]
    assert effort_violations(medium, status="optimal", nodes=5) == ["effort_outside: 5 nodes, asked [11, 299]"]
    assert effort_violations(None, status=None, nodes=None) == []
    assert effort_violations(hard, status=None, nodes=None)[0].startswith("effort_unmeasured")
    assert band_from_asked({"effort": [11, 299]}).to_list() == [11, 299] and band_from_asked({}) is None


def test_an_instance_closed_in_presolving_is_easy():
    easy, medium = effort_band("easy", None), effort_band("medium", None)
    assert effort_violations(easy, status="optimal", nodes=0) == []  # 0 nodes: solved before the root
    assert effort_violations(medium, status="optimal", nodes=0) == ["effort_outside: 0 nodes, asked [11, 299]"]
    assert band_reward(easy, feasible=True, nodes=0, status="optimal") == band_reward(
        easy, feasible=True, nodes=1, status="optimal"
    )


def test_a_band_above_the_node_cap_is_refused():
    check_band_reachable(effort_band("hard", None), 301)
    with pytest.raises(SpecError) as caught:
        check_band_reachable(effort_band(None, 10_000), 2000)
    assert caught.value.code == "band_above_cap"


def test_the_band_reward_peaks_inside_and_pays_nothing_without_a_solution():
    medium = effort_band("medium", None)
    reward = [band_reward(medium, feasible=True, nodes=n, status="optimal") for n in (1, 5, 11, 58, 299, 3000)]
    assert reward[0] == 0.0 and reward[-1] == 0.0
    assert reward[1] < reward[2] < reward[3] and reward[3] > reward[4]
    assert all(0.5 <= r <= 1.0 for r in reward[2:5])
    easy = effort_band("easy", None)
    assert band_reward(easy, feasible=True, nodes=1, status="optimal") == 1.0
    assert band_reward(easy, feasible=False, nodes=1, status="infeasible") == 0.0


def test_easy_requests_are_not_paid_for_hardness_but_hard_ones_are():
    stats = {"feasible": True, "status": "optimal", "nodes": 2000, "postcut_gap": 0.1}
    easy_stats = {"feasible": True, "status": "optimal", "nodes": 1, "postcut_gap": 0.0}
    easy, hard = effort_band("easy", None), effort_band("hard", None)
    assert request_reward(stats, easy) == 0.0 and request_reward(easy_stats, easy) == 1.0
    assert request_reward(stats, hard) == compute_reward(stats) == request_reward(stats, None)


def test_a_hard_margin_pays_a_hard_request_for_distance_above_the_edge_not_for_the_gap():
    from synth.validators.optiscribe.reward import RewardSettings

    hard = effort_band("hard", None)  # 300 nodes and more
    margin = RewardSettings(hard_margin=0.5)

    def paid(nodes: int, gap: float, settings: RewardSettings = margin, feasible: bool = True) -> float:
        stats = {"feasible": feasible, "status": "optimal", "nodes": nodes, "postcut_gap": gap}
        return request_reward(stats, hard, settings)

    assert paid(300, 0.0) == 0.5 and paid(3000, 0.0) == 1.0  # the edge, and a decade (past the margin) above it
    assert paid(600, 0.0) == pytest.approx(0.5 + 0.5 * math.log10(600 / 300) / 0.5)
    assert paid(100, 0.25) < 0.5 and paid(30, 0.25) == 0.0 and paid(3000, 0.0, feasible=False) == 0.0
    assert paid(400, 0.25) < paid(600, 0.0)  # the post-cut gap no longer buys a place just above the edge
    # hard_margin 0 (the default) keeps the hardness reward, so recorded rewards of existing datasets still verify
    assert paid(400, 0.25, RewardSettings()) == compute_reward({"feasible": True, "nodes": 400, "postcut_gap": 0.25})


def test_calibrated_bands_split_the_measured_range_into_log_tertiles():
    from synth.validators.optiscribe.difficulty import calibrate_bands

    nodes = [1, 1, 2, 3, 5, 8, 20, 40, 90, 150, 200, 400, 1000]  # p10 = 1, p90 = 400
    table = calibrate_bands(nodes)
    assert table == {"easy": (1, 7), "medium": (8, 53), "hard": (54, None)}
    narrow = calibrate_bands([100, 100, 110, 120, 130])  # widened to a factor of 27 around the centre
    easy, hard = narrow["easy"][1], narrow["hard"][0]
    assert (hard - 0.5) / (easy + 0.5) >= 3 and narrow["medium"] == (easy + 1, hard - 1)
    # near the root the log tertiles round to [4, 8], which covers 3.5–8.5 nodes (a factor of 2.4): the hard edge
    # moves up until the half-node cover is a factor of 3
    assert calibrate_bands([1, 1, 1, 1, 1, 1, 2, 3, 5, 14]) == {"easy": (1, 3), "medium": (4, 10), "hard": (11, None)}
    with pytest.raises(SpecError) as caught:
        calibrate_bands([5, 6])
    assert caught.value.code == "calibration_too_small"


def test_the_medium_band_is_at_least_as_wide_as_the_measured_seed_noise():
    from synth.validators.optiscribe.difficulty import calibrate_bands, seed_spread

    groups = [[100, 100, 1000], [10, 10, 10], [5]]  # |log10 dev|: 0, 0, 1, 0, 0, 0 (the 1-solve group is skipped)
    assert seed_spread(groups, coverage=1.0) == 1.0 and seed_spread(groups, coverage=0.5) == 0.0
    nodes = [1, 1, 2, 3, 5, 8, 20, 40, 90, 150, 200, 400, 1000]
    assert calibrate_bands(nodes, spread=None) == calibrate_bands(nodes)  # no measurement: a factor of 3
    wide = calibrate_bands(nodes, spread=0.5)  # the medium band must span a decade: the range is widened
    assert (wide["hard"][0] - 0.5) / (wide["easy"][1] + 0.5) >= 10
    from synth.validators.optiscribe.difficulty import calibrate_bands_under_cap

    assert calibrate_bands_under_cap(nodes, spread=0.5, node_cap=5000) == (wide, True)
    # a decade and a half of seed noise would push the hard edge past cap / 3: the fixed width is kept
    assert calibrate_bands_under_cap(nodes, spread=1.5, node_cap=5000) == (calibrate_bands(nodes), False)
    with pytest.raises(SpecError) as caught:
        seed_spread([[3], [4]])
    assert caught.value.code == "calibration_too_small"


def test_a_request_with_a_band_table_asks_the_calibrated_band():
    from dataclasses import replace

    from synth.validators.optiscribe.difficulty import band_table_from_dict

    table = band_table_from_dict({"easy": [1, 5], "medium": [6, 49], "hard": [50, None]})
    request = replace(parse_instruction("a max-cut problem with 30 nodes, density 0.3, hard"), bands=table)
    assert request.effort().to_list() == [50, None]
    assert request.asked()["effort"] == [50, None]
    assert replace(request, difficulty="easy").effort().to_list() == [1, 5]
    assert replace(request, target_nodes=900).effort().to_list() == [300, 2700]  # a target ignores the table
    with pytest.raises(SpecError) as caught:
        band_table_from_dict({"easy": [1, 5], "medium": [7, 49], "hard": [50, None]})
    assert caught.value.code == "invalid_bands"
