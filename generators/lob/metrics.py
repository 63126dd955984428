"""LOB-Bench-style realism: per-message scores of generated and real rollouts, and distances between them.

Scores (each pooled over rollouts; the "previous book" of message k is the book after message k−1, or the
window's book for k = 1):
- `spread` (ticks), `ask_volume_l1`, `bid_volume_l1`, `imbalance_l1` = (bid − ask)/(bid + ask): the book
  after each message;
- `log_inter_arrival`: log10 of the gap to the previous message in ms, gaps under 1 µs clipped to 1 µs;
- `order_size`: log10 of the size of new orders;
- `limit_price_ticks`: a new order's price in ticks from the previous mid, positive towards the opposite side;
- `message_price_ticks`: the same for every message of types 1–4 (the relative price of messages);
- `cancel_depth`: a cancel's or delete's ticks behind the previous same-side best.

Distances (Nagy et al. 2025, LOB-Bench): L1 = ½Σ|p_real − p_generated| over Freedman–Diaconis bins of the
pooled sample (exact values for discrete scores), in [0, 1]; Wasserstein-1 after z-scoring by the pooled mean
and standard deviation; each with a percentile bootstrap interval (real and generated resampled independently).
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np

from synth.validators.lob.lobster import EMPTY_ASK_PRICE, EMPTY_BID_PRICE, LobsterMessage, OrderbookRow

SCORES: dict[str, tuple[str, bool]] = {
    "spread": ("best ask − best bid, ticks", True),
    "ask_volume_l1": ("volume at the best ask", False),
    "bid_volume_l1": ("volume at the best bid", False),
    "imbalance_l1": ("(bid − ask) / (bid + ask) at L1", False),
    "log_inter_arrival": ("log10 inter-arrival time, ms", False),
    "order_size": ("log10 size of new orders", False),
    "limit_price_ticks": ("new order price, ticks from mid (+ = aggressive)", False),
    "message_price_ticks": ("message price, ticks from mid (+ = aggressive)", False),
    "cancel_depth": ("cancel price, ticks behind the same-side best", True),
}
"""Score name → (description, discrete)."""
MAX_BINS = 200
MIN_GAP_MS = 1e-3


@dataclass(frozen=True)
class RolloutView:
    """What the scores read of a rollout: its messages, the book after each, and the book before the first."""

    messages: Sequence[LobsterMessage]
    books: Sequence[OrderbookRow]
    initial: OrderbookRow


def _l1_arrays(books: Sequence[OrderbookRow]) -> tuple[np.ndarray, ...]:
    top = np.asarray([book[:4] for book in books], dtype=np.float64).reshape(-1, 4)
    ask, ask_volume, bid, bid_volume = top.T
    ask = np.where(ask == EMPTY_ASK_PRICE, np.nan, ask)
    bid = np.where(bid == EMPTY_BID_PRICE, np.nan, bid)
    return ask, ask_volume, bid, bid_volume


def _rollout_scores(rollout: RolloutView, tick: int) -> dict[str, np.ndarray]:
    if not rollout.messages:
        return {name: np.zeros(0) for name in SCORES}
    columns = np.asarray([m[:6] for m in rollout.messages], dtype=np.float64)
    time, event, _, size, price, direction = columns.T
    ask, ask_volume, bid, bid_volume = _l1_arrays(rollout.books)
    before_ask, _, before_bid, _ = _l1_arrays([rollout.initial, *rollout.books[:-1]])
    both = ~np.isnan(ask) & ~np.isnan(bid)
    total = ask_volume + bid_volume
    mid = (before_ask + before_bid) / 2
    relative = direction * (price - mid) / tick
    gaps_ms = np.maximum(np.diff(time) * 1000.0, MIN_GAP_MS)
    same_best = np.where(direction > 0, before_bid, before_ask)
    submitted = event == 1
    cancelled = (event == 2) | (event == 3)
    priced = np.isin(event, (1, 2, 3, 4)) & ~np.isnan(mid)
    return {
        "spread": ((ask - bid) / tick)[both],
        "ask_volume_l1": ask_volume[~np.isnan(ask)],
        "bid_volume_l1": bid_volume[~np.isnan(bid)],
        "imbalance_l1": ((bid_volume - ask_volume) / np.where(total > 0, total, 1.0))[total > 0],
        "log_inter_arrival": np.log10(gaps_ms),
        "order_size": np.log10(np.maximum(size[submitted], 1.0)),
        "limit_price_ticks": relative[submitted & ~np.isnan(mid)],
        "message_price_ticks": relative[priced],
        "cancel_depth": (np.abs(price - same_best) / tick)[cancelled & ~np.isnan(same_best)],
    }


def message_scores(rollouts: Iterable[RolloutView], *, tick: int = 100) -> dict[str, np.ndarray]:
    """Every score, pooled over `rollouts` (see the module docstring)."""
    pooled: dict[str, list[np.ndarray]] = {name: [] for name in SCORES}
    for rollout in rollouts:
        for name, values in _rollout_scores(rollout, tick).items():
            pooled[name].append(values)
    return {name: np.concatenate(parts) if parts else np.zeros(0) for name, parts in pooled.items()}


def bin_edges(real: np.ndarray, generated: np.ndarray, *, discrete: bool) -> np.ndarray:
    """Shared bin edges: one bin per value for discrete scores (capped), Freedman–Diaconis otherwise."""
    pooled = np.concatenate([real, generated])
    if discrete:
        values = np.unique(pooled)
        if len(values) <= MAX_BINS:
            return np.concatenate([values - 0.5, [values[-1] + 0.5]])
    if np.ptp(pooled) == 0:
        return np.array([pooled[0] - 0.5, pooled[0] + 0.5])
    edges = np.histogram_bin_edges(pooled, bins="fd")
    if len(edges) - 1 > MAX_BINS or len(edges) < 3:
        edges = np.histogram_bin_edges(pooled, bins=MAX_BINS if len(edges) - 1 > MAX_BINS else 10)
    return edges


def _l1(real: np.ndarray, generated: np.ndarray, edges: np.ndarray) -> float:
    lo, hi = edges[0], edges[-1]
    p = np.histogram(np.clip(real, lo, hi), bins=edges)[0] / len(real)
    q = np.histogram(np.clip(generated, lo, hi), bins=edges)[0] / len(generated)
    return float(0.5 * np.abs(p - q).sum())


def _w1(real: np.ndarray, generated: np.ndarray, mean: float, sd: float) -> float:
    from scipy.stats import wasserstein_distance

    if sd == 0:
        return 0.0
    return float(wasserstein_distance((real - mean) / sd, (generated - mean) / sd))


def distance(
    real: np.ndarray, generated: np.ndarray, *, discrete: bool, bootstrap: int = 100, ci: float = 0.99, seed: int = 0
) -> dict[str, Any]:
    """L1 (total variation on shared bins) and z-scored W1 between two samples, with bootstrap intervals."""
    real, generated = np.asarray(real, dtype=np.float64), np.asarray(generated, dtype=np.float64)
    result: dict[str, Any] = {"n_real": len(real), "n_generated": len(generated)}
    if not len(real) or not len(generated):
        return {
            **result,
            "l1": float("nan"),
            "l1_ci": [float("nan")] * 2,
            "w1": float("nan"),
            "w1_ci": [float("nan")] * 2,
        }
    edges = bin_edges(real, generated, discrete=discrete)
    pooled = np.concatenate([real, generated])
    mean, sd = float(pooled.mean()), float(pooled.std())
    rng = np.random.Generator(np.random.PCG64(seed))
    l1s, w1s = [], []
    for _ in range(bootstrap):
        r = real[rng.integers(0, len(real), len(real))]
        g = generated[rng.integers(0, len(generated), len(generated))]
        l1s.append(_l1(r, g, edges))
        w1s.append(_w1(r, g, mean, sd))
    tail = (1 - ci) / 2 * 100
    interval = (tail, 100 - tail)
    return {
        **result,
        "l1": _l1(real, generated, edges),
        "l1_ci": [float(x) for x in np.percentile(l1s, interval)] if bootstrap else [],
        "w1": _w1(real, generated, mean, sd),
        "w1_ci": [float(x) for x in np.percentile(w1s, interval)] if bootstrap else [],
    }


def realism_table(
    real: Mapping[str, np.ndarray], generated: Mapping[str, Mapping[str, np.ndarray]], **options: Any
) -> dict[str, Any]:
    """Method → score → distance to the real scores, plus each method's mean and median L1 and W1."""
    table: dict[str, Any] = {}
    for method, scores in generated.items():
        rows = {name: distance(real[name], scores[name], discrete=SCORES[name][1], **options) for name in SCORES}
        l1 = [row["l1"] for row in rows.values() if not np.isnan(row["l1"])]
        w1 = [row["w1"] for row in rows.values() if not np.isnan(row["w1"])]
        summary = (
            {
                "mean_l1": float(np.mean(l1)),
                "median_l1": float(np.median(l1)),
                "mean_w1": float(np.mean(w1)),
                "median_w1": float(np.median(w1)),
            }
            if l1
            else {}
        )
        table[method] = {"scores": rows, "summary": summary}
    return table


