"""Stage kinds other than `generate`, by name (see synth.core.stage): `train` and `export`."""

from __future__ import annotations

from synth.core.stage import StageKind
from synth.pipelines.stage_kinds.export import ExportStageKind
from synth.pipelines.stage_kinds.train import TrainStageKind

STAGE_KINDS: dict[str, StageKind] = {"train": TrainStageKind(), "export": ExportStageKind()}
