"""Stage kinds other than `generate`, by name (see synth.core.stage): `train`, `export` and `curate`."""

from __future__ import annotations

from synth.core.stage import StageKind
from synth.pipelines.stage_kinds.curate import CurateStageKind
from synth.pipelines.stage_kinds.export import ExportStageKind
from synth.pipelines.stage_kinds.train import TrainStageKind

STAGE_KINDS: dict[str, StageKind] = {
    "train": TrainStageKind(),
    "export": ExportStageKind(),
    "curate": CurateStageKind(),
}
