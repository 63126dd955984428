"""`trainer: papyrus`: a classifier on a Papyrus CER dataset, scored per CER level (`synth train papyrus fit`)."""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path
from typing import Any, Literal

from pydantic import Field, NonNegativeFloat, PositiveInt

from synth.core.stage import StageContext, StageInput
from synth.pipelines.stage_kinds.inputs import require_dataset
from synth.pipelines.stage_kinds.training import Trained, TrainSettings
from synth.trainers.model_card import TrainedOn


class PapyrusTraining(TrainSettings):
    """Train at `train_cer` on the train split, measure on the test split at every `eval_cers` level."""

    trainer: Literal["papyrus"]
    task: Literal["literary", "doctype", "subtype", "dating"]
    model: Literal["tfidf", "charcnn", "bytes", "fasttext"] = "tfidf"
    train_cer: NonNegativeFloat = Field(0.0, description="CER of the training texts; 0 = the clean texts")
    eval_cers: list[NonNegativeFloat] = Field(
        default_factory=lambda: [0.0, 0.05, 0.2], min_length=1, description="test CER levels (each in the dataset)"
    )
    variant: str | None = Field(None, description="error shape of the noisy texts; null = every variant pooled")
    params: dict[str, Any] = Field(default_factory=dict, description="model hyper-parameters, e.g. {epochs: 5}")
    min_class_count: PositiveInt = Field(3, description="doctype/subtype: drop classes with fewer train documents")

    def check_inputs(self, inputs: Sequence[StageInput]) -> None:
        require_dataset(inputs, domains=("papyrus",), reader="trainer `papyrus`")

    def train(self, ctx: StageContext, model_dir: Path, *, seed: int) -> Trained:
        from synth.core.dataset import open_dataset
        from synth.trainers.papyrus.data import read_papyrus_dataset
        from synth.trainers.papyrus.evaluate import train_and_evaluate

        dataset = open_dataset(ctx.only_input().path, domain="papyrus", needs="papyrus training")
        result = train_and_evaluate(
            read_papyrus_dataset(dataset.root),
            task=self.task,
            model=self.model,
            train_cer=self.train_cer,
            eval_cers=self.eval_cers,
            variant=self.variant,
            seed=seed,
            params=self.params,
            min_class_count=self.min_class_count,
            out=model_dir,
        )
        return Trained(result, TrainedOn.of_dataset(dataset))
