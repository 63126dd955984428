"""LOB benchmarks: generation cost per replayed message (ReLOBGen vs the rejection baseline) and replay speed.

Both learned methods draw from the same fitted field model, on the same held-out windows with the same seeds, in
the same process; the time of a rollout includes everything a caller pays (sampling, the strict replay check of
each draw, the book snapshot after each accepted message). Per replayed message = wall time / accepted messages.

The shipped field model is count tables, so a sampled position costs microseconds and Python overhead shared by
both methods dominates the wall time. `draws_per_replayed_message` counts the model positions each method sampled
(event and field heads, the pointer; refused attempts included): with a neural field model such as LOBS5's, where
each position is a forward pass, the cost per replayed message follows this count.
"""

from __future__ import annotations

import os
import platform
import time
from collections import Counter
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import numpy as np

import synth
from synth.generators.lob.generator import cached_windows, read_day, window_starts
from synth.generators.lob.history import RealWindow
from synth.generators.lob.model import LobModel, load_model
from synth.generators.lob.rollout import METHODS, Method, Rollout, make_sampler, run_rollout
from synth.validators.lob.engine import ReplayEngine, ReplayMode, replay
from synth.validators.lob.lobster import OrderbookRow


def machine() -> dict[str, Any]:
    """Where a benchmark ran."""
    return {
        "python": platform.python_version(),
        "platform": platform.platform(),
        "cpus": os.cpu_count(),
        "synth": synth.__version__,
    }


def held_out_windows(
    messages: Path, orderbook: Path, *, windows: int, horizon: int, train_fraction: float
) -> tuple[RealWindow, ...]:
    """The held-out windows the generator would use for these settings."""
    day, _ = read_day(messages, orderbook)
    starts = window_starts(len(day), train_fraction=train_fraction, windows=windows, horizon=horizon)
    return cached_windows(messages, orderbook, tuple(starts), horizon)


def generate_rollouts(
    method: Method, model: LobModel, windows: Sequence[RealWindow], *, horizon: int, levels: int, seed: int
) -> tuple[list[Rollout], float]:
    """One rollout per window (window i seeded with (seed, i)); returns them and the wall time."""
    rollouts = []
    start = time.perf_counter()
    for index, window in enumerate(windows):
        sampler = make_sampler(method, model)
        rng = np.random.Generator(np.random.PCG64([seed, index]))
        rollouts.append(run_rollout(sampler, window.orders, time=window.time, horizon=horizon, levels=levels, rng=rng))
    return rollouts, time.perf_counter() - start


def _speed_of(
    method: Method,
    model: LobModel,
    windows: Sequence[RealWindow],
    *,
    horizon: int,
    levels: int,
    seed: int,
    repeats: int,
) -> dict[str, Any]:
    best = float("inf")
    rollouts: list[Rollout] = []
    for _ in range(repeats):
        rollouts, seconds = generate_rollouts(method, model, windows, horizon=horizon, levels=levels, seed=seed)
        best = min(best, seconds)
    accepted = sum(len(r.messages) for r in rollouts)
    attempts = sum(r.attempts for r in rollouts)
    draws = sum(r.draws for r in rollouts)
    rejections: Counter[str] = Counter()
    corrections: Counter[str] = Counter()
    for rollout in rollouts:
        rejections.update(rollout.rejections)
        corrections.update(rollout.corrections)
    return {
        "rollouts": len(rollouts),
        "replayed_messages": accepted,
        "raw_messages": attempts,
        "raw_rejection_rate": sum(rejections.values()) / attempts if attempts else 0.0,
        "rejections_by_reason": dict(sorted(rejections.items())),
        "corrections_by_kind": dict(sorted(corrections.items())),
        "corrected_share": sum(corrections.values()) / accepted if accepted else 0.0,
        "draws": draws,
        "draws_per_replayed_message": draws / accepted if accepted else None,
        "best_seconds": best,
        "us_per_replayed_message": best / accepted * 1e6 if accepted else None,
    }


def bench_lob_speed(
    *,
    messages: Path,
    orderbook: Path,
    model_path: Path | None = None,
    rollouts: int = 100,
    horizon: int = 500,
    levels: int = 10,
    train_fraction: float = 0.6,
    seed: int = 0,
    repeats: int = 3,
) -> dict[str, Any]:
    """Time per replayed message of each method on the same windows, and replay throughput on the whole day."""
    model = load_model(model_path)
    windows = held_out_windows(messages, orderbook, windows=rollouts, horizon=horizon, train_fraction=train_fraction)
    methods: dict[str, Any] = {}
    for method in METHODS:
        methods[method] = _speed_of(method, model, windows, horizon=horizon, levels=levels, seed=seed, repeats=repeats)
    relobgen, rejection, correction = methods["relobgen"], methods["rejection"], methods["correction"]
    return {
        "benchmark": "lob-speed",
        "machine": machine(),
        "settings": {
            "rollouts": rollouts,
            "horizon": horizon,
            "levels": levels,
            "seed": seed,
            "repeats": repeats,
            "model": str(model_path) if model_path else "shipped default",
            "source": messages.name,
        },
        "methods": methods,
        "ratios": {
            "rejection_over_relobgen_per_replayed_message": (
                rejection["us_per_replayed_message"] / relobgen["us_per_replayed_message"]
            ),
            "rejection_raw_over_replayed": rejection["raw_messages"] / rejection["replayed_messages"],
            "rejection_over_relobgen_draws_per_replayed_message": (
                rejection["draws_per_replayed_message"] / relobgen["draws_per_replayed_message"]
            ),
            "correction_over_relobgen_per_replayed_message": (
                correction["us_per_replayed_message"] / relobgen["us_per_replayed_message"]
            ),
            "correction_over_relobgen_draws_per_replayed_message": (
                correction["draws_per_replayed_message"] / relobgen["draws_per_replayed_message"]
            ),
        },
        "relobgen_replayable": relobgen["raw_rejection_rate"] == 0.0,
        "replay": bench_replay(messages, orderbook, repeats=repeats),
    }


