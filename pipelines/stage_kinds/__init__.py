"""Stage kinds other than `generate`, by name (see synth.core.stage)."""

from __future__ import annotations

from synth.core.stage import StageKind

STAGE_KINDS: dict[str, StageKind] = {}
