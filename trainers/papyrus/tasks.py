"""The four papyrological tasks: label extraction, filtering, metrics and retention.

| task     | label                         | objective      | metric (higher is better?)            |
|----------|-------------------------------|----------------|---------------------------------------|
| literary | "literary" / "documentary"    | classification | macro-F1 (yes), plus accuracy          |
| doctype  | `doctype`                     | classification | macro-F1 (yes)                         |
| subtype  | `subtype`                     | classification | macro-F1 (yes)                         |
| dating   | `date_mid` (years, BCE < 0)   | regression     | MAE in years (no), plus century acc.   |
"""

from __future__ import annotations

import math
from collections import Counter
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any, Literal

import numpy as np
import polars as pl

from synth.core.errors import ConfigError

TaskName = Literal["literary", "doctype", "subtype", "dating"]
Objective = Literal["classification", "regression"]
TASKS: tuple[TaskName, ...] = ("literary", "doctype", "subtype", "dating")

MIN_TRAIN_DOCS = 4
MIN_TEST_DOCS = 2


@dataclass(frozen=True)
class TaskSpec:
    """What a task predicts and how it is scored."""

    name: TaskName
    objective: Objective
    metric: str
    higher_is_better: bool
    filters_rare_classes: bool = False


TASK_SPECS: dict[str, TaskSpec] = {
    "literary": TaskSpec("literary", "classification", "macro_f1", True),
    "doctype": TaskSpec("doctype", "classification", "macro_f1", True, filters_rare_classes=True),
    "subtype": TaskSpec("subtype", "classification", "macro_f1", True, filters_rare_classes=True),
    "dating": TaskSpec("dating", "regression", "mae_years", False),
}


def get_task(task: str) -> TaskSpec:
    """The spec of a task name; a `ConfigError` naming the choices otherwise."""
    if task not in TASK_SPECS:
        msg = f"unknown task {task!r}; choose one of {', '.join(TASKS)}"
        raise ConfigError(msg)
    return TASK_SPECS[task]


def with_labels(frame: pl.DataFrame, task: str) -> pl.DataFrame:
    """`frame` with a `label` column for `task` (str for classification, float years for dating), nulls dropped."""
    spec = get_task(task)
    if spec.name == "literary":
        label = pl.when(pl.col("literary")).then(pl.lit("literary")).otherwise(pl.lit("documentary"))
        label = pl.when(pl.col("literary").is_null()).then(None).otherwise(label)
    elif spec.name == "dating":
        label = pl.col("date_mid").cast(pl.Float64)
    else:
        label = pl.col(spec.name).cast(pl.String)
    labelled = frame.with_columns(label.alias("label")).filter(pl.col("label").is_not_null())
    if spec.objective == "regression":
        labelled = labelled.filter(pl.col("label").is_finite())
    return labelled


@dataclass
class TaskData:
    """The labelled train documents of a task after filtering, and the classes a model may predict."""

    task: TaskSpec
    train: pl.DataFrame
    classes: list[str] | None
    dropped_classes: dict[str, int] = field(default_factory=dict)
    min_class_count: int = 1
    reason: str | None = None

    @property
    def measurable(self) -> bool:
        return self.reason is None


def prepare_train(train_docs: pl.DataFrame, task: str, *, min_class_count: int = 3) -> TaskData:
    """Label the train documents, drop rare classes (doctype/subtype), and check the task can be trained.

    `train_docs` has one row per document (the clean documents of the train split). Classes with fewer
    than `min_class_count` train documents are dropped for doctype and subtype and listed in
    `dropped_classes`; a train side too small or with a single class sets `reason`.
    """
    spec = get_task(task)
    if min_class_count < 1:
        msg = f"`min_class_count` must be >= 1, got {min_class_count}"
        raise ConfigError(msg)
    labelled = with_labels(train_docs, task)
    dropped: dict[str, int] = {}
    classes = None
    if spec.objective == "classification":
        counts = Counter(labelled.get_column("label").to_list())
        if spec.filters_rare_classes:
            dropped = {label: n for label, n in sorted(counts.items()) if n < min_class_count}
            labelled = labelled.filter(~pl.col("label").is_in(list(dropped)))
        classes = sorted(set(counts) - set(dropped))
    data = TaskData(spec, labelled, classes, dropped, min_class_count if spec.filters_rare_classes else 1)
    if labelled.height < MIN_TRAIN_DOCS:
        data.reason = f"train split has {labelled.height} labelled documents (< {MIN_TRAIN_DOCS})"
    elif classes is not None and len(classes) < 2:
        data.reason = f"train split has {len(classes)} class(es) with >= {data.min_class_count} documents"
    return data


