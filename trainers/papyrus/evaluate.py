"""Train a model for one task at one CER and measure it on the test split at every CER level.

A trained model directory holds the model's own files and `model.json`, plus `training.json` (task,
classes, train CER, variant) and `metrics.json` (the figures `train_and_evaluate` returned), so that
`evaluate_saved` re-creates exactly the same evaluation.
"""

from __future__ import annotations

import dataclasses
import json
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

import polars as pl
from pydantic import BaseModel, ConfigDict, Field, StrictFloat, StrictInt, StrictStr, ValidationError

from synth.core.config import format_validation_error
from synth.core.errors import ConfigError, InputError
from synth.trainers.papyrus.data import (
    CER_TOLERANCE,
    SPLITS,
    check_frame_columns,
    list_cer_levels,
    list_variants,
    select_clean_documents,
    select_texts_at_cer,
)
from synth.trainers.papyrus.models import MODEL_KINDS, TextModel, build_model, load_model
from synth.trainers.papyrus.models.base import (
    MODEL_FILE,
    read_json_object,
    read_model_meta,
    shown,
    write_json_atomic,
)
from synth.trainers.papyrus.tasks import (
    TASKS,
    TaskSpec,
    check_test_side,
    get_task,
    largest_cer_with_retention_ge,
    prepare_train,
    restrict_to_classes,
    retention,
    score,
)

#: CER → (doc ids, true labels, predictions) of one evaluation on the test split.
PredictionLog = dict[float, tuple[list[str], list[Any], list[Any]]]

TRAINING_FILE = "training.json"
METRICS_FILE = "metrics.json"
RETENTION_THRESHOLD = 0.9


def train_and_evaluate(
    dataset_frame: pl.DataFrame,
    *,
    task: str,
    model: str = "tfidf",
    train_cer: float = 0.0,
    eval_cers: Sequence[float] = (0.0,),
    variant: str | None = None,
    seed: int = 0,
    params: Mapping[str, Any] | None = None,
    min_class_count: int = 3,
    retention_threshold: float = RETENTION_THRESHOLD,
    out: str | Path | None = None,
    predictions: PredictionLog | None = None,
) -> dict[str, Any]:
    """Train `model` on the train split at `train_cer` (0 = clean text) and score it on the test split.

    Returns JSON-ready figures: the metric per evaluated CER with its retention against the clean test
    metric, the largest CER up to which retention stays >= `retention_threshold`, and corpus sizes per
    split. A task the data cannot measure (too few documents, a single class) comes back with
    `measurable` False and a `reason`, untrained. With `out`, the model, `training.json` and
    `metrics.json` are written there.

    Args:
        variant: error shape of the noisy texts used (train and test); None pools every variant.
        min_class_count: doctype/subtype classes with fewer train documents are dropped (listed in the result).
        predictions: filled with the test predictions per CER (see `evaluate_model`), for bootstrap intervals.
    """
    check_frame_columns(dataset_frame)
    spec = get_task(task)
    levels = check_levels(dataset_frame, [train_cer, *eval_cers], variant)
    eval_levels = sorted(set(levels[1:]))
    fitted = build_model(model, objective=spec.objective, seed=seed, params=params)  # checks kind, params, deps
    data = prepare_train(select_clean_documents(dataset_frame, split="train"), task, min_class_count=min_class_count)
    training = {
        "task": spec.name,
        "model": model,
        "seed": seed,
        "params": json.loads(json.dumps(dataclasses.asdict(fitted.params))),
        "train_cer": levels[0],
        "variant": variant,
        "min_class_count": data.min_class_count,
        "classes": data.classes,
        "dropped_classes": data.dropped_classes,
        "train_texts": 0,
    }
    reason = data.reason
    if reason is None:
        test_docs = restrict_to_classes(select_clean_documents(dataset_frame, split="test"), task, data.classes)
        reason = check_test_side(test_docs, spec)
    if reason is not None:
        result = _assemble(dataset_frame, spec, training, None, reason=reason, threshold=retention_threshold)
        if out is not None:
            _clear_saved_model(Path(out))  # a model left by an earlier fit is not this run's
            write_json_atomic(Path(out) / METRICS_FILE, result)
        return result
    train_rows = select_texts_at_cer(dataset_frame, split="train", cer=levels[0], variant=variant)
    train_rows = restrict_to_classes(train_rows, task, data.classes).filter(
        pl.col("doc_id").is_in(data.train.get_column("doc_id").implode())
    )
    fitted.fit(train_rows.get_column("text").to_list(), train_rows.get_column("label").to_list())
    training["train_texts"] = train_rows.height
    evaluation = evaluate_model(
        fitted, dataset_frame, spec=spec, classes=data.classes, cers=eval_levels, variant=variant, log=predictions
    )
    result = _assemble(
        dataset_frame, spec, training, evaluation, cers=eval_levels, reason=None, threshold=retention_threshold
    )
    if out is not None:
        _clear_saved_model(Path(out))
        root = fitted.save(out)
        write_json_atomic(root / TRAINING_FILE, training)
        write_json_atomic(root / METRICS_FILE, result)
    return result


