"""`levenshtein_batch`: one entry point over the rapidfuzz, numpy and triton backends."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Literal, get_args

import numpy as np

from synth.kernels.levenshtein.reference import levenshtein_numpy
from synth.kernels.runtime import resolve_backend_name, triton_interpreting

Backend = Literal["rapidfuzz", "numpy", "triton", "auto"]
BACKENDS: tuple[str, ...] = get_args(Backend)


def resolve_backend(backend: str) -> Literal["rapidfuzz", "numpy", "triton"]:
    """Turn `auto` into a concrete backend (triton on a CUDA device, else rapidfuzz) and check that `triton` can
    run here (`resolve_backend_name`)."""
    return resolve_backend_name(backend, BACKENDS, cpu_default="rapidfuzz")  # type: ignore[return-value]


def levenshtein_batch(a: Sequence[str], b: Sequence[str], *, backend: Backend = "auto") -> np.ndarray:
    """Return the Levenshtein distance (unit costs, over code points) of each pair `(a[k], b[k])` as int64.

    Args:
        backend: `rapidfuzz` (C++, CPU), `numpy` (the reference), `triton` (the GPU kernel; on CPU only with
            TRITON_INTERPRET=1), or `auto`: triton when CUDA is visible, else rapidfuzz.

    Example:
        >>> levenshtein_batch(["kitten", "λόγος", ""], ["sitting", "λόγου", "ab"], backend="numpy").tolist()
        [3, 1, 2]
    """
    if len(a) != len(b):
        msg = f"`a` and `b` must have the same length, got {len(a)} and {len(b)}"
        raise ValueError(msg)
    chosen = resolve_backend(backend)
    if chosen == "numpy":
        return levenshtein_numpy(a, b)
    if chosen == "triton":
        from synth.kernels.levenshtein.triton_kernel import levenshtein_triton

        return levenshtein_triton(a, b, device="cpu" if triton_interpreting() else "cuda")
    from rapidfuzz.distance import Levenshtein
    from rapidfuzz.process import cpdist

    if not len(a):
        return np.empty(0, dtype=np.int64)
    return np.asarray(cpdist(list(a), list(b), scorer=Levenshtein.distance), dtype=np.int64)
