"""`synth train sft`: a two-step run on a tiny hand-made tool-use dataset, and the one-line missing-column error."""

from __future__ import annotations

import json
from pathlib import Path

import typer
from synth_datasets import write_synth_dataset
from typer.testing import CliRunner

from synth.cli.sft import register

runner = CliRunner()


def make_app() -> typer.Typer:
    root, train = typer.Typer(), typer.Typer()
    register(train)
    root.add_typer(train, name="train")
    return root


def write_dataset(root: Path, *, with_tools: bool = True) -> Path:
    tool = {"type": "function", "function": {"name": "lookup", "description": "Look up.", "parameters": {}}}
    rows = []
    for k in range(4):
        call = {"id": "c0", "type": "function", "function": {"name": "lookup", "arguments": json.dumps({"q": k})}}
        messages = [
            {"role": "user", "content": f"q {k}", "reasoning": "", "tool_calls": [], "tool_call_id": "", "name": ""},
            {
                "role": "assistant",
                "content": "",
                "reasoning": "r",
                "tool_calls": [call],
                "tool_call_id": "",
                "name": "",
            },
            {
                "role": "tool",
                "content": str(k),
                "reasoning": "",
                "tool_calls": [],
                "tool_call_id": "c0",
                "name": "lookup",
            },
            {"role": "assistant", "content": str(k), "reasoning": "", "tool_calls": [], "tool_call_id": "", "name": ""},
        ]
        rows.append({"id": f"r{k}", "messages": messages, **({"tools": [json.dumps(tool)]} if with_tools else {})})
    return write_synth_dataset(root, rows, domain="toolforge")


def test_train_sft_writes_model_and_metrics(tmp_path: Path) -> None:
    import torch

    previous = torch.get_num_threads()
    torch.set_num_threads(1)  # a shared 2-core machine runs one thread several times faster than two
    try:
        run_and_check(tmp_path)
    finally:
        torch.set_num_threads(previous)


def run_and_check(tmp_path: Path) -> None:
    dataset = write_dataset(tmp_path / "ds")
    args = ["train", "sft", str(dataset), "--out", str(tmp_path / "m"), "--steps", "2", "--eval-rows", "1"]
    result = runner.invoke(
        make_app(), [*args, "--max-length", "256", "--batch-size", "2", "--max-new-tokens", "8", "--json"]
    )
    assert result.exit_code == 0, result.output
    metrics = json.loads(result.stdout)
    assert metrics["rows"]["train"] == 3 and metrics["rows"]["held_out"] == 1
    assert metrics["settings"]["steps"] == 2 and metrics["tool_call"]["after"]["rows"] == 1
    assert json.loads((tmp_path / "m" / "metrics.json").read_text())["loss"] == metrics["loss"]
    again = runner.invoke(make_app(), args)
    assert again.exit_code == 3 and "already holds a trained model" in again.output


def test_missing_tools_column_is_a_one_line_error(tmp_path: Path) -> None:
    dataset = write_dataset(tmp_path / "ds", with_tools=False)
    result = runner.invoke(make_app(), ["train", "sft", str(dataset), "--out", str(tmp_path / "m")])
    assert result.exit_code == 2
    assert "error:" in result.output and "column `tools` is missing" in result.output
    assert len(result.output.strip().splitlines()) == 1
