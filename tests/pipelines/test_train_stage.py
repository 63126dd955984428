"""The train stage on tiny real datasets: each trainer writes its model and a card naming the data it read."""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path

import pytest
from stage_datasets import dataset_input, stage_context, tiny_payload

from synth.core.errors import InputError
from synth.core.sink import sha256_file
from synth.core.stage import StageInput
from synth.pipelines.stage_engine import run_stages_local
from synth.pipelines.stage_kinds import STAGE_KINDS
from synth.pipelines.stages import parse_stages
from synth.trainers.model_card import CARD_FILE, read_model_card

TRAIN = STAGE_KINDS["train"]


@pytest.fixture(autouse=True)
def one_thread() -> Iterator[None]:
    """One torch thread: on a shared 2-core machine two threads fighting other jobs run several times slower."""
    torch = pytest.importorskip("torch")
    previous = torch.get_num_threads()
    torch.set_num_threads(1)
    yield
    torch.set_num_threads(previous)


def train(tmp_path: Path, inputs: list[StageInput], *, seed: int = 4, **fields: object) -> tuple[Path, dict]:
    """Check and run a train stage into a fresh work folder; (model folder, summary)."""
    settings = TRAIN.parse_settings(fields)
    TRAIN.check(settings, inputs)
    ctx = stage_context(tmp_path / "work", *inputs, seed=seed)
    return ctx.work / "model", TRAIN.run(settings, ctx)


def assert_card_names(model: Path, dataset: Path, *, domain: str, rows: int) -> dict:
    card = read_model_card(model)
    assert card["dataset"] == {
        "path": str(dataset),
        "domain": domain,
        "rows": rows,
        "manifest_sha256": sha256_file(dataset / "manifest.json"),
    }
    return card


def test_sft_trains_a_tiny_lm_and_names_its_dataset(tmp_path, toolforge_dataset):
    fields = {"trainer": "sft", "steps": 2, "eval_rows": 1, "batch_size": 1, "max_new_tokens": 4}
    model, summary = train(tmp_path, [dataset_input(toolforge_dataset, "toolforge")], **fields)
    assert {"config.json", "model.safetensors", "tokenizer.json", "metrics.json", CARD_FILE} <= {
        p.name for p in model.iterdir()
    }
    card = assert_card_names(model, toolforge_dataset, domain="toolforge", rows=4)
    assert card["trainer"] == "sft" and card["settings"]["seed"] == 4 and card["settings"]["steps"] == 2
    assert card["metrics"] == summary["headline"] and summary["headline"]["held_out_dialogues"] == 1
    assert summary["metrics"] == json.loads((model / "metrics.json").read_text())
    assert summary["trained_on"] == card["dataset"] and summary["model"] == "model"


def test_papyrus_fits_and_the_setting_seed_wins(tmp_path, papyrus_dataset):
    fields = {"trainer": "papyrus", "task": "dating", "eval_cers": [0.05, 0.2], "seed": 9}
    model, _ = train(tmp_path, [dataset_input(papyrus_dataset, "papyrus")], **fields)
    assert {"model.json", "training.json", "metrics.json", CARD_FILE} <= {p.name for p in model.iterdir()}
    assert json.loads((model / "training.json").read_text())["seed"] == 9
    rows = json.loads((papyrus_dataset / "manifest.json").read_text())["totals"]["rows"]
    card = assert_card_names(model, papyrus_dataset, domain="papyrus", rows=rows)
    assert card["settings"]["seed"] == 9 and card["metrics"]["measurable"] is True
    assert set(card["metrics"]) >= {"mae_years_clean", "mae_years_cer_0.05", "mae_years_cer_0.2"}


