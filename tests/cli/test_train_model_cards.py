"""`synth train sft|papyrus fit|lob` write a model card (README.md) naming the data each model was trained on."""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path

import pyarrow as pa
import pytest
import typer
from stage_datasets import make_dataset
from synth_datasets import write_synth_dataset
from toolforge_rows import fixture_rows
from typer.testing import CliRunner

from synth.cli.train import register
from synth.core.sink import sha256_file
from synth.trainers.model_card import BEGIN, CARD_FILE, read_model_card
from synth.validators.toolforge.records import TOOLFORGE_SCHEMA

runner = CliRunner()
app = typer.Typer()
register(app)


@app.callback()
def root() -> None:
    """A stand-in for the `synth` root, so `train` is a sub-command as it is there."""


def invoke(*args: object) -> object:
    result = runner.invoke(app, [str(a) for a in args])
    assert result.exit_code == 0, result.output
    return result


def manifest_of(dataset: Path) -> dict:
    manifest = json.loads((dataset / "manifest.json").read_text())
    return {
        "path": str(dataset),
        "rows": manifest["totals"]["rows"],
        "manifest_sha256": sha256_file(dataset / "manifest.json"),
    }


@pytest.fixture
def one_thread() -> Iterator[None]:
    torch = pytest.importorskip("torch")
    previous = torch.get_num_threads()
    torch.set_num_threads(1)
    yield
    torch.set_num_threads(previous)


def test_papyrus_fit_names_its_dataset_and_a_refit_keeps_one_card(tmp_path):
    dataset = make_dataset("papyrus", tmp_path / "corpus")
    args = ("train", "papyrus", "fit", dataset, "--task", "dating", "--eval-cers", "0,0.2", "--out", tmp_path / "m")
    invoke(*args, "--json")
    card = read_model_card(tmp_path / "m")
    assert card["dataset"] == {**manifest_of(dataset), "domain": "papyrus"}
    assert card["trainer"] == "papyrus" and card["settings"]["eval_cers"] == [0.0, 0.2]
    assert card["metrics"]["metric"] == "mae_years" and "mae_years_cer_0.2" in card["metrics"]
    invoke(*args, "--overwrite", "--seed", "3")
    assert read_model_card(tmp_path / "m")["settings"]["seed"] == 3
    assert (tmp_path / "m" / CARD_FILE).read_text().count(BEGIN) == 1


def test_lob_names_the_lobster_files_it_was_fit_on(tmp_path):
    from synth.generators.lob.export import export_dataset

    export_dataset(make_dataset("lob", tmp_path / "rollouts"), tmp_path / "lobster", limit=1)
    messages = next((tmp_path / "lobster").glob("*/*_message_*.csv"))
    orderbook = messages.with_name(messages.name.replace("_message_", "_orderbook_"))
    invoke("train", "lob", "--messages", messages, "--out", tmp_path / "m", "--json")
    card = read_model_card(tmp_path / "m")
    assert card["dataset"]["rows"] == 120 and card["dataset"]["domain"] == "lob"
    assert card["dataset"]["files"] == [
        {"path": str(messages), "sha256": sha256_file(messages)},
        {"path": str(orderbook), "sha256": sha256_file(orderbook)},
    ]
    assert card["metrics"]["train_messages"] == 72 and card["settings"]["orderbook"] == str(orderbook)


def test_sft_names_its_dataset(tmp_path, one_thread):
    table = pa.Table.from_pylist(fixture_rows(), schema=TOOLFORGE_SCHEMA)
    table = table.add_column(0, "id", pa.array([f"r{i}" for i in range(table.num_rows)]))
    dataset = write_synth_dataset(tmp_path / "ds", table, domain="toolforge")
    invoke("train", "sft", dataset, "--out", tmp_path / "m", "--steps", "1", "--eval-rows", "1",
           "--batch-size", "1", "--max-new-tokens", "4", "--json")  # fmt: skip
    card = read_model_card(tmp_path / "m")
    assert card["dataset"] == {**manifest_of(dataset), "rows": 2, "domain": "toolforge"}
    assert card["settings"]["steps"] == 1 and card["metrics"]["held_out_dialogues"] == 1