def _clear_saved_model(root: Path) -> None:
    """Create `root`, or remove the files that mark it as a trained model, so an interrupted save leaves none."""
    root.mkdir(parents=True, exist_ok=True)
    for name in (METRICS_FILE, TRAINING_FILE, MODEL_FILE):
        (root / name).unlink(missing_ok=True)


def evaluate_saved(
    model_dir: str | Path,
    dataset_frame: pl.DataFrame,
    *,
    eval_cers: Sequence[float] = (0.0,),
    variant: str | None = None,
    retention_threshold: float = RETENTION_THRESHOLD,
) -> dict[str, Any]:
    """Reload a model written by `train_and_evaluate(out=...)` and score it on the test split again.

    On the same dataset, CER levels and variant this returns the same figures as the training run.
    """
    root = Path(model_dir)
    training = read_training(root)
    check_frame_columns(dataset_frame)
    spec = get_task(training["task"])
    eval_levels = sorted(set(check_levels(dataset_frame, eval_cers, variant)))
    objective = read_model_meta(root).objective
    if objective != spec.objective:
        msg = (
            f"{root / MODEL_FILE}: field `objective` is {objective!r}, but task `{spec.name}` of "
            f"{root / TRAINING_FILE} needs {spec.objective!r}"
        )
        raise InputError(msg)
    model = load_model(root)
    classes = training.get("classes")
    evaluation = evaluate_model(model, dataset_frame, spec=spec, classes=classes, cers=eval_levels, variant=variant)
    return _assemble(
        dataset_frame, spec, training, evaluation, cers=eval_levels, reason=None, threshold=retention_threshold
    )


def evaluate_model(
    model: TextModel,
    dataset_frame: pl.DataFrame,
    *,
    spec: TaskSpec,
    classes: Sequence[str] | None,
    cers: Sequence[float],
    variant: str | None,
    log: PredictionLog | None = None,
) -> list[dict[str, Any]]:
    """Metrics on the test split at CER 0 and at every level of `cers` (ascending, CER 0 first).

    With `log`, each CER's (doc ids, true labels, predictions) is stored in it under the CER.
    """
    entries = []
    for cer in sorted({0.0, *cers}):
        rows = select_texts_at_cer(dataset_frame, split="test", cer=cer, variant=variant)
        rows = restrict_to_classes(rows, spec.name, classes)
        entry: dict[str, Any] = {"cer": cer, "texts": rows.height, "documents": rows.get_column("doc_id").n_unique()}
        if rows.height:
            predictions = model.predict(rows.get_column("text").to_list()).tolist()
            labels = rows.get_column("label").to_list()
            entry.update(score(spec.name, labels, predictions))
            if log is not None:
                log[cer] = (rows.get_column("doc_id").to_list(), labels, predictions)
        entries.append(entry)
    return entries


def check_levels(frame: pl.DataFrame, cers: Sequence[float], variant: str | None) -> list[float]:
    """The CER levels as floats, each one present in the dataset; a one-line `InputError` otherwise."""
    if not cers:
        msg = "no CER levels to evaluate; pass at least one, e.g. `--eval-cers 0,0.05,0.2`"
        raise ConfigError(msg)
    available = list_cer_levels(frame)
    if variant is not None and variant not in (variants := list_variants(frame)):
        msg = f"variant {variant!r} is not in the dataset; it holds {', '.join(variants) or 'no variants'}"
        raise InputError(msg)
    checked = []
    for cer in cers:
        match = [level for level in available if abs(level - float(cer)) <= CER_TOLERANCE]
        if not match:
            shown = ", ".join(f"{level:g}" for level in available)
            msg = f"CER level {float(cer):g} is not in the dataset; it holds {shown}"
            raise InputError(msg)
        checked.append(match[0])
    return checked


def count_corpus(frame: pl.DataFrame, task: str, classes: Sequence[str] | None) -> dict[str, dict[str, int]]:
    """Documents per split, and how many carry a label the model knows."""
    sizes = {}
    for split in SPLITS:
        docs = select_clean_documents(frame, split=split)
        sizes[split] = {"documents": docs.height, "labelled": restrict_to_classes(docs, task, classes).height}
    return sizes