def test_lora_embeds_saves_the_adapter_and_merges_peft_card(tmp_path, dasa_dataset):
    fields = {"trainer": "lora-embeds", "steps": 2, "rank": 2, "test_rows": 4}
    model, summary = train(tmp_path, [dataset_input(dasa_dataset, "dasa")], **fields)
    assert {"adapter_config.json", "adapter_model.safetensors", "metrics.json", CARD_FILE} <= {
        p.name for p in model.iterdir()
    }
    card = assert_card_names(model, dasa_dataset, domain="dasa", rows=2)
    assert card["metrics"] == {"task": "shift", "test_rows": 4, "exact_match": summary["metrics"]["exact_match"]}
    text = (model / CARD_FILE).read_text()
    assert "library_name: peft" in text and "# lora-embeds model trained by synth" in text


def test_lob_fits_a_lobster_export_stage_through_the_engine(tmp_path):
    stages = {
        "rollouts": {"kind": "generate", **tiny_payload("lob")},
        "lobster": {"kind": "export", "inputs": ["rollouts"], "format": "lobster"},
        "fit": {"kind": "train", "inputs": ["lobster"], "trainer": "lob"},
    }
    out = tmp_path / "out"
    summary = run_stages_local(parse_stages({"seed": 1, "stages": stages}), out)
    assert summary.executed == ["rollouts", "lobster", "fit"]
    model = out / "fit" / "model"
    assert (model / "lob_model.json").is_file()
    card = read_model_card(model)
    export = json.loads((out / "lobster" / "manifest.json").read_text())
    digests = {entry["path"]: entry["sha256"] for entry in export["files"]}
    first = min(Path(p).parent.as_posix() for p in digests if p.endswith(".csv"))
    assert card["dataset"]["path"] == str(out / "lobster") and card["dataset"]["domain"] == "lob"
    assert card["dataset"]["manifest_sha256"] == sha256_file(out / "lobster" / "manifest.json")
    assert card["dataset"]["rows"] == 120 and len(card["dataset"]["files"]) == 2
    for entry in card["dataset"]["files"]:
        relative = Path(entry["path"]).relative_to(out / "lobster").as_posix()
        assert relative.startswith(first + "/") and digests[relative] == entry["sha256"]
    assert card["metrics"]["train_messages"] == 72 and card["metrics"]["pointer"] == "logit"
    stage = json.loads((out / "fit" / "manifest.json").read_text())
    assert stage["inputs"][0]["name"] == "lobster" and stage["summary"]["trained_on"] == card["dataset"]

    changed = next((out / "lobster").glob(f"{first}/*_orderbook_*.csv"))
    changed.write_text(changed.read_text().replace("\n", "\n", 1) + "\n")
    item = StageInput("lobster", out / "lobster", "export", "lob", "lobster")
    with pytest.raises(InputError, match=r"_orderbook_10\.csv: missing or changed since the export"):
        train(tmp_path, [item], trainer="lob")


def test_lob_fits_explicit_files_without_inputs(tmp_path, lob_dataset):
    from synth.generators.lob.export import export_dataset

    export_dataset(lob_dataset, tmp_path / "lobster", limit=1)
    messages = next((tmp_path / "lobster").glob("*/*_message_*.csv"))
    model, summary = train(tmp_path, [], trainer="lob", messages=str(messages), train_fraction=0.5)
    card = read_model_card(model)
    orderbook = messages.with_name(messages.name.replace("_message_", "_orderbook_"))
    assert card["dataset"]["path"] == str(messages) and card["dataset"]["manifest_sha256"] is None
    assert [f["sha256"] for f in card["dataset"]["files"]] == [sha256_file(messages), sha256_file(orderbook)]
    assert summary["metrics"]["train_fraction"] == 0.5 and summary["metrics"]["source"] == messages.name


def test_a_second_dataset_of_another_domain_fails_at_run_time_with_one_line(tmp_path, toolforge_dataset):
    settings = TRAIN.parse_settings({"trainer": "papyrus", "task": "dating"})
    ctx = stage_context(tmp_path / "work", dataset_input(toolforge_dataset, "papyrus"))
    with pytest.raises(InputError, match=r"a 'toolforge' dataset, but papyrus training needs a 'papyrus' dataset"):
        TRAIN.run(settings, ctx)
