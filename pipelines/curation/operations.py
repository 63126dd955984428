"""Per-operation checks against the input schema and the polars expressions of the row-local operations.

A row-local operation (filters, quality rules) gives a `drop` boolean per row and, for dropped rows, a detail
string with the values behind the decision; dataset-level operations (dedup, decontamination, balance) are
resolved over all rows by `synth.pipelines.curation.engine`.
"""

from __future__ import annotations

from collections.abc import Mapping

import polars as pl

from synth.core.errors import ConfigError
from synth.pipelines.curation.config import (
    Balance,
    CurateConfig,
    Decontaminate,
    ExactDedup,
    LengthFilter,
    NearDedup,
    Operation,
    QualityFilter,
    RangeFilter,
    RegexFilter,
    TextSpec,
    VerdictFilter,
)
from synth.validators.curation.text import column_text, is_ascii, normalized, text_expr

ROW_LOCAL = (VerdictFilter, RangeFilter, RegexFilter, LengthFilter, QualityFilter)
TEXT_OPS = (ExactDedup, NearDedup, Decontaminate, LengthFilter)


def check_operations(config: CurateConfig, schema: Mapping[str, pl.DataType], *, source: str, inputs: str) -> None:
    """Refuse, before anything is read or written, an operation naming a column the input rows lack or cannot use."""
    for index, op in enumerate(config.operations):
        field = f"operations.{index}"
        if isinstance(op, VerdictFilter):
            _check_verdicts(op, schema, field=field, source=source, inputs=inputs)
            continue
        if isinstance(op, TEXT_OPS):
            sub = f"{field}.text.{'columns' if op.text.columns is not None else 'preset'}"
        else:
            sub = f"{field}.column" if hasattr(op, "column") else f"{field}.preset"
        for column in op.reads():
            if column not in schema:
                shown = ", ".join(list(schema)[:12])
                where = f"{_at(source)}field `{sub}`"
                msg = f"{where}: column `{column}` is not in the input rows of {inputs} (columns: {shown})"
                raise ConfigError(msg)
            if (
                isinstance(op, TEXT_OPS)
                and op.text.preset != "milp_canonical"
                and column_text(column, schema[column]) is None
            ):
                what = f"column `{column}` is {schema[column]}"
                msg = f"{_at(source)}field `{sub}`: {what}; text is read from strings or lists of strings"
                raise ConfigError(msg)
        if isinstance(op, RangeFilter) and not schema[op.column].is_numeric():
            msg = f"{_at(source)}field `{field}.column`: column `{op.column}` is {schema[op.column]}, not numeric"
            raise ConfigError(msg)
        if isinstance(op, RegexFilter):
            try:
                pl.Series([""]).str.contains(op.pattern)
            except pl.exceptions.PolarsError as error:
                first = str(error).strip().splitlines()[0][:160]
                msg = f"{_at(source)}field `{field}.pattern`: not a valid regular expression ({first})"
                raise ConfigError(msg) from None


def _at(source: str) -> str:
    return f"{source}: " if source else ""


def _check_verdicts(
    op: VerdictFilter, schema: Mapping[str, pl.DataType], *, field: str, source: str, inputs: str
) -> None:
    present = [name.removeprefix("verdict_") for name in schema if name.startswith("verdict_")]
    missing = [name for name in op.verifiers or () if name not in present]
    if missing or not present:
        what = f"verifier {missing[0]!r} has no `verdict_{missing[0]}` column" if missing else "no verdict columns"
        msg = f"{_at(source)}field `{field}.verifiers`: {what} in the input rows of {inputs} (verdicts: {present})"
        raise ConfigError(msg)


def verdict_columns(op: VerdictFilter, schema: Mapping[str, pl.DataType]) -> list[str]:
    names = op.verifiers or [name.removeprefix("verdict_") for name in schema if name.startswith("verdict_")]
    return [f"verdict_{name}" for name in names]


def text_of(spec: TextSpec, schema: Mapping[str, pl.DataType]) -> pl.Expr:
    """The normalised text expression of `spec` over frames of `schema`."""
    return normalized(text_expr(columns=spec.reads(), preset=spec.preset, schema=schema), spec.steps())


def normalized_text(spec: TextSpec, frame: pl.DataFrame, schema: Mapping[str, pl.DataType]) -> pl.Series:
    """The normalised text of `spec` for each row of `frame` (NFKC skipped for a batch that is all ASCII, where it
    changes nothing)."""
    raw = frame.select(text_expr(columns=spec.reads(), preset=spec.preset, schema=schema).alias("text")).to_series()
    ascii_only = raw.dtype == pl.String and is_ascii(raw)
    return raw.to_frame().select(normalized(pl.col("text"), spec.steps(), ascii_only=ascii_only)).to_series()


def drop_and_detail(op: Operation, schema: Mapping[str, pl.DataType]) -> tuple[pl.Expr, pl.Expr]:
    """(drop, detail) expressions of a row-local operation."""
    if isinstance(op, VerdictFilter):
        columns = verdict_columns(op, schema)
        failed = [~pl.col(c).struct.field("passed").fill_null(False) for c in columns]
        names = [pl.when(f).then(pl.lit(c.removeprefix("verdict_"))) for f, c in zip(failed, columns, strict=True)]
        return pl.any_horizontal(failed), pl.concat_str(
            [pl.lit("failed: "), pl.concat_str(names, separator=",", ignore_nulls=True)]
        )
    if isinstance(op, RangeFilter):
        value = pl.col(op.column).cast(pl.Float64)
        drop = value.is_null() | value.is_nan()
        drop = drop | (value < op.min) if op.min is not None else drop
        drop = drop | (value > op.max) if op.max is not None else drop
        bounds = f" outside [{op.min if op.min is not None else '-inf'}, {op.max if op.max is not None else 'inf'}]"
        return drop, pl.concat_str(
            [pl.lit(f"{op.column}="), pl.col(op.column).cast(pl.String).fill_null("null"), pl.lit(bounds)]
        )
    if isinstance(op, RegexFilter):
        matched = pl.col(op.column).cast(pl.String).str.contains(op.pattern).fill_null(False)
        drop = ~matched if op.keep == "match" else matched
        verb = "does not match" if op.keep == "match" else "matches"
        return drop, pl.lit(f"{op.column} {verb} {op.pattern}")
    if isinstance(op, LengthFilter):
        text = text_of(op.text, schema)
        size = (
            text.str.len_chars()
            if op.unit == "chars"
            else pl.when(text == "").then(0).otherwise(text.str.count_matches(" ") + 1)
        )
        drop = pl.lit(False)
        drop = drop | (size < op.min) if op.min is not None else drop
        drop = drop | (size > op.max) if op.max is not None else drop
        return drop, pl.concat_str([pl.lit(f"{op.unit}="), size.cast(pl.String)])
    if isinstance(op, QualityFilter):
        if op.preset == "optiscribe_nontrivial":
            nodes = pl.col("solve_nodes").fill_null(0)
            return nodes <= 0, pl.concat_str([pl.lit("solve_nodes="), nodes.cast(pl.String)])
        valid = pl.col("turns").list.eval(pl.element().struct.field("valid").fill_null(False))
        invalid = valid.list.len() - valid.list.sum()
        return invalid.fill_null(0) > 0, pl.concat_str([pl.lit("invalid turns: "), invalid.cast(pl.String)])
    msg = f"{type(op).__name__} is not a row-local operation"
    raise TypeError(msg)


def is_balance(op: Operation) -> bool:
    return isinstance(op, Balance)
