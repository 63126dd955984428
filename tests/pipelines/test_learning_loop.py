"""`synth loop`: three rounds of generate (previous round's model) → verify → GRPO on CPU with tiny models; a run
killed during a GRPO step resumes from its checkpoint; bad configs are one-line errors."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest
import yaml
from typer.testing import CliRunner

from synth.trainers.grpo.train import KILL_AT_STEP_ENV

runner = CliRunner()

TINY_LOOP = {
    "rounds": 3,
    "backend_batch_size": 8,
    "generate": {
        "domain": "marco",
        "seed": 3,
        "shards": 1,
        "generator": {
            "task": "PQS",
            "settings": ["seen"],
            "sources": 2,
            "group_size": 2,
            "budget": 2,
            "llm": {"max_tokens": 8},
        },
    },
    "sft": {"steps": 4, "batch_size": 2, "max_length": 512, "eval_rows": 1, "max_new_tokens": 8},
    "grpo": {
        "steps": 2,
        "num_generations": 2,
        "prompts_per_step": 2,
        "max_completion_length": 8,
        "turns": 2,
        "save_steps": 1,
    },
}


def _app():
    import typer

    from synth.cli import loop

    root = typer.Typer()
    loop.register(root)
    root.command("noop")(lambda: None)
    return root


def test_a_loop_over_another_domain_is_one_line(tmp_path: Path) -> None:
    config = tmp_path / "loop.yaml"
    config.write_text(yaml.safe_dump({**TINY_LOOP, "generate": {"domain": "lob", "generator": {}}}))
    result = runner.invoke(_app(), ["loop", str(config), "--out", str(tmp_path / "out")])
    assert result.exit_code == 2, result.output
    assert len(result.output.strip().splitlines()) == 1 and "must be marco" in result.output
    bad = tmp_path / "bad.yaml"
    bad.write_text(yaml.safe_dump({**TINY_LOOP, "rounds": 0}))
    result = runner.invoke(_app(), ["loop", str(bad), "--out", str(tmp_path / "out")])
    assert result.exit_code == 2 and "field `rounds`: Input should be greater than 0 (got 0)" in result.output


@pytest.mark.slow
def test_three_rounds_end_to_end_and_a_killed_grpo_step_resumes(tmp_path: Path) -> None:
    config = tmp_path / "loop.yaml"
    config.write_text(yaml.safe_dump(TINY_LOOP))
    out = tmp_path / "out"
    argv = [sys.executable, "-m", "synth.cli.app", "loop", str(config), "--out", str(out), "--json"]
    killed = subprocess.run(
        argv, env={**os.environ, KILL_AT_STEP_ENV: "2"}, capture_output=True, text=True, timeout=900
    )
    assert killed.returncode == -9, killed.stderr[-2000:]
    run = out / "round-01" / "grpo"
    assert (run / "checkpoints" / "checkpoint-1").is_dir() and not (run / "metrics.json").exists()
    done = subprocess.run(argv, capture_output=True, text=True, timeout=1800)
    assert done.returncode == 0, done.stderr[-2000:]
    result = json.loads(done.stdout)
    assert [r["round"] for r in result["rounds"]] == [0, 1, 2, 3]
    first = json.loads((run / "metrics.json").read_text())
    assert first["resumed_from"].endswith("checkpoint-1") and first["steps"] == 2
    for previous, entry in zip(result["rounds"], result["rounds"][1:], strict=False):
        assert entry["generator_model"] == previous["model"]  # each round generates with the previous model
        assert entry["grpo"]["steps"] == 2 and len(entry["grpo"]["reward_curve"]) == 2
        manifest = json.loads((Path(entry["dataset"]["path"]) / "manifest.json").read_text())
        assert previous["model"] in json.dumps(manifest)  # the dataset names the model that wrote it
        card = (Path(entry["model"]) / "README.md").read_text()
        assert entry["dataset"]["manifest_sha256"] in card
    assert result["final_model"] == result["rounds"][-1]["model"]
    again = subprocess.run(argv, capture_output=True, text=True, timeout=900)
    assert again.returncode == 0 and json.loads(again.stdout) == result  # a rerun reuses every round
