"""The random-search baseline: the best uniform spec by in-sample band rate, re-measured on fresh instance seeds."""

import pytest

pytest.importorskip("pyscipopt")

from synth.generators.optiscribe.spec_search import best_uniform_specs
from synth.validators.optiscribe.difficulty import EffortBand
from synth.validators.optiscribe.scip import ScipSettings

BASE = "a max-cut problem with 12 nodes, density 0.4"
SCIP = ScipSettings(total_nodes=500)


def _inside(band: list, nodes: int | None) -> bool:
    return nodes is not None and EffortBand(band[0], band[1], "asked").contains(nodes)  # 0 nodes counts as the root


def test_the_search_picks_the_best_spec_and_rates_it_on_fresh_seeds():
    bands = {"low": EffortBand(1, 3, "low"), "open": EffortBand(1, None, "open"), "far": EffortBand(10**6, None, "far")}
    report = best_uniform_specs(BASE, bands, specs=4, seeds=3, holdout=5, seed=0, scip=SCIP)
    assert (report["specs"], report["seeds"], report["holdout"]) == (4, 3, 5)
    for name, result in report["bands"].items():
        rates = result["in_sample_rates"]
        assert len(rates) == 4 and result["best_in_sample"] == max(rates)
        assert result["best_in_sample"] == sum(_inside(result["effort_band"], n) for n in result["best_nodes"]) / 3
        assert len(result["held_out_nodes"]) == 5
        assert result["held_out"] == sum(_inside(result["effort_band"], n) for n in result["held_out_nodes"]) / 5, name
    assert report["bands"]["open"]["in_sample_rates"] == [1.0] * 4 and report["bands"]["open"]["held_out"] == 1.0
    assert report["bands"]["far"]["best_in_sample"] == 0.0 and report["bands"]["far"]["held_out"] == 0.0
    # the whole report is reproducible, band by band
    low = report["bands"]["low"]
    again = best_uniform_specs(BASE, {"low": bands["low"]}, specs=4, seeds=3, holdout=5, seed=0, scip=SCIP)
    assert again["bands"]["low"] == low
