"""Solver tuning on a generated family, worker-independent solving, and the difficulty-following bench (tiny)."""

import json

import pytest

pytest.importorskip("pyscipopt")

from synth.generators.optiscribe.bench import bench_bands
from synth.generators.optiscribe.build import build_model_text
from synth.generators.optiscribe.parallel import solve_many
from synth.generators.optiscribe.tune import tune_family
from synth.validators.optiscribe.grammar import parse_instruction
from synth.validators.optiscribe.scip import ScipSettings

TINY = "a max-cut problem with 14 nodes, density 0.4"


def test_results_do_not_depend_on_the_number_of_workers():
    spec = parse_instruction(TINY).make_spec()
    jobs = [(build_model_text(spec, seed=s), ScipSettings(total_nodes=500)) for s in range(3)]
    one, two = solve_many(jobs, workers=1), solve_many(jobs, workers=2)
    assert [s.to_dict() for s in one] == [s.to_dict() for s in two]


def test_tuning_searches_the_documented_candidates_and_reports_held_out_ratios():
    report = tune_family("max_cut", instruction=TINY, train=2, heldout=2, total_nodes=2000)
    assert json.loads(json.dumps(report)) == report
    assert len(report["trials"]) == 1 + 3 + 7 + 2  # default, emphases, meta settings, branching score
    assert report["chosen"] in [t["settings"] for t in report["trials"]]
    assert report["train_score"] == min(t["score"] for t in report["trials"])
    held = report["heldout"]
    assert held["median_deterministic_time_ratio"] > 0 and held["same_objective"]
    assert held["default"]["optimal"] == 2
    again = tune_family("max_cut", instruction=TINY, train=2, heldout=2, total_nodes=2000)
    assert [t["score"] for t in again["trials"]] == [t["score"] for t in report["trials"]]
    with pytest.raises(ValueError, match="asks max_cut, not knapsack"):
        tune_family("knapsack", instruction=TINY)


def test_the_band_bench_reports_the_in_band_share_per_family_and_band():
    report = bench_bands(
        bases={"max_cut": "a max-cut problem with 12 nodes, density 0.4"},
        bands=("easy", "about 20"),
        rounds=1,
        candidates=2,
        eval_instances=2,
        total_nodes=500,
        calibration_samples=4,
        spread_specs=2,
        spread_seeds=3,
        max_draws=2,
    )
    bands = report["families"]["max_cut"]
    calibration = report["calibration"]["max_cut"]
    assert calibration["samples"] == 4 and len(calibration["nodes"]) == 4
    assert bands["easy"]["effort_band"] == calibration["bands"]["easy"]  # calibrated at the base size
    assert bands["about 20"]["effort_band"] == [7, 60]  # an explicit target is not calibrated
    for result in bands.values():
        inside = [
            n is not None and result["effort_band"][0] <= n <= result["effort_band"][1]
            for n in result["selfplay_nodes"]
        ]
        assert result["selfplay_in_band"] == sum(inside) / 2
    assert report["min_in_band_share"] == min(b["selfplay_in_band"] for b in bands.values())
    assert [len(g) for g in calibration["seed_groups"]] == [3, 3]  # 2 specs, each under 3 instance seeds
    assert calibration["seed_spread_decades"] >= 0
    for result in bands.values():
        verified = result["verified"]
        low, high = result["effort_band"]
        delivered = [n is not None and low <= n <= high for n in verified["delivered_nodes"]]
        assert verified["delivered_in_band"] == sum(delivered) / 2 >= verified["first_draw_in_band"]
        # a second solve is spent exactly on the requests whose first draw missed the band
        assert verified["mean_solves"] == 1 + (1 - verified["first_draw_in_band"])


def test_the_band_bench_scores_each_spec_over_several_instance_seeds():
    report = bench_bands(
        bases={"max_cut": "a max-cut problem with 12 nodes, density 0.4"},
        bands=("easy",),
        rounds=2,
        candidates=2,
        instance_seeds=3,
        eval_instances=2,
        total_nodes=500,
        calibration_samples=None,
        challenger="gp",
    )
    assert report["settings"]["instance_seeds"] == 3
    easy = report["families"]["max_cut"]["easy"]
    assert easy["training_solves"] == 2 * 2 * 3  # rounds x specs x instance seeds, all solved
    assert len(easy["training"]) == 2 and len(easy["selfplay_nodes"]) == 2