def restrict_to_classes(frame: pl.DataFrame, task: str, classes: Sequence[str] | None) -> pl.DataFrame:
    """Label an evaluation frame and keep only rows whose label the model knows (all rows for dating)."""
    labelled = with_labels(frame, task)
    if classes is None:
        return labelled
    return labelled.filter(pl.col("label").is_in(list(classes)))


def check_test_side(test_docs: pl.DataFrame, spec: TaskSpec) -> str | None:
    """Why the labelled test documents cannot measure the task, or None if they can."""
    if test_docs.height < MIN_TEST_DOCS:
        return f"test split has {test_docs.height} labelled documents (< {MIN_TEST_DOCS})"
    if spec.objective == "classification":
        present = test_docs.get_column("label").n_unique()
        if present < 2:
            return f"test split has {present} class(es); macro-F1 needs at least 2"
    return None


def century(year: float) -> int:
    """The century of a year with no year 0: 1..100 → 1, 101..200 → 2, -1..-100 → -1 (0 counts as 1)."""
    if year < 0:
        return -math.ceil(-year / 100)
    return max(1, math.ceil(year / 100))


def score(task: str, y_true: Sequence[Any], y_pred: Sequence[Any]) -> dict[str, float]:
    """The task's metrics for one evaluation: its main metric first, then the secondary one."""
    from sklearn.metrics import accuracy_score, f1_score

    spec = get_task(task)
    if len(y_true) == 0:
        msg = "cannot score an empty evaluation set"
        raise ValueError(msg)
    if spec.objective == "regression":
        true, pred = np.asarray(y_true, dtype=float), np.asarray(y_pred, dtype=float)
        hits = [century(t) == century(p) for t, p in zip(true, pred, strict=True)]
        return {"mae_years": float(np.mean(np.abs(true - pred))), "century_accuracy": float(np.mean(hits))}
    true, pred = [str(v) for v in y_true], [str(v) for v in y_pred]
    macro_f1 = float(f1_score(true, pred, average="macro", zero_division=0))
    return {"macro_f1": macro_f1, "accuracy": float(accuracy_score(true, pred))}


def retention(metric_at_c: float, metric_clean: float, *, higher_is_better: bool = True) -> float | None:
    """How much of the clean metric survives at CER c: m(c)/m(0), or m(0)/m(c) for errors such as MAE.

    None when the ratio is undefined (a zero denominator).

    Example:
        >>> retention(0.72, 0.8)
        0.9
        >>> retention(50.0, 40.0, higher_is_better=False)
        0.8
    """
    numerator, denominator = (metric_at_c, metric_clean) if higher_is_better else (metric_clean, metric_at_c)
    if denominator == 0:
        return None
    return round(numerator / denominator, 12)


def largest_cer_with_retention_ge(
    retention_by_cer: Mapping[float, float | None], threshold: float = 0.9
) -> float | None:
    """The largest CER up to which retention stays >= `threshold` at every evaluated level ("90 % up to X %").

    Levels are walked in ascending order and the walk stops at the first level below the threshold (or with
    undefined retention); None if even the lowest level falls short.

    Example:
        >>> largest_cer_with_retention_ge({0.0: 1.0, 0.05: 0.95, 0.1: 0.85, 0.2: 0.91})
        0.05
    """
    best = None
    for cer in sorted(retention_by_cer):
        value = retention_by_cer[cer]
        if value is None or value < threshold:
            break
        best = cer
    return best
