"""Bootstrap intervals for the study's figures: resample test documents (or queries) with replacement.

Every figure of one resample is computed on the same multiset of documents: the clean metric, the metric at
each CER, the retention, the "90 % kept up to" threshold and the retraining effect. One weight matrix
(`resample_weights`, rows = resamples, columns = documents, entries = how often a document was drawn) is shared
by every model and training regime of a task, so their differences are paired. A threshold of 0 in a
resample means that even the lowest CER level kept less than 90 %.
"""

from __future__ import annotations

import hashlib
from collections.abc import Mapping, Sequence
from dataclasses import dataclass

import numpy as np

INTERVAL = 0.95


def resample_weights(n: int, *, resamples: int, seed: int, salt: str = "") -> np.ndarray:
    """`resamples` x `n` draw counts of a bootstrap over `n` items (each row sums to `n`), seeded by (seed, salt)."""
    digest = hashlib.blake2b(f"{seed}|{salt}".encode(), digest_size=8).digest()
    rng = np.random.default_rng(int.from_bytes(digest, "little"))
    return rng.multinomial(n, np.full(n, 1.0 / n), size=resamples).astype(np.float64) if n else np.zeros((resamples, 0))


@dataclass(frozen=True)
class Predictions:
    """One model's test predictions at one CER, aligned to the task's base documents.

    `present[i]` says whether base document i has a text at this CER (short texts have none at low levels);
    `true` and `pred` are class indices (classification) or years (dating) where present, 0 elsewhere.
    """

    present: np.ndarray
    true: np.ndarray
    pred: np.ndarray


def align(
    base: Sequence[str],
    doc_ids: Sequence[str],
    y_true: Sequence[object],
    y_pred: Sequence[object],
    classes: Sequence[str] | None,
) -> Predictions:
    """Align one evaluation's predictions (one text per document) to the base document order."""
    position = {doc_id: i for i, doc_id in enumerate(base)}
    present = np.zeros(len(base), dtype=bool)
    dtype = np.int64 if classes is not None else np.float64
    true, pred = np.zeros(len(base), dtype=dtype), np.zeros(len(base), dtype=dtype)
    index = {label: i for i, label in enumerate(classes)} if classes is not None else None
    for doc_id, t, p in zip(doc_ids, y_true, y_pred, strict=True):
        i = position.get(doc_id)
        if i is None:
            continue
        present[i] = True
        true[i] = index[str(t)] if index is not None else float(t)  # type: ignore[arg-type]
        pred[i] = index.get(str(p), 0) if index is not None else float(p)
    return Predictions(present, true, pred)


def weighted_metric(predictions: Predictions, weights: np.ndarray, *, classes: int | None) -> np.ndarray:
    """The task metric of every resample: macro-F1 over the classes seen (true or predicted), or MAE in years.

    Macro-F1 follows scikit-learn's `f1_score(average="macro", zero_division=0)` on the resampled multiset.
    """
    w = weights * predictions.present
    total = w.sum(axis=1)
    if classes is None:
        error = np.abs(predictions.true - predictions.pred)
        with np.errstate(invalid="ignore", divide="ignore"):
            return np.where(total > 0, (w @ error) / total, np.nan)
    pair = np.zeros((len(predictions.present), classes * classes))
    pair[np.arange(len(predictions.present)), predictions.true * classes + predictions.pred] = 1.0
    confusion = (w @ pair).reshape(-1, classes, classes)
    tp = np.diagonal(confusion, axis1=1, axis2=2)
    rows, cols = confusion.sum(axis=2), confusion.sum(axis=1)
    seen = (rows + cols) > 0
    with np.errstate(invalid="ignore", divide="ignore"):
        f1 = np.where(seen, 2 * tp / np.maximum(rows + cols, 1e-12), 0.0)
        return np.where(seen.any(axis=1), f1.sum(axis=1) / seen.sum(axis=1), np.nan)


def retention_matrix(values: np.ndarray, reference: np.ndarray, *, higher_is_better: bool) -> np.ndarray:
    """Per-resample retention m(c)/m(0), or m(0)/m(c) for an error such as MAE (NaN where undefined)."""
    numerator, denominator = (values, reference) if higher_is_better else (reference, values)
    with np.errstate(invalid="ignore", divide="ignore"):
        return np.where(denominator > 0, numerator / denominator, np.nan)


def threshold_samples(retention_by_cer: Mapping[float, np.ndarray], threshold: float) -> np.ndarray:
    """Per resample, the largest CER up to which retention stays >= `threshold` (0 when the lowest level fails).

    The walk is `largest_cer_with_retention_ge`'s: levels ascending, stopping at the first failure (or NaN).
    """
    levels = sorted(retention_by_cer)
    if not levels:
        return np.zeros(0)
    best = np.zeros(len(retention_by_cer[levels[0]]))
    alive = np.ones_like(best, dtype=bool)
    for cer in levels:
        ok = np.nan_to_num(retention_by_cer[cer], nan=-1.0) >= threshold
        alive &= ok
        best = np.where(alive, cer, best)
    return best


def interval(samples: np.ndarray, level: float = INTERVAL) -> list[float] | None:
    """The central `level` percentile interval of the finite samples (None when there are none)."""
    finite = samples[np.isfinite(samples)]
    if not finite.size:
        return None
    tail = (1 - level) / 2
    low, high = np.quantile(finite, [tail, 1 - tail], method="inverted_cdf")
    return [float(low), float(high)]
