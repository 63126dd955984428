"""The export stage on tiny real datasets: every format's files, its report, and byte-identical reruns."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from stage_datasets import dataset_input, stage_context

from synth.core.dataset import open_dataset
from synth.core.errors import InputError
from synth.core.sink import sha256_file
from synth.generators.lob import read_messages, read_orderbook, replay
from synth.pipelines.stage_kinds import STAGE_KINDS

EXPORT = STAGE_KINDS["export"]


def export(tmp_path: Path, dataset: Path, domain: str, run: str, **fields: Any) -> tuple[Path, dict[str, Any]]:
    """Check and run an export stage of `dataset` into a fresh work folder; (folder, report)."""
    settings = EXPORT.parse_settings(fields)
    item = dataset_input(dataset, domain)
    EXPORT.check(settings, [item])
    ctx = stage_context(tmp_path / run, item)
    return ctx.work, EXPORT.run(settings, ctx)


def tree(root: Path) -> dict[str, str]:
    return {p.relative_to(root).as_posix(): sha256_file(p) for p in sorted(root.rglob("*")) if p.is_file()}


@pytest.mark.parametrize(
    ("fmt", "options", "target"),
    [
        ("openai", {"arguments": "dict", "reasoning": "field"}, "openai.jsonl"),
        ("hermes", {"tool_role": "user"}, "hermes.jsonl"),
        ("xlam", {}, "xlam.jsonl"),
        ("bfcl", {}, "bfcl"),
    ],
)
def test_toolforge_formats(tmp_path, toolforge_dataset, fmt, options, target):
    rows = open_dataset(toolforge_dataset).rows
    work, report = export(tmp_path, toolforge_dataset, "toolforge", "a", format=fmt, **options)
    assert report["format"] == fmt and report["path"] == target and report["rows"] == rows == 4
    assert report["written"] + sum(report["skipped"].values()) == rows and report["written"] > 0
    files = tree(work)
    if fmt == "bfcl":
        assert "bfcl/source_ids.json" in files and sum(report["categories"].values()) == report["written"]
        assert any(name.startswith("bfcl/possible_answer/") for name in files)
    else:
        assert list(files) == [target]
        records = [json.loads(line) for line in (work / target).read_text().splitlines()]
        assert len(records) == report["written"]
    if fmt == "openai":
        calls = [c for r in records for m in r["messages"] for c in m.get("tool_calls") or ()]
        assert calls and all(isinstance(c["function"]["arguments"], dict) for c in calls)
    if fmt == "hermes":
        assert {m["role"] for r in records for m in r["messages"]} <= {"system", "user", "assistant"}
    again, second = export(tmp_path, toolforge_dataset, "toolforge", "b", format=fmt, **options)
    assert tree(again) == files and second == report


@pytest.mark.parametrize("fmt", ["mps", "lp"])
def test_optiscribe_formats(tmp_path, optiscribe_dataset, fmt):
    rows = open_dataset(optiscribe_dataset).rows
    work, report = export(tmp_path, optiscribe_dataset, "optiscribe", "a", format=fmt)
    files = tree(work)
    assert report == {"format": fmt, "path": ".", "rows": rows, "written": rows, "skipped": {}}
    assert len(files) == rows and all(name.endswith(f".{fmt}") for name in files)
    again, _ = export(tmp_path, optiscribe_dataset, "optiscribe", "b", format=fmt)
    assert tree(again) == files


def test_lobster_files_replay_strictly_and_repeat_byte_for_byte(tmp_path, lob_dataset):
    work, report = export(tmp_path, lob_dataset, "lob", "a", format="lobster")
    assert report["rows"] == report["written"] == report["rollouts"] == 2 and report["skipped"] == {}
    assert report["messages"] == 240 and report["violations"] == 0 and report["level_mismatches"] == 0
    files = tree(work)
    messages = sorted(name for name in files if "_message_" in name)
    assert len(messages) == 2 and len(files) == 4
    replayed = replay(
        read_messages(work / messages[0]),
        orderbook=read_orderbook(work / messages[0].replace("_message_", "_orderbook_")),
        mode="strict",
    )
    assert replayed.violation_count == 0 and replayed.level_mismatches == 0
    again, _ = export(tmp_path, lob_dataset, "lob", "b", format="lobster")
    assert tree(again) == files
    _, limited = export(tmp_path, lob_dataset, "lob", "c", format="lobster", limit=1)
    assert limited["written"] == 1 and limited["skipped"] == {"limit": 1}


def test_an_input_of_another_domain_is_refused_when_run(tmp_path, lob_dataset):
    settings = EXPORT.parse_settings({"format": "openai"})
    ctx = stage_context(tmp_path / "w", dataset_input(lob_dataset, "toolforge"))
    with pytest.raises(InputError, match=r"a 'lob' dataset, but ToolForge export needs a 'toolforge' dataset"):
        EXPORT.run(settings, ctx)
