"""`synth toolforge export`: each format from a tiny dataset directory, and the refused used target."""

from __future__ import annotations

import json
from pathlib import Path

import pyarrow as pa
import pytest
import typer
from synth_datasets import write_synth_dataset
from typer.testing import CliRunner

from synth.cli.toolforge import register
from synth.validators.toolforge.model import (
    ChatMessage,
    DialoguePlan,
    Evidence,
    Passage,
    PlannedCall,
    QASeed,
    ToolCall,
    ToolSpec,
    render_observation,
)
from synth.validators.toolforge.records import TOOLFORGE_SCHEMA, dialogue_row

runner = CliRunner()


def make_app() -> typer.Typer:
    root = typer.Typer()
    register(root)
    root.command("noop")(lambda: None)  # a second command keeps `toolforge` a named group
    return root


@pytest.fixture(scope="module")
def dataset(tmp_path_factory: pytest.TempPathFactory) -> Path:
    tool = ToolSpec("search", "Search.", {"type": "object", "properties": {"q": {"type": "string"}}}, family="search")
    seed = QASeed("s", "hotpotqa", "Q?", "A", "bridge", (Passage("T", ("A.",)),), ((0, 0),))
    evidence = (Evidence(0, 0, "T", "A.", True),)
    plan = DialoguePlan(
        "single",
        "r",
        "D1",
        (),
        (PlannedCall("c0", 0, "gold", "search", "search", "Q", {"q": "Q"}, evidence),),
        ("Q?",),
        ("A",),
    )
    messages = [
        ChatMessage("system", "S"),
        ChatMessage("user", "Q?"),
        ChatMessage("assistant", reasoning="I call search.", tool_calls=(ToolCall("c0", "search", {"q": "Q"}),)),
        ChatMessage("tool", render_observation(evidence), tool_call_id="c0", name="search"),
        ChatMessage("assistant", "A", reasoning="Done."),
    ]
    row = dialogue_row(seed, plan, (tool,), messages, backend="scripted", llm_calls=0)
    root = tmp_path_factory.mktemp("tf")
    table = pa.Table.from_pylist([row, row], schema=TOOLFORGE_SCHEMA).add_column(0, "id", pa.array(["a", "b"]))
    return write_synth_dataset(root / "ds", table, domain="toolforge")


@pytest.mark.parametrize("fmt", ["openai", "hermes", "xlam", "bfcl"])
def test_export_each_format(dataset: Path, tmp_path: Path, fmt: str) -> None:
    out = tmp_path / ("bfcl" if fmt == "bfcl" else f"{fmt}.jsonl")
    args = ["toolforge", "export", str(dataset), "--format", fmt, "--out", str(out)]
    result = runner.invoke(make_app(), [*args, "--arguments", "dict", "--reasoning", "inline"])
    assert result.exit_code == 0, result.output
    report = json.loads(result.stdout)
    assert report["rows"] == 2 and report["written"] == 2 and report["skipped"] == {}
    if fmt == "bfcl":
        assert report["categories"] == {"simple_python": 2}
        assert (out / "possible_answer" / "BFCL_v4_simple_python.json").is_file()
    else:
        assert len(out.read_text().splitlines()) == 2
    if fmt == "openai":
        line = json.loads(out.read_text().splitlines()[0])
        assert line["messages"][2]["tool_calls"][0]["function"]["arguments"] == {"q": "Q"}
        assert line["messages"][2]["content"].startswith("<think>")
    again = runner.invoke(make_app(), args)
    assert again.exit_code == 3 and "already exists" in again.output


def test_unknown_format_is_refused(dataset: Path, tmp_path: Path) -> None:
    result = runner.invoke(
        make_app(), ["toolforge", "export", str(dataset), "--format", "csv", "--out", str(tmp_path / "x")]
    )
    assert result.exit_code == 2
