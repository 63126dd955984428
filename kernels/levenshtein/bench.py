"""`synth bench levenshtein`: pairs/s of the Levenshtein backends on the same pairs, against rapidfuzz, in one run.

The pairs look like the Papyrus CER verifier's: a Greek text and a noisy copy with about 10% random edits. Every
backend's distances are checked against rapidfuzz's. Without CUDA the triton backend runs only under
TRITON_INTERPRET=1, in triton's numpy interpreter, which is expected to be orders of magnitude slower than rapidfuzz:
that figure checks the kernel runs, it says nothing about GPU speed.
"""

from __future__ import annotations

import os
import platform
import time
from collections.abc import Sequence
from typing import Any

import numpy as np

import synth
from synth.core.errors import SynthError
from synth.kernels.levenshtein import levenshtein_batch, resolve_backend
from synth.kernels.runtime import cuda_available, triton_interpreting

BENCH_BACKENDS: tuple[str, ...] = ("rapidfuzz", "numpy", "triton")
# Greek letters (with the numeral letters), space and newline: the alphabet the CER verifier accepts.
ALPHABET = "αβγδεζηθικλμνξοπρςστυφχψωϛϙϟϡ \n"
EDIT_RATE = 0.1
# A backend stops repeating once its timed runs add up to this (the triton interpreter takes seconds per run).
REPEAT_BUDGET_S = 5.0


def make_pairs(*, pairs: int, length: int, seed: int, edit_rate: float = EDIT_RATE) -> tuple[list[str], list[str]]:
    """Return `pairs` random Greek texts of `length` letters and a copy of each with random edits.

    Each copy gets `round(edit_rate * length)` edits, each an insertion, deletion or substitution at random.
    """
    rng = np.random.default_rng(seed)
    letters = np.array(list(ALPHABET))
    clean = ["".join(row) for row in letters[rng.integers(0, len(letters), size=(pairs, length))]]
    edits = round(edit_rate * length)
    noisy = []
    for text in clean:
        chars = list(text)
        for op, where, letter in zip(
            rng.integers(0, 3, edits), rng.random(edits), letters[rng.integers(0, len(letters), edits)], strict=True
        ):
            at = int(where * (len(chars) + (op == 0)))
            if op == 0:
                chars.insert(at, letter)
            elif chars and op == 1:
                del chars[at]
            elif chars:
                chars[at] = letter
        noisy.append("".join(chars))
    return clean, noisy


def _best_seconds(a: list[str], b: list[str], *, backend: str, repeats: int) -> tuple[list[float], np.ndarray]:
    """Warm the backend up on a few pairs (imports, kernel compilation), then time up to `repeats` full runs."""
    levenshtein_batch(a[:8], b[:8], backend=backend)  # type: ignore[arg-type]
    times: list[float] = []
    result = np.empty(0, dtype=np.int64)
    while len(times) < repeats and sum(times) < REPEAT_BUDGET_S:
        start = time.perf_counter()
        result = levenshtein_batch(a, b, backend=backend)  # type: ignore[arg-type]
        times.append(time.perf_counter() - start)
    return times, result


def bench_levenshtein(
    *, pairs: int, length: int, seed: int = 0, backends: Sequence[str] = BENCH_BACKENDS, repeats: int = 3
) -> dict[str, Any]:
    """Time each backend on the same `pairs` pairs of `length` letters; ratios are pairs/s over rapidfuzz's.

    rapidfuzz is always measured, as the baseline. Each backend is warmed up on a few pairs, then timed up to
    `repeats` times (fewer once it has spent `REPEAT_BUDGET_S`); the best time counts. A backend that cannot run
    here (triton without CUDA and without TRITON_INTERPRET=1) is listed under `skipped` with the reason.

    Example:
        >>> report = bench_levenshtein(pairs=20, length=30, seed=1, backends=("numpy",))
        >>> sorted(report["pairs_per_s"]), report["agrees_with_rapidfuzz"]["numpy"]
        (['numpy', 'rapidfuzz'], True)
    """
    unknown = sorted(set(backends) - set(BENCH_BACKENDS))
    if unknown:
        msg = f"`backends`: unknown backend {unknown[0]!r}; choose from {', '.join(BENCH_BACKENDS)}"
        raise ValueError(msg)
    if pairs < 1 or length < 0 or repeats < 1:
        msg = f"need `pairs` >= 1, `length` >= 0 and `repeats` >= 1, got {pairs}, {length} and {repeats}"
        raise ValueError(msg)
    a, b = make_pairs(pairs=pairs, length=length, seed=seed)
    chosen = ["rapidfuzz", *(name for name in dict.fromkeys(backends) if name != "rapidfuzz")]
    seconds: dict[str, list[float]] = {}
    agrees: dict[str, bool] = {}
    skipped: dict[str, str] = {}
    expected = None
    for name in chosen:
        try:
            resolve_backend(name)
        except SynthError as error:
            skipped[name] = str(error)
            continue
        seconds[name], result = _best_seconds(a, b, backend=name, repeats=repeats)
        expected = result if expected is None else expected
        agrees[name] = bool(np.array_equal(result, expected))
    best = {name: min(values) for name, values in seconds.items()}
    per_second = {name: pairs / max(value, 1e-9) for name, value in best.items()}
    ratios = {
        f"{name}_vs_rapidfuzz": round(value / per_second["rapidfuzz"], 6)
        for name, value in per_second.items()
        if name != "rapidfuzz"
    }
    triton_mode = None
    if "triton" in seconds:
        triton_mode = "interpreter" if triton_interpreting() else "cuda"
    return {
        "benchmark": "levenshtein",
        "synth_version": synth.__version__,
        "machine": {
            "cpus": os.cpu_count(),
            "python": platform.python_version(),
            "platform": platform.platform(),
            "cuda": cuda_available() if "triton" in chosen else None,  # None: not checked (imports torch)
        },
        "config": {"pairs": pairs, "length": length, "seed": seed, "edit_rate": EDIT_RATE, "repeats": repeats},
        "seconds": {name: [round(v, 6) for v in values] for name, values in seconds.items()},
        "best_seconds": {name: round(value, 6) for name, value in best.items()},
        "pairs_per_s": {name: round(value, 1) for name, value in per_second.items()},
        "ratios": ratios,
        "agrees_with_rapidfuzz": agrees,
        "triton_mode": triton_mode,
        "skipped": skipped,
        "notes": (
            "ratios are pairs/s over rapidfuzz's (above 1 = faster); rapidfuzz runs on one CPU thread; "
            "triton_mode 'interpreter' is triton's numpy interpreter on CPU (TRITON_INTERPRET=1), expected to be "
            "far slower than rapidfuzz and no measure of GPU speed; every backend is warmed up (imports, "
            "compilation) on 8 pairs before it is timed."
        ),
    }
