"""Model cards: a trained model folder's README.md names its dataset; an existing card (peft's) is merged."""

from __future__ import annotations

from pathlib import Path

import yaml
from synth_datasets import write_synth_dataset

from synth.core.dataset import open_dataset
from synth.core.sink import sha256_file
from synth.trainers.model_card import (
    BEGIN,
    CARD_FILE,
    headline_metrics,
    read_model_card,
    trained_on_files,
    write_model_card,
)

PEFT_CARD = """---
base_model: /models/base-lm
library_name: peft
tags:
- lora
- transformers
---

# Model Card for Model ID

<!-- Provide a quick summary of what the model is/does. -->
"""


def toy_dataset(root: Path) -> Path:
    return write_synth_dataset(root, [{"value": v, "label": "even"} for v in (2, 4, 6)], domain="toy")


def test_the_card_names_the_dataset_trainer_settings_and_metrics(tmp_path: Path) -> None:
    dataset = open_dataset(toy_dataset(tmp_path / "ds"))
    path = write_model_card(
        tmp_path / "model",
        trainer="toy-fit",
        dataset=dataset,
        settings={"steps": 3, "out": tmp_path / "model"},
        metrics={"accuracy": 0.75, "per_class": {"even": 1.0}},
    )
    card = read_model_card(tmp_path / "model")
    assert card["dataset"] == {
        "path": str(tmp_path / "ds"),
        "domain": "toy",
        "rows": 3,
        "manifest_sha256": sha256_file(tmp_path / "ds" / "manifest.json"),
    }
    assert card["trainer"] == "toy-fit" and card["settings"] == {"steps": 3, "out": str(tmp_path / "model")}
    assert card["metrics"] == {"accuracy": 0.75}  # headline: the scalars of an unknown trainer's result
    text = path.read_text()
    assert f"on `{tmp_path / 'ds'}` (domain `toy`, 3 rows, manifest sha256 `{dataset.manifest_sha256}`)" in text
    assert "| accuracy | 0.75 |" in text and "| steps | `3` |" in text
    write_model_card(tmp_path / "model", trainer="toy-fit", dataset=dataset, settings={"steps": 3}, metrics={})
    assert path.read_text().count(BEGIN) == 1


def test_an_existing_card_is_merged_not_clobbered(tmp_path: Path) -> None:
    dataset = open_dataset(toy_dataset(tmp_path / "ds"))
    model = tmp_path / "adapter"
    model.mkdir()
    (model / CARD_FILE).write_text(PEFT_CARD)
    write_model_card(model, trainer="toy-fit", dataset=dataset, settings={}, metrics={"score": 1})
    first = (model / CARD_FILE).read_text()
    meta = yaml.safe_load(first.split("---\n")[1])
    assert meta["base_model"] == "/models/base-lm" and meta["library_name"] == "peft"
    assert meta["tags"] == ["synth", "synth-toy-fit", "lora", "transformers"]
    assert first.index(BEGIN) < first.index("# Model Card for Model ID")
    write_model_card(model, trainer="toy-fit", dataset=dataset, settings={}, metrics={"score": 1})
    assert (model / CARD_FILE).read_text() == first  # rewriting replaces synth's section in place


def test_plain_files_are_named_with_their_sha256(tmp_path: Path) -> None:
    messages, orderbook = tmp_path / "X_message_1.csv", tmp_path / "X_orderbook_1.csv"
    messages.write_text("1,1,1,1,1,1\n")
    orderbook.write_text("1,1,1,1\n")
    data = trained_on_files([messages, orderbook], domain="lob", rows=1)
    write_model_card(tmp_path / "m", trainer="toy", dataset=data, settings={}, metrics={})
    card = read_model_card(tmp_path / "m")
    assert card["dataset"]["path"] == str(messages) and card["dataset"]["manifest_sha256"] is None
    assert card["dataset"]["files"] == [
        {"path": str(messages), "sha256": sha256_file(messages)},
        {"path": str(orderbook), "sha256": sha256_file(orderbook)},
    ]
    assert f"| `{orderbook}` | `{sha256_file(orderbook)}` |" in (tmp_path / "m" / CARD_FILE).read_text()


def test_headline_of_a_papyrus_result_that_could_not_be_measured() -> None:
    result = {"task": "literary", "metric": "macro_f1", "measurable": False, "reason": "test split has 1 class(es)"}
    assert headline_metrics("papyrus", result) == {**result}
    assert read_model_card(Path("/nonexistent")) == {}
