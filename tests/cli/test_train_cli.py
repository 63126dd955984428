"""`synth train papyrus fit|eval` through typer's test runner, on a dataset made by the real pipeline."""

import json

import pytest
import typer
from typer.testing import CliRunner

from synth.cli.train import register
from synth.core.config import parse_config
from synth.pipelines.execution import run_local
from synth.pipelines.papyrus import PapyrusConfig

runner = CliRunner()
app = typer.Typer()
register(app)


@app.callback()
def root() -> None:
    """A stand-in for the `synth` root, so `train` is a sub-command as it is there."""


def invoke(*args):
    return runner.invoke(app, [str(a) for a in args])


@pytest.fixture(scope="module")
def dataset(tmp_path_factory):
    generator = {"levels": [0.05, 0.2], "variants": ["uniform"]}
    if "sources" in PapyrusConfig.model_fields:
        generator["sources"] = ["epidoc"]
    out = tmp_path_factory.mktemp("train-cli") / "papyrus"
    run_local(parse_config({"domain": "papyrus", "seed": 0, "shards": 1, "generator": generator}), out)
    return out


def test_fit_then_eval_reports_identical_metrics(dataset, tmp_path):
    model_dir = tmp_path / "doctype-tfidf"
    fit = invoke(
        "train", "papyrus", "fit", dataset, "--task", "doctype", "--model", "tfidf", "--train-cer", "0",
        "--eval-cers", "0,0.05,0.2", "--variant", "uniform", "--seed", "0", "--out", model_dir, "--json",
    )  # fmt: skip
    assert fit.exit_code == 0, fit.output
    fitted = json.loads(fit.stdout)
    assert fitted["measurable"] and [e["cer"] for e in fitted["results"]] == [0.0, 0.05, 0.2]
    saved = {p.name for p in model_dir.iterdir()}
    assert {"model.json", "training.json", "metrics.json", "tfidf_vocabulary.json", "tfidf_coef.npy"} <= saved
    assert not any(name.endswith((".joblib", ".pkl", ".pickle")) for name in saved)
    assert json.loads((model_dir / "metrics.json").read_text()) == fitted

    again = invoke("train", "papyrus", "eval", model_dir, dataset, "--json")
    assert again.exit_code == 0, again.output
    assert json.loads(again.stdout) == fitted

    table = invoke("train", "papyrus", "eval", model_dir, dataset, "--eval-cers", "0.2")
    assert table.exit_code == 0, table.output
    assert "macro_f1" in table.stdout and "20 %" in table.stdout and "retention" in table.stdout


def test_a_dataset_of_another_domain_exits_2_with_one_line(tmp_path, toy_payload):
    run_local(parse_config(toy_payload), tmp_path / "toy")
    result = invoke("train", "papyrus", "fit", tmp_path / "toy", "--task", "literary")
    assert result.exit_code == 2
    lines = result.output.strip().splitlines()
    assert len(lines) == 1 and "domain" in lines[0] and "papyrus" in lines[0]


def test_an_unmeasurable_task_is_reported_not_crashed(dataset, tmp_path):
    args = ("train", "papyrus", "fit", dataset, "--task", "subtype", "--min-class-count", "50", "--out", tmp_path / "s")
    result = invoke(*args, "--json")
    assert result.exit_code == 0, result.output
    report = json.loads(result.stdout)
    assert report["measurable"] is False and report["reason"] and report["results"] == []
    again = invoke("train", "papyrus", "eval", tmp_path / "s", dataset)
    assert again.exit_code == 2 and "not measurable" in again.output


def test_bad_options_exit_2(dataset, tmp_path):
    assert invoke("train", "papyrus", "fit", dataset, "--task", "dating", "--eval-cers", "0,x").exit_code == 2
    assert invoke("train", "papyrus", "fit", dataset, "--task", "dating", "--eval-cers", "0.1").exit_code == 2
    assert invoke("train", "papyrus", "fit", dataset, "--task", "colour").exit_code == 2
    unknown = invoke("train", "papyrus", "fit", dataset, "--task", "dating", "--param", "nope=1")
    assert unknown.exit_code == 2 and "no parameter `nope`" in unknown.output
    assert invoke("train", "papyrus", "eval", tmp_path, dataset).exit_code == 2


def test_an_existing_model_dir_needs_overwrite(dataset, tmp_path):
    args = ("train", "papyrus", "fit", dataset, "--task", "dating", "--eval-cers", "0", "--out", tmp_path / "m")
    assert invoke(*args).exit_code == 0
    refused = invoke(*args)
    assert refused.exit_code == 3 and "--overwrite" in refused.output
    assert invoke(*args, "--overwrite").exit_code == 0


@pytest.mark.parametrize("command", ["fit", "eval"])
def test_every_option_has_help_text(command):
    group = typer.main.get_command(app)
    click_command = group.commands["train"].commands["papyrus"].commands[command]
    assert click_command.help
    for param in click_command.params:
        assert getattr(param, "help", None), f"{command} {param.name} has no help"
    assert invoke("train", "papyrus", command, "--help").exit_code == 0