class _TrainingRecord(BaseModel):
    """The fields of `training.json` that evaluation and its report use (others are kept as they are)."""

    model_config = ConfigDict(extra="allow", frozen=True)

    task: StrictStr
    model: StrictStr
    seed: StrictInt
    params: dict[StrictStr, Any]
    train_cer: StrictFloat | StrictInt = Field(ge=0, le=1)
    variant: StrictStr | None
    min_class_count: StrictInt
    classes: list[StrictStr] | None
    dropped_classes: dict[StrictStr, StrictInt]
    train_texts: StrictInt


def read_training(root: Path) -> dict[str, Any]:
    """The checked `training.json` of a trained model directory; a one-line `InputError` if missing or broken."""
    path = root / TRAINING_FILE
    if not path.is_file():
        reason = _unmeasured_reason(root)
        if reason is not None:
            msg = f"{root}: the fit run saved no model because the task was not measurable ({reason})"
        else:
            msg = f"{root}: no {TRAINING_FILE} here; is this a model directory written by `synth train papyrus fit`?"
        raise InputError(msg)
    training = read_json_object(path)
    try:
        _TrainingRecord.model_validate(training)
    except ValidationError as error:
        raise InputError(format_validation_error(error, source=str(path))) from None
    if training["task"] not in TASKS:
        msg = f"{path}: field `task`: unknown task {shown(training['task'])}; known: {', '.join(TASKS)}"
        raise InputError(msg)
    if training["model"] not in MODEL_KINDS:
        msg = f"{path}: field `model`: unknown model {shown(training['model'])}; known: {', '.join(MODEL_KINDS)}"
        raise InputError(msg)
    return training


def _unmeasured_reason(root: Path) -> str | None:
    try:
        metrics = read_json_object(root / METRICS_FILE)
    except InputError:
        return None
    reason = metrics.get("reason") if metrics.get("measurable") is False else None
    return reason if isinstance(reason, str) else None


def saved_eval_cers(model_dir: str | Path) -> list[float]:
    """The CER levels the fit run evaluated (from its `metrics.json`), or just 0 when there is no such file.

    Raises:
        InputError: `metrics.json` is there but damaged, or a `results[i].cer` is not a level in [0, 1].
    """
    path = Path(model_dir) / METRICS_FILE
    if not path.is_file():
        return [0.0]
    results = read_json_object(path).get("results")
    if not isinstance(results, list):
        msg = f"{path}: field `results` must be a list of evaluated levels (got {shown(results)})"
        raise InputError(msg)
    levels = []
    for index, entry in enumerate(results):
        cer = entry.get("cer") if isinstance(entry, dict) else None
        if isinstance(cer, bool) or not isinstance(cer, int | float) or not 0 <= cer <= 1:
            msg = f"{path}: field `results.{index}.cer` must be a CER level in [0, 1] (got {shown(cer)})"
            raise InputError(msg)
        levels.append(float(cer))
    return levels or [0.0]


def _assemble(
    frame: pl.DataFrame,
    spec: TaskSpec,
    training: Mapping[str, Any],
    evaluation: list[dict[str, Any]] | None,
    *,
    cers: Sequence[float] = (),
    reason: str | None,
    threshold: float,
) -> dict[str, Any]:
    """The JSON-ready result shared by `train_and_evaluate` and `evaluate_saved`."""
    result: dict[str, Any] = {
        **training,
        "objective": spec.objective,
        "metric": spec.metric,
        "higher_is_better": spec.higher_is_better,
        "measurable": reason is None,
        "reason": reason,
        "sizes": count_corpus(frame, spec.name, training.get("classes")),
        "clean": None,
        "results": [],
        "tolerance": {"retention_threshold": threshold, "largest_cer": None},
    }
    if evaluation is None:
        return result
    clean = evaluation[0]
    clean_metric = clean.get(spec.metric)
    for entry in evaluation:
        value = entry.get(spec.metric)
        entry["retention"] = (
            None
            if value is None or clean_metric is None
            else retention(value, clean_metric, higher_is_better=spec.higher_is_better)
        )
    requested = [entry for entry in evaluation if entry["cer"] in cers]
    result["clean"] = clean
    result["results"] = requested
    by_cer = {entry["cer"]: entry["retention"] for entry in requested}
    result["tolerance"]["largest_cer"] = largest_cer_with_retention_ge(by_cer, threshold)
    return result
