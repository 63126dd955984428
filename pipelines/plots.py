"""`synth inspect --plots DIR`: PNG histograms of a dataset's numeric columns and bar charts of its categories."""

from __future__ import annotations

import re
from pathlib import Path

import polars as pl

from synth.core.dataset import SynthDataset
from synth.core.errors import MissingDependencyError
from synth.core.records import ID_FIELD, PROVENANCE_FIELD

MAX_PLOTS = 32
BINS = 30


def numeric_columns(dataset: SynthDataset) -> list[str]:
    """Top-level integer and float columns of the kept rows (scores, sizes, counts), in schema order."""
    frame = dataset.scan()
    schema = frame.collect_schema()
    return [
        name
        for name, dtype in schema.items()
        if name not in (ID_FIELD, PROVENANCE_FIELD) and (dtype.is_integer() or dtype.is_float())
    ]


def write_plots(dataset: SynthDataset, folder: Path) -> list[Path]:
    """Write one histogram per numeric column and one bar chart per category column; return the files."""
    try:
        import matplotlib

        matplotlib.use("Agg")
        import matplotlib.pyplot as plt
    except ImportError:
        msg = "`--plots` needs matplotlib; install it with `pip install 'synth[train]'`"
        raise MissingDependencyError(msg) from None
    folder.mkdir(parents=True, exist_ok=True)
    written: list[Path] = []
    columns = numeric_columns(dataset)[:MAX_PLOTS]
    values = dataset.scan().select(columns).collect() if columns else pl.DataFrame()
    for column in columns:
        series = values[column].drop_nulls().drop_nans() if values[column].dtype.is_float() else values[column]
        series = series.drop_nulls()
        figure, axis = plt.subplots(figsize=(6, 3.5))
        axis.hist(series.to_numpy(), bins=BINS, color="#3b6ea5")
        axis.set_title(f"{dataset.domain}: {column} ({series.len():,} rows)")
        axis.set_xlabel(column)
        axis.set_ylabel("rows")
        written.append(_save(figure, folder / f"hist-{_slug(column)}.png"))
        plt.close(figure)
    categories = dataset.manifest.get("totals", {}).get("categories", {})
    for column, counts in categories.items():
        ordered = sorted(counts.items(), key=lambda kv: (-kv[1], kv[0]))[:MAX_PLOTS]
        figure, axis = plt.subplots(figsize=(6, 0.4 * len(ordered) + 1.2))
        axis.barh([name for name, _ in ordered][::-1], [count for _, count in ordered][::-1], color="#a55a3b")
        axis.set_title(f"{dataset.domain}: rows per {column}")
        axis.set_xlabel("kept rows")
        written.append(_save(figure, folder / f"counts-{_slug(column)}.png"))
        plt.close(figure)
    return written


def _save(figure: object, path: Path) -> Path:
    figure.tight_layout()  # type: ignore[attr-defined]
    figure.savefig(path, dpi=100, metadata={"Software": None})  # type: ignore[attr-defined]
    return path


def _slug(name: str) -> str:
    return re.sub(r"[^a-zA-Z0-9_.-]+", "_", name)
