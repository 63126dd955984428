"""The `curate` stage: the operations of `synth curate` over the datasets of the stages it names.

    curated: {kind: curate, inputs: [dialogues], operations: [{kind: exact_dedup, text: {preset: toolforge_question}}]}

Its fields are a curate config (`operations`, `shards`, `batch_rows`, `memory_budget_mb`, `card`). It writes a
synth dataset (the input's domain) into the stage folder, so later stages (`export`, `train`) read it like a
generate stage's; its manifest is the dataset's, with the stage's kind, fingerprint and summary added.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any, ClassVar

from synth.core.errors import ConfigError, InputError
from synth.core.stage import StageContext, StageInput
from synth.pipelines.curation.config import CurateConfig
from synth.pipelines.stage_kinds.inputs import DATASET_KINDS, describe

READER = "a curate stage"


class CurateStageKind:
    """The `curate` stage kind (see the module docstring)."""

    kind: ClassVar[str] = "curate"

    def parse_settings(self, data: Mapping[str, Any]) -> CurateConfig:
        """Validate the curate config (pydantic `ValidationError` on bad input)."""
        return CurateConfig.model_validate(dict(data))

    def check(self, settings: CurateConfig, inputs: Sequence[StageInput]) -> None:
        """Refuse no inputs, inputs that are not synth datasets, mixed domains, and (for dataset paths, whose
        schema is known now) columns the rows lack."""
        if not inputs:
            msg = f"`inputs`: {READER} reads one or more synth datasets, got none"
            raise ConfigError(msg)
        for item in inputs:
            if item.kind not in DATASET_KINDS:
                msg = f"`inputs`: {READER} reads synth datasets, but {describe(item)} is not one"
                raise ConfigError(msg)
        domains = sorted({str(item.domain) for item in inputs})
        if len(domains) > 1:
            msg = f"`inputs`: {READER} merges datasets of one domain, got {domains}"
            raise ConfigError(msg)
        paths = [item.path for item in inputs if item.kind == "dataset"]
        if len(paths) == len(inputs):
            from synth.pipelines.curation.inputs import open_inputs
            from synth.pipelines.curation.operations import check_operations

            try:
                opened = open_inputs(paths)
            except InputError as error:
                raise ConfigError(f"`inputs`: {error}") from None
            check_operations(settings, opened.polars_schema, source="", inputs=opened.describe())

    def run(self, settings: CurateConfig, ctx: StageContext) -> dict[str, Any]:
        """Curate the inputs into `ctx.work` and return the per-operation counts."""
        from synth.pipelines.curation.engine import curate

        summary = curate([item.path for item in ctx.inputs], ctx.work, settings, source=f"stage `{ctx.name}`")
        report = summary.report
        dropped = {op["name"]: op["dropped"] for op in report["operations"]}
        return {"rows": report["rows"], "kept": report["kept"], "dropped": dropped}
