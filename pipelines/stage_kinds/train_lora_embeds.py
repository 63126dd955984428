"""`trainer: lora-embeds`: LoRA on a DASA/GRADMM dataset's rows, scored by held-out exact match.

The settings of `synth train lora-embeds`, except that the reference LM defaults to the one the input dataset was
made with (its manifest's `input.model_dir`) and `--inputs` is `train_on` (`inputs` names the stage's inputs).
The adapter is saved into the model folder (peft's files and card, merged with synth's) with `metrics.json`.
"""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any, Literal

from pydantic import Field, PositiveInt

from synth.core.errors import ConfigError, InputError
from synth.core.sink import write_json_atomic
from synth.core.stage import StageContext, StageInput
from synth.pipelines.stage_kinds.inputs import require_dataset
from synth.pipelines.stage_kinds.training import Trained, TrainSettings
from synth.trainers.model_card import TrainedOn

METRICS_FILE = "metrics.json"


class LoraEmbedsTraining(TrainSettings):
    """LoRA fine-tuning (peft) of the reference LM directly on the dataset's embedding (or token) rows."""

    trainer: Literal["lora-embeds"]
    model: str | None = Field(None, description="the reference LM; null = the one recorded in the input's manifest")
    train_on: Literal["embeds", "ids"] = Field("embeds", description="inputs_embeds rows, or their token ids")
    task: str | None = Field(None, description="task to evaluate on; null = the dataset's")
    test_rows: PositiveInt = Field(100, description="held-out prompts scored by exact match")
    eval_seed: int = Field(10_000, description="seed of the held-out prompts")
    steps: PositiveInt = 200
    rank: PositiveInt = 8

    def check_inputs(self, inputs: Sequence[StageInput]) -> None:
        item = require_dataset(inputs, domains=("dasa",), reader="trainer `lora-embeds`")
        if self.model is None and item.manifest is not None and recorded_model(item.manifest) is None:
            msg = f"`model`: the manifest of `{item.name}` records no reference model (`input.model_dir`); set `model`"
            raise ConfigError(msg)

    def train(self, ctx: StageContext, model_dir: Path, *, seed: int) -> Trained:
        from synth.core.dataset import open_dataset
        from synth.generators.dasa.base_lm import load_reference
        from synth.generators.dasa.generator import META_SETTINGS
        from synth.generators.dasa.lora import exact_match, train_lora
        from synth.generators.dasa.tasks import make_pairs
        from synth.trainers.dasa.data import ReferenceMismatchError, load_rows

        dataset = open_dataset(ctx.only_input().path, domain="dasa", needs="LoRA on embeddings")
        model = self.model or recorded_model(dataset.manifest)
        if model is None:
            msg = f"{dataset.root}: manifest.json records no reference model (`input.model_dir`); set `model`"
            raise InputError(msg)
        try:
            reference = load_reference(model)
            rows = load_rows(dataset.root, reference, inputs=self.train_on)
        except (ReferenceMismatchError, FileNotFoundError) as error:
            raise InputError(str(error)) from error
        task = self.task or str(json.loads(dataset.metadata(META_SETTINGS.decode()) or "{}")["task"])
        adapter = train_lora(reference, rows, seed=seed, steps=self.steps, rank=self.rank)
        try:
            score = exact_match(adapter, reference.tokenizer, make_pairs(task, self.test_rows, seed=self.eval_seed))
            adapter.save_pretrained(model_dir)
        finally:
            reference.model = adapter.unload()
        metrics = {
            "dataset": str(dataset.root),
            "reference": reference.model_id,
            "task": task,
            "train_rows": len(rows),
            "test_rows": self.test_rows,
            "exact_match": score,
        }
        write_json_atomic(model_dir / METRICS_FILE, metrics, sort_keys=True)
        return Trained(metrics, TrainedOn.of_dataset(dataset))


def recorded_model(manifest: Mapping[str, Any]) -> str | None:
    """The reference LM directory a DASA dataset's manifest records (`input.model_dir`), if any."""
    value = (manifest.get("input") or {}).get("model_dir")
    return str(value) if value else None
