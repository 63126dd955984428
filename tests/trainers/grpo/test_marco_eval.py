"""Held-out MARCO policy evaluation: a tiny model and the scripted proposer on the same sources and budget."""

from __future__ import annotations

import pytest

from synth.trainers.grpo.marco_eval import evaluate_policies

pytest.importorskip("transformers")


@pytest.mark.slow
def test_policies_are_scored_on_the_same_sources_with_paired_intervals(tiny_model) -> None:
    report = evaluate_policies({"tiny": tiny_model}, task="PQS", start=10, count=3, budget=2, max_tokens=6)
    assert set(report["policies"]) == {"scripted", "tiny"} and report["sources"] == {"start": 10, "count": 3}
    for scores in report["policies"].values():
        assert scores["same_1"]["sources"] == scores["same_2"]["sources"] == 3
        assert scores["same_1"]["oracle_calls"] <= 1.0 and scores["same_2"]["oracle_calls"] <= 2.0
        assert 0.0 <= scores["same_2"]["sr_x_sim"] <= 1.0
    paired = report["paired"]["tiny_minus_scripted_same_2"]
    low, high = paired["ci95"]
    assert low <= paired["difference"] <= high
    assert paired["first_better"] + paired["second_better"] + paired["ties"] == 3
