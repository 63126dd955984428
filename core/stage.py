"""The stage contract: a named step of a multi-stage pipeline that reads the datasets of the stages it names.

A stage kind (`train`, `export`, later `curate`, `grpo`) implements one `StageKind`:
- `parse_settings(data)` validates the stage's own fields (everything in its config entry except `kind` and
  `inputs`) into a frozen pydantic model, raising pydantic's `ValidationError` (the engine renders it as
  `FILE: field `stages.NAME.FIELD`: ...`);
- `check(settings, inputs)` runs when the pipeline is built, before anything is written: it raises
  `ConfigError` when an input is of the wrong domain or shape (the engine prefixes the stage name); at that
  time upstream stages have not run, so `StageInput.manifest` is None for them;
- `run(settings, ctx)` writes everything the stage produces into `ctx.work` (a fresh temp folder that the engine
  renames to `OUT/<stage>/` only when `run` returns) and returns a JSON-ready summary (metrics, counts).

The engine writes `OUT/<stage>/manifest.json` (kind, fingerprint, inputs by path + manifest sha256 + rows,
output files with sha256, the summary); a `train` kind writes its model card (trainers/model_card.py) itself.
Stages that write a synth dataset (`generate`, `curate`) resume shard by shard; the others redo the stage
when it was interrupted.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any, ClassVar, Protocol

from synth.core.config import StrictModel


@dataclass(frozen=True)
class StageInput:
    """What a stage reads: the stage that wrote it, where, and what it is.

    `kind` is the producing stage's kind (`generate`, `export`, ...), `domain` the domain of its rows, `format`
    the export format when `kind` is `export`; `manifest` is the input's manifest once it exists.
    """

    name: str
    path: Path
    kind: str
    domain: str | None
    format: str | None = None
    manifest: Mapping[str, Any] | None = None


@dataclass(frozen=True)
class StageContext:
    """Where a running stage writes and what it reads."""

    name: str
    work: Path
    inputs: Sequence[StageInput]
    seed: int

    def only_input(self) -> StageInput:
        """The stage's single input (kinds that take exactly one check it in `check`)."""
        return self.inputs[0]


class StageKind(Protocol):
    """One kind of stage; see the module docstring."""

    kind: ClassVar[str]

    def parse_settings(self, data: Mapping[str, Any]) -> StrictModel:
        """Validate the stage's own fields (pydantic `ValidationError` on bad input)."""
        ...

    def check(self, settings: StrictModel, inputs: Sequence[StageInput]) -> None:
        """Raise `ConfigError` (message without the stage prefix) when the inputs do not suit the stage."""
        ...

    def run(self, settings: StrictModel, ctx: StageContext) -> dict[str, Any]:
        """Write the stage's outputs into `ctx.work` and return a JSON-ready summary."""
        ...
