"""`synth train grpo` on ToolForge dialogues: the first assistant turn scored by the rule layers, held-out rows
scored before and after as `synth train sft` scores them."""

from __future__ import annotations

import pytest
from stage_datasets import make_dataset

from synth.trainers.grpo.train import GrpoSettings, train_grpo

pytest.importorskip("trl")


@pytest.mark.slow
def test_toolforge_grpo_runs_and_scores_held_out_first_calls(tmp_path, tiny_model) -> None:
    data = make_dataset("toolforge", tmp_path / "data")
    settings = GrpoSettings(steps=1, num_generations=2, prompts_per_step=2, max_completion_length=8, eval_rows=2)
    summary = train_grpo(data, model=tiny_model, out=tmp_path / "run", settings=settings)
    assert summary["domain"] == "toolforge" and summary["steps"] == 1 and len(summary["reward_curve"]) == 1
    assert summary["held_out"]["before"]["rows"] == summary["held_out"]["after"]["rows"] == 2
    # a random tiny model writes no tool call: every completion gets the unparsed reward
    assert summary["reward_curve"][0] == pytest.approx(-1.0)
    assert (tmp_path / "run" / "model" / "config.json").is_file()
