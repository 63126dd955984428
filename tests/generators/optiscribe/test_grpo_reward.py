"""The OptiScribe GRPO reward through the trainer's registry: refused answers below any instance, SCIP-scored specs."""

import json

import pytest

pytest.importorskip("pyscipopt")

from synth.generators.optiscribe.build import build_model_text
from synth.generators.optiscribe.grpo_reward import score_answer, stable_seed
from synth.trainers.grpo.rewards import make_reward
from synth.validators.optiscribe.grammar import parse_instruction
from synth.validators.optiscribe.scip import ScipSettings

INSTRUCTION = "a max-cut problem with 14 nodes, density 0.4"
EASY = "a max-cut problem with 14 nodes, density 0.4, easy"


def _spec(**knobs):
    return parse_instruction(INSTRUCTION).make_spec(knobs={"weight_low": 1, "weight_high": 10, **knobs}).to_json()


def test_the_registered_reward_scores_a_batch_and_refuses_bad_answers():
    reward = make_reward("optiscribe_scip", total_nodes=500)
    assert reward.__name__ == "optiscribe_scip"
    other_size = json.dumps({"family": "max_cut", "sizes": {"nodes": 30}, "density": 0.4})
    completions = [_spec(), "not json", other_size, [{"role": "assistant", "content": _spec()}]]
    prompts = [[{"role": "user", "content": INSTRUCTION}]] * 4
    scores = reward(prompts, completions)
    assert scores[1] == scores[2] == -0.5
    assert scores[0] == scores[3] > 0  # the same spec and the same instruction-derived seed
    assert reward(
        prompts[:1], completions[:1], instruction=[INSTRUCTION], instance_seed=[stable_seed(INSTRUCTION)]
    ) == [scores[0]]


def test_lp_answers_are_measured_and_easy_requests_pay_for_staying_easy():
    scip = ScipSettings(total_nodes=500)
    spec = parse_instruction(INSTRUCTION).make_spec()
    lp = build_model_text(spec, seed=1)
    assert score_answer(lp, instruction=INSTRUCTION, seed=0, scip=scip) > 0
    wrong = build_model_text(parse_instruction("a max-cut problem with 20 nodes, density 0.4").make_spec(), seed=1)
    assert score_answer(wrong, instruction=INSTRUCTION, seed=0, scip=scip) == -0.5
    all_negative = _spec(negative_fraction=1.0)  # cut nothing: solved at the root
    assert score_answer(all_negative, instruction=EASY, seed=0, scip=scip) == 1.0
    assert score_answer(all_negative, instruction=INSTRUCTION, seed=0, scip=scip) < 0.5
