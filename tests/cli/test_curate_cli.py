"""`synth curate` from the command line: a run, and bad input as one error line, exit 2, nothing written."""

import json

import pytest
import yaml
from synth_datasets import write_synth_dataset
from typer.testing import CliRunner

from synth.cli.app import app

runner = CliRunner()
ROWS = [{"id": f"r{i}", "text": f"row {i % 7} of the test set", "kind": "ab"[i % 2]} for i in range(20)]


def invoke(*args):
    return runner.invoke(app, [str(a) for a in args])


def one_error_line(result, code=2):
    assert result.exception is None or isinstance(result.exception, SystemExit), result.exception
    assert result.exit_code == code, (result.exit_code, result.output)
    lines = result.stderr.splitlines()
    assert len(lines) == 1 and lines[0].startswith("error: "), result.stderr
    return lines[0].removeprefix("error: ")


@pytest.fixture
def dataset(tmp_path):
    return write_synth_dataset(tmp_path / "in", ROWS, domain="toy")


def config(tmp_path, operations):
    path = tmp_path / "curate.yaml"
    path.write_text(yaml.safe_dump({"operations": operations}))
    return path


def test_curate_writes_out_and_inspect_shows_the_report(dataset, tmp_path):
    path = config(
        tmp_path, [{"kind": "exact_dedup", "text": {"columns": ["text"]}}, {"kind": "balance", "column": "kind"}]
    )
    result = invoke("curate", dataset, tmp_path / "out", "--config", path, "--json")
    assert result.exit_code == 0, result.output
    assert json.loads(result.stdout)["kept"] == 6
    shown = invoke("inspect", tmp_path / "out", "--json")
    report = json.loads(shown.stdout)["curation"]
    assert [op["dropped"] for op in report["operations"]] == [13, 1]
    assert report["operations"][0]["clusters"] == {"2": 1, "3": 6}


def test_unknown_column_names_the_config_field(dataset, tmp_path):
    path = config(tmp_path, [{"kind": "near_dedup", "text": {"columns": ["txt"]}}])
    line = one_error_line(invoke("curate", dataset, tmp_path / "out", "--config", path))
    assert line.startswith(
        f"{path}: field `operations.0.text.columns`: column `txt` is not in the input rows of {dataset}"
    )
    assert not (tmp_path / "out").exists()


def test_an_evaluation_file_that_does_not_parse_names_the_file_and_line(dataset, tmp_path):
    bad = tmp_path / "eval.jsonl"
    bad.write_text('{"q": "fine"}\n{"q": broken\n')
    eval_set = {"name": "ev", "path": str(bad), "columns": ["q"]}
    path = config(tmp_path, [{"kind": "decontaminate", "text": {"columns": ["text"]}, "eval_sets": [eval_set]}])
    line = one_error_line(invoke("curate", dataset, tmp_path / "out", "--config", path))
    assert line.startswith(f"{bad}:2: not valid JSON")
    assert not (tmp_path / "out").exists()


def test_an_evaluation_set_without_the_column_names_the_field(dataset, tmp_path):
    table = tmp_path / "eval.csv"
    table.write_text("question,answer\nwhat,that\n")
    eval_set = {"name": "ev", "path": str(table), "columns": ["prompt"]}
    path = config(tmp_path, [{"kind": "decontaminate", "text": {"columns": ["text"]}, "eval_sets": [eval_set]}])
    line = one_error_line(invoke("curate", dataset, tmp_path / "out", "--config", path))
    assert line.startswith(f"{table}: no column `prompt` (field `operations.0.eval_sets.0.columns`")
    assert not (tmp_path / "out").exists()


def test_an_input_that_is_not_a_synth_dataset_is_refused(tmp_path):
    folder = tmp_path / "plain"
    folder.mkdir()
    (folder / "rows.parquet").write_bytes(b"PAR1")
    path = config(tmp_path, [{"kind": "exact_dedup", "text": {"columns": ["text"]}}])
    line = one_error_line(invoke("curate", folder, tmp_path / "out", "--config", path))
    assert line == f"{folder}: no manifest.json here; is this a synth dataset directory?"
    assert not (tmp_path / "out").exists()


def test_a_bad_operation_field_is_one_line(dataset, tmp_path):
    path = config(tmp_path, [{"kind": "near_dedup", "text": {"columns": ["text"]}, "bands": 64}])
    line = one_error_line(invoke("curate", dataset, tmp_path / "out", "--config", path))
    assert line.startswith(f"{path}: field `operations.0.near_dedup`: bands x rows_per_band (64 x 6) exceeds num_perm")
    assert not (tmp_path / "out").exists()