def plot_histograms(
    real: Mapping[str, np.ndarray], generated: Mapping[str, Mapping[str, np.ndarray]], path: Path
) -> Path:
    """One PNG: a density histogram per score, real against each method, on the bins the L1 distance uses."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    names = list(SCORES)
    columns = 3
    figure, axes = plt.subplots((len(names) + columns - 1) // columns, columns, figsize=(15, 4 * len(names) / 3))
    for axis, name in zip(axes.flat, names, strict=False):
        samples = {"real": real[name], **{method: scores[name] for method, scores in generated.items()}}
        present = [values for values in samples.values() if len(values)]
        if not present:
            axis.set_visible(False)
            continue
        pooled = np.concatenate(present)
        if not SCORES[name][1]:  # show the central 99 % so a few huge values do not flatten the rest
            low, high = np.percentile(pooled, [0.5, 99.5])
            pooled = pooled[(pooled >= low) & (pooled <= high)] if high > low else pooled
        edges = bin_edges(pooled[:1], pooled, discrete=SCORES[name][1])
        for label, values in samples.items():
            if len(values):
                axis.hist(
                    np.clip(values, edges[0], edges[-1]),
                    bins=edges,
                    density=True,
                    histtype="step",
                    linewidth=1.5,
                    label=label,
                )
        axis.set_title(name)
        axis.set_xlabel(SCORES[name][0], fontsize=8)
    for axis in list(axes.flat)[len(names) :]:
        axis.set_visible(False)
    axes.flat[0].legend(fontsize=8)
    figure.tight_layout()
    path.parent.mkdir(parents=True, exist_ok=True)
    figure.savefig(path, dpi=90)
    plt.close(figure)
    return path
