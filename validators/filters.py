"""Generic filters usable by every domain."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

import polars as pl

from synth.core.records import verdict_column
from synth.core.steps import Filter


@dataclass(frozen=True, kw_only=True)
class VerdictFilter(Filter):
    """Drop rows that failed a verifier; the reason is `<verifier>:<its first reason>`."""

    verifiers: tuple[str, ...]

    @property
    def reads(self) -> tuple[str, ...]:  # type: ignore[override]
        return tuple(verdict_column(name) for name in self.verifiers)

    def keep(self, row: Mapping[str, Any]) -> bool | tuple[bool, str]:
        for name in self.verifiers:
            verdict = row[verdict_column(name)]
            if verdict is not None and not verdict["passed"]:
                reasons = verdict["reasons"] or ["failed"]
                return False, f"{name}:{reasons[0]}"
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

    def keep_frame(self, frame: pl.DataFrame) -> pl.Series:
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
        return frame.select(reason.alias("reason")).to_series()

    def keep(self, row: Mapping[str, Any]) -> bool | tuple[bool, str]:
        reason = self.keep_frame(pl.DataFrame([row])).item()
        return True if reason is None else (False, reason)
