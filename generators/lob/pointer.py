"""ReLOBGen's pointer: a learned distribution over the eligible resting orders a cancel refers to.

Each eligible order j has a feature vector φ_j (its representation); a context query — one weight vector per
event type — scores it, and p(j) = softmax_j(w_typeᵀ φ_j). The static parts of φ (original size, submission
time, whether the order predates the window) are cached per order when it enters the book; the dynamic parts
(level, queue position, volume ahead) are read off the book in one pass over the top levels. The weights are fit
by maximum likelihood on real cancels, whose referenced ids are known.
"""

from __future__ import annotations

import math
from bisect import bisect_right
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any, NamedTuple, Protocol

import numpy as np

from synth.generators.lob.fields import SPREAD_BUCKETS, spread_bucket
from synth.validators.lob.book import SELL, LimitOrderBook

FEATURES = (
    "ticks_from_best",
    "at_best",
    "level_index",
    "log_queue_position",
    "log_volume_ahead",
    "log_size",
    "log_age",
    "is_initial",
)
"""The order representation φ_j, in column order."""
MAX_TICKS = 100
CONTEXT_SIZE = 2 + SPREAD_BUCKETS + 1


class Choice(NamedTuple):
    """One real cancel: the eligible orders' features, the row it referenced, and its context vector."""

    features: np.ndarray
    chosen: int
    context: np.ndarray


def context_vector(event: int, spread_ticks: int | None, imbalance: float) -> np.ndarray:
    """The context a pointer's query sees: event one-hot (partial cancel, delete), spread bucket, imbalance."""
    vector = np.zeros(CONTEXT_SIZE)
    vector[0 if event == 2 else 1] = 1.0
    vector[2 + spread_bucket(spread_ticks)] = 1.0
    vector[-1] = imbalance
    return vector


class Pointer(Protocol):
    """What the sampler and the trainer need of a pointer."""

    levels: int

    def choice_probabilities(self, choice: Choice) -> np.ndarray: ...

    def draw_from_book(
        self,
        event: int,
        book: LimitOrderBook,
        side: int,
        *,
        time: float,
        submitted: Mapping[int, float],
        initial: set[int],
        u: float,
        min_size: int = 1,
        tick: int = 100,
        spread_ticks: int | None = None,
        imbalance: float = 0.0,
    ) -> int | None: ...

    def to_dict(self) -> dict[str, Any]: ...


@dataclass(frozen=True, slots=True)
class Candidates:
    """The eligible orders of one choice: ids and their feature rows (one per order, `FEATURES` columns)."""

    ids: list[int]
    features: np.ndarray


