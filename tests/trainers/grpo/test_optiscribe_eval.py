"""The LLM challenger bench's scoring of answers: specs built with the seed, LP text solved as written, refusals."""

from __future__ import annotations

import pytest

pytest.importorskip("pyscipopt")

from synth.generators.optiscribe.build import build_model_text
from synth.trainers.grpo.optiscribe_eval import evaluate_answers
from synth.validators.optiscribe.grammar import parse_instruction
from synth.validators.optiscribe.scip import ScipSettings

INSTRUCTION = "a max-cut problem with 14 nodes, density 0.4"


def test_specs_lp_text_and_refusals_are_scored_like_the_grpo_reward() -> None:
    spec = parse_instruction(INSTRUCTION).make_spec()
    lp = build_model_text(spec, seed=3)
    other_size = build_model_text(parse_instruction("a max-cut problem with 20 nodes, density 0.4").make_spec(), seed=3)
    answers = [spec.to_json(), lp, other_size, "{not json"]
    report = evaluate_answers(answers, [3, 3, 3, 3], instruction=INSTRUCTION, scip=ScipSettings(total_nodes=200))
    assert report["valid_rate"] == 0.5 and report["lp_answers"] == 1 and report["feasibility_rate"] == 0.5
    assert report["refusals"] == {"ignores_instruction": 1, "malformed_spec": 1}
    first, second = report["nodes"][:2]
    assert first == second >= 1  # the spec built with seed 3 is the LP text built with seed 3
    assert report["nodes"][2:] == [None, None] and report["distinct_answers"] == 4
    assert report["mean_reward"] == pytest.approx(report["median_reward"], abs=1e-6)  # r, r, -0.5, -0.5
