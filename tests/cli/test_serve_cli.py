"""`synth serve`: a missing or non-model folder is one error line (exit 2), before anything binds a port."""

from __future__ import annotations

import typer
from typer.testing import CliRunner

from synth.cli.serve import register

runner = CliRunner()


def make_app() -> typer.Typer:
    root = typer.Typer()
    register(root)
    root.command("noop")(lambda: None)
    return root


def test_missing_model_folder_is_one_line(tmp_path) -> None:
    result = runner.invoke(make_app(), ["serve", str(tmp_path / "nope")])
    assert result.exit_code == 2, result.output
    lines = result.output.strip().splitlines()
    assert len(lines) == 1 and "not a local model folder (no config.json)" in lines[0]
    (tmp_path / "empty").mkdir()
    result = runner.invoke(make_app(), ["serve", str(tmp_path / "empty")])
    assert result.exit_code == 2 and "no config.json" in result.output