def candidates(
    book: LimitOrderBook,
    side: int,
    *,
    time: float,
    submitted: Mapping[int, float],
    initial: set[int] | None = None,
    levels: int = 10,
    min_size: int = 1,
    tick: int = 100,
) -> Candidates:
    """The resting orders of `side` in its top `levels` levels with at least `min_size` shares, with features.

    Orders missing from `submitted` count as first seen at `time`; an order is initial if it is in `initial`
    or has a negative (anonymous) id.
    """
    prices = book.prices[side]
    top = prices[:levels] if side == SELL else prices[-1 : -levels - 1 : -1]
    ids: list[int] = []
    rows: list[tuple[float, ...]] = []
    if not top:
        return Candidates(ids, np.zeros((0, len(FEATURES))))
    best = top[0]
    side_levels = book.levels[side]
    log1p, log = math.log1p, math.log
    for level_index, price in enumerate(top):
        ticks = min(abs(price - best) // tick, MAX_TICKS)
        ahead = 0
        for position, (order_id, order) in enumerate(side_levels[price].queue.items()):
            size = order.size
            if size >= min_size:
                age = time - submitted.get(order_id, time)
                is_initial = order_id < 0 or (initial is not None and order_id in initial)
                ids.append(order_id)
                rows.append(
                    (
                        ticks / 10.0,
                        1.0 if level_index == 0 else 0.0,
                        level_index / 10.0,
                        log1p(position),
                        log1p(ahead / 100.0),
                        log(size),
                        log1p(max(age, 0.0)),
                        1.0 if is_initial else 0.0,
                    )
                )
            ahead += size
    return Candidates(ids, np.asarray(rows, dtype=np.float64))


@dataclass(frozen=True)
class PointerModel:
    """Conditional-logit weights per event type (2 partial cancel, 3 delete)."""

    weights: Mapping[int, tuple[float, ...]]
    levels: int = 10

    def probabilities(self, event: int, features: np.ndarray) -> np.ndarray:
        """p(j) over the rows of `features` for a message of type `event`."""
        scores = features @ np.asarray(self.weights[event])
        scores -= scores.max()
        weights = np.exp(scores)
        return weights / weights.sum()

    def choice_probabilities(self, choice: Choice) -> np.ndarray:
        """p(j) over a recorded choice set (its event is read off the context's one-hot)."""
        return self.probabilities(2 if choice.context[0] else 3, choice.features)

    def choose(self, event: int, choice: Candidates, u: float) -> int:
        """The id drawn with uniform `u` from p(j)."""
        if len(choice.ids) == 1:
            return choice.ids[0]
        cumulative = np.cumsum(self.probabilities(event, choice.features))
        index = int(np.searchsorted(cumulative, u * cumulative[-1], side="right"))
        return choice.ids[min(index, len(choice.ids) - 1)]

    def draw_from_book(
        self,
        event: int,
        book: LimitOrderBook,
        side: int,
        *,
        time: float,
        submitted: Mapping[int, float],
        initial: set[int],
        u: float,
        min_size: int = 1,
        tick: int = 100,
        spread_ticks: int | None = None,
        imbalance: float = 0.0,
    ) -> int | None:
        """Draw an order id like `choose(event, candidates(...), u)`, scoring in one pass without a feature matrix.

        Returns None when no order of `side` is eligible. The logit pointer's query is its event's weight vector;
        `spread_ticks` and `imbalance` are accepted for the `Pointer` protocol and not used.
        """
        w = self.weights[event]
        w_ticks, w_best, w_level, w_position, w_ahead, w_size, w_age, w_initial = w
        prices = book.prices[side]
        top = prices[: self.levels] if side == SELL else prices[-1 : -self.levels - 1 : -1]
        if not top:
            return None
        best = top[0]
        log1p, log = math.log1p, math.log
        ids: list[int] = []
        scores: list[float] = []
        side_levels = book.levels[side]
        for level_index, price in enumerate(top):
            level_score = (
                w_ticks * min(abs(price - best) // tick, MAX_TICKS) / 10.0
                + (w_best if level_index == 0 else 0.0)
                + w_level * level_index / 10.0
            )
            ahead = 0
            for position, (order_id, order) in enumerate(side_levels[price].queue.items()):
                size = order.size
                if size >= min_size:
                    age = time - submitted.get(order_id, time)
                    score = (
                        level_score
                        + w_position * log1p(position)
                        + w_ahead * log1p(ahead / 100.0)
                        + w_size * log(size)
                        + w_age * log1p(age if age > 0.0 else 0.0)
                    )
                    if order_id < 0 or order_id in initial:
                        score += w_initial
                    ids.append(order_id)
                    scores.append(score)
                ahead += size
        if not ids:
            return None
        peak = max(scores)
        exp = math.exp
        total = 0.0
        cumulative = []
        for score in scores:
            total += exp(score - peak)
            cumulative.append(total)
        return ids[min(bisect_right(cumulative, u * total), len(ids) - 1)]

    def to_dict(self) -> dict[str, Any]:
        """JSON-ready form, with the feature names the weights belong to."""
        return {
            "features": list(FEATURES),
            "levels": self.levels,
            "weights": {str(k): list(v) for k, v in self.weights.items()},
        }

    @classmethod
    def from_dict(cls, data: Mapping[str, Any]) -> PointerModel:
        """Inverse of `to_dict`; refuses weights written for other features."""
        if list(data["features"]) != list(FEATURES):
            msg = f"pointer weights are for features {data['features']}, this version uses {list(FEATURES)}"
            raise ValueError(msg)
        weights = {int(k): tuple(float(x) for x in v) for k, v in data["weights"].items()}
        return cls(weights=weights, levels=int(data["levels"]))


def evaluate_pointer(pointer: Pointer, choices: Sequence[Choice]) -> dict[str, float]:
    """Mean log-likelihood, that of the uniform pointer, and top-1 accuracy on choices with 2+ eligible orders."""
    usable = [choice for choice in choices if len(choice.features) > 1]
    if not usable:
        return {"choices": 0.0}
    logliks, hits = [], []
    for choice in usable:
        p = pointer.choice_probabilities(choice)
        logliks.append(math.log(max(float(p[choice.chosen]), 1e-300)))
        hits.append(bool(p[choice.chosen] >= p.max()))
    return {
        "choices": float(len(usable)),
        "mean_loglik": float(np.mean(logliks)),
        "uniform_loglik": float(-np.mean([math.log(len(choice.features)) for choice in usable])),
        "top1_accuracy": float(np.mean(hits)),
    }


def fit_conditional_logit(
    choices: Sequence[tuple[np.ndarray, int]], *, l2: float = 1e-3, max_iterations: int = 500
) -> tuple[np.ndarray, dict[str, float]]:
    """Maximum-likelihood weights of p(j) ∝ exp(wᵀφ_j) over (features, chosen row) pairs, with an L2 penalty.

    Returns the weights and fit statistics: mean log-likelihood per choice, that of the uniform pointer
    (the baseline the features must beat), and the top-1 accuracy.
    """
    from scipy.optimize import minimize

    usable = [(features, chosen) for features, chosen in choices if len(features) > 1]
    if not usable:
        return np.zeros(len(FEATURES)), {"choices": 0.0}
    stacked = np.concatenate([features for features, _ in usable])
    group = np.repeat(np.arange(len(usable)), [len(features) for features, _ in usable])
    offsets = np.cumsum([0] + [len(features) for features, _ in usable[:-1]])
    chosen_rows = offsets + np.asarray([chosen for _, chosen in usable])
    groups = len(usable)

    def objective(weights: np.ndarray) -> tuple[float, np.ndarray]:
        scores = stacked @ weights
        peak = np.full(groups, -np.inf)
        np.maximum.at(peak, group, scores)
        exp = np.exp(scores - peak[group])
        totals = np.bincount(group, weights=exp, minlength=groups)
        log_norm = np.log(totals) + peak
        loglik = scores[chosen_rows].sum() - log_norm.sum()
        share = exp / totals[group]
        expected = np.zeros((groups, stacked.shape[1]))
        np.add.at(expected, group, share[:, None] * stacked)
        gradient = stacked[chosen_rows].sum(axis=0) - expected.sum(axis=0)
        return -loglik / groups + l2 * weights @ weights, -gradient / groups + 2 * l2 * weights

    result = minimize(
        objective, np.zeros(stacked.shape[1]), jac=True, method="L-BFGS-B", options={"maxiter": max_iterations}
    )
    weights = result.x
    scores = stacked @ weights
    best = np.full(groups, -np.inf)
    np.maximum.at(best, group, scores)
    stats = {
        "choices": float(groups),
        "mean_loglik": float(-(result.fun - l2 * weights @ weights)),
        "uniform_loglik": float(-np.mean(np.log([len(features) for features, _ in usable]))),
        "top1_accuracy": float(np.mean(scores[chosen_rows] >= best)),
    }
    return weights, stats
