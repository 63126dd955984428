"""A test stage kind (`sum`) and a three-stage toy pipeline, shared by the local and Prefect stage tests."""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from typing import Any, ClassVar

from synth.core.config import StrictModel
from synth.core.dataset import read_rows
from synth.core.errors import ConfigError
from synth.core.stage import StageContext, StageInput


class SumSettings(StrictModel):
    scale: int = 1
    fail: bool = False


class SumStage:
    """A test stage kind: sums the `value` column of its toy inputs times `scale` into total.json."""

    kind: ClassVar[str] = "sum"
    runs: ClassVar[list[str]] = []

    def parse_settings(self, data: Mapping[str, Any]) -> SumSettings:
        return SumSettings.model_validate(dict(data))

    def check(self, settings: SumSettings, inputs: Sequence[StageInput]) -> None:
        if not inputs or any(item.domain != "toy" for item in inputs):
            msg = f"a sum stage reads toy datasets (got {[item.domain for item in inputs]})"
            raise ConfigError(msg)

    def run(self, settings: SumSettings, ctx: StageContext) -> dict[str, Any]:
        SumStage.runs.append(ctx.name)
        total = sum(int(read_rows(item.path, columns=["value"])["value"].sum()) for item in ctx.inputs)
        (ctx.work / "total.json").write_text(json.dumps({"total": total * settings.scale}))
        if settings.fail:
            raise RuntimeError("stage failed half-way")
        return {"total": total * settings.scale}


def three_stages(scale: int = 1, *, fail: bool = False) -> dict[str, Any]:
    return {
        "seed": 3,
        "stages": {
            "total": {"kind": "sum", "inputs": ["evens", "more"], "scale": scale, "fail": fail},
            "evens": {"kind": "generate", "domain": "toy", "shards": 3, "generator": {"rows_per_shard": 12}},
            "more": {"kind": "generate", "domain": "toy", "seed": 5, "generator": {"rows_per_shard": 6}},
        },
    }
