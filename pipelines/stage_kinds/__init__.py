"""Stage kinds other than `generate`, by name (see synth.core.stage): `export`."""

from __future__ import annotations

from synth.core.stage import StageKind
from synth.pipelines.stage_kinds.export import ExportStageKind

STAGE_KINDS: dict[str, StageKind] = {"export": ExportStageKind()}
