"""MARCO's multi-turn rollout on a real tiny model: feedback tokens masked out, returns from the real evaluator."""

from __future__ import annotations

from types import SimpleNamespace

import pytest

from synth.trainers.grpo.data import marco_prompts, render_prompt
from synth.trainers.grpo.marco_rollout import MarcoRollout
from synth.validators.marco.reward import RewardSettings

pytest.importorskip("transformers")


@pytest.mark.slow
def test_rollout_interleaves_answers_and_masked_feedback(marco_dataset, tiny_model) -> None:
    import torch
    from transformers import AutoModelForCausalLM, AutoTokenizer

    tokenizer = AutoTokenizer.from_pretrained(tiny_model)
    model = AutoModelForCausalLM.from_pretrained(tiny_model)
    rows = marco_prompts(marco_dataset)
    assert len(rows) == 3 and {r.columns["task"] for r in rows} == {"PQS"}  # one prompt per (source, setting)
    rendered = {render_prompt(tokenizer, r): r for r in rows}
    rollout = MarcoRollout(rendered, turns=2, max_new_tokens=6, temperature=1.0, rewards=RewardSettings())
    trainer = SimpleNamespace(
        model=model, processing_class=tokenizer, accelerator=SimpleNamespace(unwrap_model=lambda m: m)
    )
    prompts = [p for p in rendered for _ in range(2)]
    torch.manual_seed(0)
    out = rollout(prompts, trainer)
    assert len(out["completion_ids"]) == len(out["env_mask"]) == len(prompts) and out["logprobs"] is None
    columns = (out["completion_ids"], out["env_mask"], out["turns"], out["trajectory_return"])
    for ids, mask, turns, total in zip(*columns, strict=True):
        assert len(ids) == len(mask)
        feedback = tokenizer.decode([t for t, m in zip(ids, mask, strict=True) if m == 0])
        if turns == 2:
            assert "Improve the modified molecule based on the following feedback" in feedback
            assert "<|im_start|>user" in feedback and feedback.rstrip().endswith("<|im_start|>assistant")
        else:
            assert not feedback  # stopped at a first-turn success: no feedback appended
        assert sum(mask) >= turns  # each turn contributes at least one policy token
        assert -2.0 - 1e-9 <= total <= 2 * 3.0  # within the shaped reward's range for two turns
    assert out["prompt_ids"][0] == tokenizer.encode(prompts[0], add_special_tokens=False)
