"""`synth train grpo` on an OptiScribe dataset: curriculum prompts, the SCIP reward with the dataset's node cap, and
the LLM challenger bench on the same seeds."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from optiscribe_datasets import CURRICULUM, make_curriculum_dataset

pytest.importorskip("trl")
pytest.importorskip("pyscipopt")

from synth.trainers.grpo.data import optiscribe_prompts, optiscribe_scip_defaults
from synth.trainers.grpo.train import GrpoSettings, train_grpo


@pytest.fixture(scope="module")
def optiscribe_dataset(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return make_curriculum_dataset(tmp_path_factory.mktemp("optiscribe") / "data")


def test_prompts_follow_the_size_curriculum_and_the_reward_takes_the_recorded_node_cap(optiscribe_dataset) -> None:
    prompts = optiscribe_prompts(optiscribe_dataset)
    instructions = [p.columns["instruction"] for p in prompts]
    assert set(instructions) == set(CURRICULUM)
    assert instructions == sorted(instructions, key=CURRICULUM.index)  # 12-node graphs first
    assert prompts[0].messages[1] == {"role": "user", "content": instructions[0]}
    assert optiscribe_scip_defaults(optiscribe_dataset) == {
        "name": "optiscribe_scip",
        "total_nodes": 1000,
        "time_limit": 60.0,
        "scip_seed": 0,
    }


def test_grpo_step_on_optiscribe_writes_scip_reward_metrics(optiscribe_dataset, tiny_model, tmp_path) -> None:
    settings = GrpoSettings(steps=1, num_generations=2, prompts_per_step=2, max_completion_length=8, turns=1)
    summary = train_grpo(optiscribe_dataset, model=tiny_model, out=tmp_path / "run", settings=settings)
    assert summary["domain"] == "optiscribe" and summary["steps"] == 1
    assert summary["reward_curve"] == [-0.5]  # a random tiny model writes no spec: every answer is refused
    logged = [json.loads(line) for line in (tmp_path / "run" / "metrics.jsonl").read_text().splitlines()]
    assert logged[0]["rewards/optiscribe_scip/mean"] == -0.5
    assert (tmp_path / "run" / "model" / "config.json").is_file()

    from synth.trainers.grpo.optiscribe_eval import evaluate_challengers

    report = evaluate_challengers(
        {"sft": tiny_model},
        grpo_runs={"grpo": tmp_path / "run"},
        instruction=CURRICULUM[1],
        seeds=(0, 1),
        total_nodes=200,
        max_tokens=8,
    )
    scripted, grpo = report["policies"]["scripted"], report["policies"]["grpo"]
    assert scripted["valid_rate"] == scripted["feasibility_rate"] == 1.0 and scripted["median_nodes"] >= 1
    assert len(scripted["nodes"]) == 2 and scripted["node_deciles"] is not None
    assert grpo["valid_rate"] == grpo["feasibility_rate"] == 0.0 and sum(grpo["refusals"].values()) == 2
    assert grpo["mean_reward"] == -0.5 and 0 < scripted["median_reward"] <= 1  # the GRPO reward of each answer
    assert report["vs_sft"]["grpo"]["median_nodes_ratio"] is None  # neither model has a feasible instance
    assert report["grpo_runs"]["grpo"]["reward_curve"] == [{"step": 1, "reward": -0.5, "reward_std": 0.0}]
    assert report["models"]["grpo"] == str(tmp_path / "run" / "model")
    assert report["seeds"] == [0, 1] and report["scip"]["total_nodes"] == 200


def test_challenger_bench_refuses_a_missing_run_folder_in_one_line(tmp_path) -> None:
    from typer.testing import CliRunner

    from synth.cli.app import app

    args = ["bench", "optiscribe-challenger", "--grpo-run", f"grpo={tmp_path / 'nope'}", "-o", str(tmp_path / "r.json")]
    result = CliRunner().invoke(app, args)
    assert result.exit_code == 2 and "not a GRPO run folder (no metrics.jsonl)" in result.output
    assert len(result.output.strip().splitlines()) == 1 and not (tmp_path / "r.json").exists()


def test_reward_options_reach_the_named_reward_over_the_dataset_defaults(optiscribe_dataset, monkeypatch) -> None:
    from synth.cli.grpo import _reward_specs
    from synth.core.errors import InputError
    from synth.trainers.grpo import train

    specs = _reward_specs(["optiscribe_scip"], ["node_weight=1.0", "gap_weight=0"])
    assert specs == ({"name": "optiscribe_scip", "weight": 1.0, "node_weight": 1.0, "gap_weight": 0},)
    with pytest.raises(InputError, match="--reward-option needs --reward NAME"):
        _reward_specs([], ["node_weight=1.0"])
    built = []
    monkeypatch.setattr(train, "make_reward", lambda name, **options: built.append((name, options)))
    train._rewards(GrpoSettings(rewards=specs), (optiscribe_scip_defaults(optiscribe_dataset),))
    assert built == [
        (
            "optiscribe_scip",
            {"total_nodes": 1000, "time_limit": 60.0, "scip_seed": 0, "node_weight": 1.0, "gap_weight": 0},
        )
    ]
