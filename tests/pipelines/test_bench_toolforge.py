"""`synth bench toolforge` on a few seeds: the report's figures are measured, consistent and from the same rows."""

from __future__ import annotations

import json
from pathlib import Path

from typer.testing import CliRunner

from synth.cli.app import app


def test_bench_toolforge_reports_acceptance_cost_and_both_audits(tmp_path: Path) -> None:
    out = tmp_path / "bench.json"
    args = [
        "bench",
        "toolforge",
        "--out",
        str(out),
        "--limit",
        "6",
        "--audit-rows",
        "3",
        "--iterations",
        "6",
        "--random-per-row",
        "4",
    ]
    result = CliRunner().invoke(app, args)
    assert result.exit_code == 0, result.output
    report = json.loads(out.read_text())
    generation, validation = report["generation"], report["validation"]
    assert generation["dialogues"] == 12  # 6 seeds x 2 dialogues, none rejected on these seeds
    assert validation["accepted"] + sum(validation["rejected_by_layer"].values()) >= generation["dialogues"]
    assert 0 <= validation["acceptance"] <= 1 and generation["scripted"]["seconds_per_accepted"] > 0
    assert generation["llm_writer_scripted_backend"]["llm_calls_per_accepted"] == 1.0
    before, after = report["audit"]["before_toolforge_checks"], report["audit"]["after_all_layers"]
    assert before["rows"] == after["rows"] == 3
    assert before["random"]["negatives"] == after["random"]["negatives"] == 12
    assert set(before["layers"]) < set(after["layers"])
    # more layers never catch fewer of the same random corruptions
    assert after["random"]["recall"] >= before["random"]["recall"]
