"""Read a Papyrus CER dataset and select the texts a classifier trains or is evaluated on.

A dataset has one row per document x variant x sample x CER level (levels > 0 only). The clean text of a
document is the same on all its rows; "CER 0" therefore means `text_clean`, one row per `doc_id`.
"""

from __future__ import annotations

from pathlib import Path
from typing import Literal

import polars as pl

from synth.core.errors import InputError

Split = Literal["train", "validation", "test"]
SPLITS: tuple[Split, ...] = ("train", "validation", "test")

LABEL_COLUMNS = ("literary", "doctype", "subtype", "date_min", "date_max", "date_mid")
DOCUMENT_COLUMNS = ("doc_id", "tm", "split", *LABEL_COLUMNS)
REQUIRED_COLUMNS = (*DOCUMENT_COLUMNS, "variant", "cer_target", "sample", "text_clean", "text_noisy")
CER_TOLERANCE = 1e-9


def read_papyrus_dataset(path: str | Path) -> pl.DataFrame:
    """Read the kept rows of a Papyrus CER dataset directory, only the columns the trainers use.

    Refuses, with a one-line `InputError`, a directory that is not a synth dataset, a dataset of another
    domain, one without data shards, and one that lacks a required column.

    Example:
        >>> read_papyrus_dataset("/nonexistent/papyrus")
        Traceback (most recent call last):
        ...
        synth.core.errors.InputError: /nonexistent/papyrus: dataset directory not found
    """
    from synth.core.dataset import read_rows

    return read_rows(path, domain="papyrus", columns=REQUIRED_COLUMNS, needs="papyrus training")


def check_frame_columns(frame: pl.DataFrame) -> None:
    """Raise `InputError` naming the first required column a frame lacks."""
    missing = [column for column in REQUIRED_COLUMNS if column not in frame.columns]
    if missing:
        msg = f"dataset frame: required column `{missing[0]}` is missing"
        raise InputError(msg)


def list_cer_levels(frame: pl.DataFrame) -> list[float]:
    """The CER levels present in a frame, ascending (0 is always available: the clean text)."""
    levels = frame.get_column("cer_target").drop_nulls().unique().sort().to_list()
    return [0.0, *(float(level) for level in levels if level > CER_TOLERANCE)]


def list_variants(frame: pl.DataFrame) -> list[str]:
    """The error-shape variants present in a frame, sorted."""
    return sorted(frame.get_column("variant").drop_nulls().unique().to_list())


def select_clean_documents(frame: pl.DataFrame, *, split: Split) -> pl.DataFrame:
    """One row per document of `split`, sorted by `doc_id`: its labels and `text` = the clean text."""
    _check_split(split)
    return (
        frame.filter(pl.col("split") == split)
        .unique("doc_id", keep="first", maintain_order=True)
        .select(*DOCUMENT_COLUMNS, pl.col("text_clean").alias("text"))
        .sort("doc_id")
    )


def select_texts_at_cer(frame: pl.DataFrame, *, split: Split, cer: float, variant: str | None = None) -> pl.DataFrame:
    """The texts of `split` at one CER level, sorted by (`doc_id`, `variant`, `sample`).

    At `cer` 0 these are the clean documents (one row each, `variant` and `sample` null). Above 0 there is
    one row per noisy sample; `variant` None keeps every variant. A level or variant the frame does not
    hold raises `InputError` listing the ones it does.
    """
    _check_split(split)
    if cer < 0:
        msg = f"`cer` must be >= 0, got {cer}"
        raise InputError(msg)
    if variant is not None and variant not in (known := list_variants(frame)):
        msg = f"variant {variant!r} is not in the dataset; it holds {', '.join(known) or 'no variants'}"
        raise InputError(msg)
    if cer <= CER_TOLERANCE:
        clean = select_clean_documents(frame, split=split)
        return clean.with_columns(
            pl.lit(None, dtype=pl.String).alias("variant"),
            pl.lit(None, dtype=pl.Int32).alias("sample"),
            pl.lit(0.0).alias("cer"),
        )
    levels = list_cer_levels(frame)
    if not any(abs(level - cer) <= CER_TOLERANCE for level in levels):
        shown = ", ".join(f"{level:g}" for level in levels)
        msg = f"CER level {cer:g} is not in the dataset; it holds {shown}"
        raise InputError(msg)
    rows = frame.filter(pl.col("split") == split, (pl.col("cer_target") - cer).abs() <= CER_TOLERANCE)
    if variant is not None:
        rows = rows.filter(pl.col("variant") == variant)
    return rows.select(
        *DOCUMENT_COLUMNS,
        pl.col("text_noisy").alias("text"),
        "variant",
        "sample",
        pl.lit(float(cer)).alias("cer"),
    ).sort("doc_id", "variant", "sample")


def _check_split(split: str) -> None:
    if split not in SPLITS:
        msg = f"`split` must be one of {', '.join(SPLITS)}, got {split!r}"
        raise InputError(msg)