def bench_replay(messages: Path, orderbook: Path, *, repeats: int = 3) -> dict[str, Any]:
    """Messages per second of the replayer over the whole day, per engine, with and without the orderbook check.

    The numba engine is compiled (or loaded from numba's cache) before timing; that cost is reported apart.
    """
    from synth.validators.lob.fast_replay import NUMBA_AVAILABLE, warm_up

    day, books = read_day(messages, orderbook)
    results: dict[str, Any] = {"messages": len(day)}
    runs: list[tuple[str, ReplayMode, Sequence[OrderbookRow] | None, ReplayEngine]] = [
        ("lenient_with_orderbook", "lenient", books, "python"),
        ("strict_with_orderbook", "strict", books, "python"),
        ("strict_messages_only", "strict", None, "python"),
    ]
    if NUMBA_AVAILABLE:
        start = time.perf_counter()
        warm_up()
        results["numba_compile_seconds"] = time.perf_counter() - start
        runs += [
            ("numba_strict_with_orderbook", "strict", books, "numba"),
            ("numba_strict_messages_only", "strict", None, "numba"),
        ]
    for label, mode, rows, engine in runs:
        best = float("inf")
        report = None
        for _ in range(repeats):
            start = time.perf_counter()
            report = replay(day, orderbook=rows, mode=mode, engine=engine)
            best = min(best, time.perf_counter() - start)
        assert report is not None
        results[label] = {
            "engine": engine,
            "messages_per_second": len(day) / best,
            "violations": report.violation_count,
            "level_mismatches": report.level_mismatches,
        }
    if NUMBA_AVAILABLE:
        results["numba_over_python"] = {
            name: results[f"numba_{name}"]["messages_per_second"] / results[name]["messages_per_second"]
            for name in ("strict_with_orderbook", "strict_messages_only")
        }
    return results


def bench_lob_realism(
    *,
    messages: Path,
    orderbook: Path,
    model_path: Path | None = None,
    rollouts: int = 100,
    horizon: int = 500,
    levels: int = 10,
    train_fraction: float = 0.6,
    seed: int = 0,
    bootstrap: int = 100,
    plot: Path | None = None,
) -> dict[str, Any]:
    """Realism distances of each method's rollouts to the real continuations of the same held-out windows."""
    from synth.generators.lob.metrics import RolloutView, message_scores, plot_histograms, realism_table
    from synth.validators.lob.replay import replay_rollout

    model = load_model(model_path)
    tick = model.fields.tick
    windows = held_out_windows(messages, orderbook, windows=rollouts, horizon=horizon, train_fraction=train_fraction)
    real = message_scores((RolloutView(w.messages, w.books, w.initial_row) for w in windows), tick=tick)
    generated: dict[str, dict[str, np.ndarray]] = {}
    replayable: dict[str, float] = {}
    raw_rejection: dict[str, float] = {}
    corrected: dict[str, float] = {}
    for method in METHODS:
        drawn, _ = generate_rollouts(method, model, windows, horizon=horizon, levels=levels, seed=seed)
        generated[method] = message_scores(
            (RolloutView(r.messages, r.books, w.initial_row) for r, w in zip(drawn, windows, strict=True)), tick=tick
        )
        rows = (rollout_columns(w, r, levels=levels) for r, w in zip(drawn, windows, strict=True))
        replayable[method] = float(np.mean([replay_rollout(row).replayable for row in rows]))
        attempts = sum(r.attempts for r in drawn)
        raw_rejection[method] = sum(sum(r.rejections.values()) for r in drawn) / attempts if attempts else 0.0
        replayed = sum(len(r.messages) for r in drawn)
        corrected[method] = sum(sum(r.corrections.values()) for r in drawn) / replayed if replayed else 0.0
    table = realism_table(real, generated, bootstrap=bootstrap, seed=seed)
    report = {
        "benchmark": "lob-realism",
        "machine": machine(),
        "settings": {
            "rollouts": rollouts,
            "horizon": horizon,
            "levels": levels,
            "seed": seed,
            "bootstrap": bootstrap,
            "ci": 0.99,
            "train_fraction": train_fraction,
            "source": messages.name,
            "model": str(model_path) if model_path else "shipped default",
        },
        "replayable_share": replayable,
        "raw_rejection_rate": raw_rejection,
        "corrected_share": corrected,
        "real_messages": len(real["spread"]),
        "methods": table,
    }
    if plot is not None:
        report["plot"] = str(plot_histograms(real, generated, plot))
    return report


def rollout_columns(window: RealWindow, rollout: Rollout, *, levels: int) -> dict[str, Any]:
    """The dataset row of a rollout, as the replay verifier reads it."""
    from synth.generators.lob.generator import rollout_row

    return rollout_row(window, rollout, method="bench", source="bench", replicate=0, levels=levels)
