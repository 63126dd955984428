"""`synth bench dasa` and `synth bench dasa-search` refuse bad arguments with one error line (exit 2) before any
model is built or any file written."""

import pytest
from typer.testing import CliRunner

from synth.cli.app import app

pytest.importorskip("torch")

runner = CliRunner()


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (["dasa", "--tasks", "shift,nope"], "--tasks: unknown task 'nope'"),
        (["dasa", "--tasks", ","], "--tasks: unknown task ','"),
        (["dasa", "--seeds", "1,x"], "--seeds: not a comma-separated list of integers"),
        (["dasa", "--dasa", "{"], "--dasa: not JSON"),
        (["dasa", "--dasa", "[1]"], "--dasa: not a JSON object"),
        (["dasa", "--dasa", '{"nope": 1}'], "--dasa: unknown DASA setting 'nope'"),
        (["dasa-search", "[{]"], "CONFIGS / --seeds:"),
        (["dasa-search", '{"lr": 1}'], "CONFIGS: not a JSON list of objects"),
        (["dasa-search", '[{}, {"lr": 1, "nope": 2}]'], "CONFIGS[1]: unknown DASA setting 'nope'"),
    ],
)
def test_bad_arguments_are_one_line_and_write_nothing(tmp_path, args, message):
    out = tmp_path / "report.json"
    result = runner.invoke(
        app,
        [
            "bench",
            *args,
            "--out",
            str(out),
            "--cache" if args[0] == "dasa" else "--m",
            *([str(tmp_path / "cache")] if args[0] == "dasa" else ["4"]),
        ],
    )
    assert result.exit_code == 2, result.output
    lines = [line for line in result.output.splitlines() if line.strip()]
    assert len(lines) == 1 and message in lines[0], result.output
    assert not out.exists() and not (tmp_path / "cache").exists()


@pytest.mark.parametrize(("given", "passed"), [([], "shift"), (["--quality-task", "none"], None)])
def test_quality_task_reaches_the_bench_and_none_skips_the_snapshots(tmp_path, monkeypatch, given, passed):
    from synth.generators.dasa import bench

    seen = {}

    def fake(**kwargs):
        seen.update(kwargs)
        return {"per_task": {}}

    monkeypatch.setattr(bench, "run_dasa_bench", fake)
    out = tmp_path / "report.json"
    args = ["bench", "dasa", "--out", str(out), "--dasa", '{"init": "coverage"}', *given]
    result = runner.invoke(app, args)
    assert result.exit_code == 0, result.output
    assert seen["quality_task"] == passed and seen["dasa"].init == "coverage"
    assert out.is_file()
