"""The base of a `train` stage's trainer settings, and what a trainer hands back to the stage."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from pydantic import Field

from synth.core.config import StrictModel
from synth.core.stage import StageContext, StageInput
from synth.trainers.model_card import TrainedOn

MODEL_DIR = "model"
"""The trained model's folder inside the stage's folder (`OUT/<stage>/model/`, with its README.md card)."""


@dataclass(frozen=True)
class Trained:
    """A trainer's full result (JSON-ready) and the data it was trained on."""

    metrics: dict[str, Any]
    data: TrainedOn


class TrainSettings(StrictModel):
    """One trainer's settings: `check_inputs` when the pipeline is built, `train` into the model folder."""

    trainer: str
    seed: int | None = Field(None, description="seed of the trainer; null = the pipeline's seed")

    def check_inputs(self, inputs: Sequence[StageInput]) -> None:
        """Raise `ConfigError` (naming the field) when `inputs` do not suit this trainer."""
        raise NotImplementedError

    def train(self, ctx: StageContext, model_dir: Path, *, seed: int) -> Trained:
        """Train on `ctx`'s inputs, write the model into `model_dir` (new), return the result."""
        raise NotImplementedError
