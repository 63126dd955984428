"""Generic filters usable by every domain."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

import polars as pl

from synth.core.records import split_reason, verdict_column
from synth.core.steps import Decision, Filter


@dataclass(frozen=True, kw_only=True)
class VerdictFilter(Filter):
    """Drop rows that failed a verifier; the code is `<verifier>:<its first reason's code>`, the detail all of
    that verifier's reasons."""

    verifiers: tuple[str, ...]

    @property
    def reads(self) -> tuple[str, ...]:  # type: ignore[override]
        return tuple(verdict_column(name) for name in self.verifiers)

    def keep_frame(self, frame: pl.DataFrame) -> pl.DataFrame:
        """Vectorised: a null or passed verdict keeps the row; only failed rows are read one by one (`keep`)."""
        if not self.reads:  # a domain without verifiers: every row is kept
            return self.decide_rows(frame, [])
        failed = pl.any_horizontal(
            [
                pl.col(column).is_not_null() & pl.col(column).struct.field("passed").not_().fill_null(True)
                for column in self.reads
            ]
        )
        return self.decide_rows(frame, frame.select(pl.arg_where(failed)).to_series().to_list())

    def keep(self, row: Mapping[str, Any]) -> Decision:
        for name in self.verifiers:
            verdict = row[verdict_column(name)]
            if verdict is not None and not verdict["passed"]:
                reasons = verdict["reasons"] or ["failed"]
                code, detail = split_reason(reasons[0])
                return False, f"{name}:{code}", ("; ".join(reasons) if len(reasons) > 1 or detail else "")
        return True


@dataclass(frozen=True, kw_only=True)
class RangeFilter(Filter):
    """Drop rows whose numeric `column` is null or lies outside [min, max]."""

    column: str
    min: float | None = None
    max: float | None = None

    @property
    def reads(self) -> tuple[str, ...]:  # type: ignore[override]
        return (self.column,)

    def keep_frame(self, frame: pl.DataFrame) -> pl.DataFrame:
        value = pl.col(self.column)
        reason = (
            pl.when(value.is_null())
            .then(pl.lit(f"{self.column}_missing"))
            .when(pl.lit(self.min is not None) & (value < (self.min if self.min is not None else 0)))
            .then(pl.lit(f"{self.column}_below_min"))
            .when(pl.lit(self.max is not None) & (value > (self.max if self.max is not None else 0)))
            .then(pl.lit(f"{self.column}_above_max"))
            .otherwise(pl.lit(None, dtype=pl.String))
        )
        detail = pl.when(reason.is_not_null()).then(pl.format("{}={}", pl.lit(self.column), value.cast(pl.String)))
        return frame.select(reason.alias("reason"), detail.alias("detail"))

    def keep(self, row: Mapping[str, Any]) -> Decision:
        decision = self.keep_frame(pl.DataFrame([row])).row(0, named=True)
        return True if decision["reason"] is None else (False, decision["reason"], decision["detail"] or "")
