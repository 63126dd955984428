"""The `train` stage: train a model on its input and write it, with a model card, to `OUT/<stage>/model/`.

    sft:     {kind: train, inputs: [dialogues], trainer: sft, steps: 20, eval_rows: 4}
    papyrus: {kind: train, inputs: [corpus], trainer: papyrus, task: dating}
    lob:     {kind: train, inputs: [lobster], trainer: lob}          # an export stage with `format: lobster`

`trainer` picks the settings (those of the matching `synth train` command): `sft` reads a toolforge dataset,
`papyrus` a papyrus one, `lora-embeds` a dasa one, `lob` a lobster export or explicit files. Rows are read through
`synth.core.dataset`; `seed` defaults to the pipeline's. The model card (`model/README.md`) names the data (path,
manifest sha256, rows, domain), the trainer, its settings and the headline metrics; the summary holds the same
plus the trainer's full figures.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any, ClassVar

from synth.core.stage import StageContext, StageInput
from synth.pipelines.stage_kinds.tagged import parse_tagged
from synth.pipelines.stage_kinds.train_lob import LobTraining
from synth.pipelines.stage_kinds.train_lora_embeds import LoraEmbedsTraining
from synth.pipelines.stage_kinds.train_papyrus import PapyrusTraining
from synth.pipelines.stage_kinds.train_sft import SftTraining
from synth.pipelines.stage_kinds.training import MODEL_DIR, TrainSettings
from synth.trainers.model_card import headline_metrics, write_model_card

TRAINERS: dict[str, type[TrainSettings]] = {
    "sft": SftTraining,
    "papyrus": PapyrusTraining,
    "lora-embeds": LoraEmbedsTraining,
    "lob": LobTraining,
}


class TrainStageKind:
    """The `train` stage kind (see the module docstring)."""

    kind: ClassVar[str] = "train"

    def parse_settings(self, data: Mapping[str, Any]) -> TrainSettings:
        """Validate `trainer` and its settings (pydantic `ValidationError` on bad input)."""
        return parse_tagged(data, tag="trainer", members=TRAINERS)

    def check(self, settings: TrainSettings, inputs: Sequence[StageInput]) -> None:
        """Refuse inputs of the wrong number, kind or domain for the trainer (`ConfigError` naming the field)."""
        settings.check_inputs(inputs)

    def run(self, settings: TrainSettings, ctx: StageContext) -> dict[str, Any]:
        """Train into `ctx.work/model/`, write its card, and return the trainer, the data and the metrics."""
        seed = ctx.seed if settings.seed is None else settings.seed
        model_dir = ctx.work / MODEL_DIR
        trained = settings.train(ctx, model_dir, seed=seed)
        used = {**settings.model_dump(mode="json", exclude={"trainer"}), "seed": seed}
        write_model_card(
            model_dir, trainer=settings.trainer, dataset=trained.data, settings=used, metrics=trained.metrics
        )
        return {
            "trainer": settings.trainer,
            "model": MODEL_DIR,
            "trained_on": trained.data.to_dict(),
            "headline": headline_metrics(settings.trainer, trained.metrics),
            "metrics": trained.metrics,
        }
