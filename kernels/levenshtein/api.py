"""`levenshtein_batch`: one entry point over the rapidfuzz, numpy and triton backends."""

from __future__ import annotations

import functools
import importlib.util
import os
from collections.abc import Sequence
from typing import Literal, get_args

import numpy as np

from synth.core.errors import MissingDependencyError, SynthError
from synth.kernels.levenshtein.reference import levenshtein_numpy

Backend = Literal["rapidfuzz", "numpy", "triton", "auto"]
BACKENDS: tuple[str, ...] = get_args(Backend)
# Optional packages of the triton backend, as (module, pip extra).
TRITON_REQUIRES: tuple[tuple[str, str], ...] = (("torch", "synth[train]"), ("triton", "synth[kernels]"))


class KernelUnavailableError(SynthError):
    """The triton backend was asked for on a machine that cannot run it."""

    exit_code = 2


def missing_triton_requirement() -> tuple[str, str] | None:
    """Return the first (module, pip extra) of the triton backend that is not installed, or None."""
    for module, extra in TRITON_REQUIRES:
        if importlib.util.find_spec(module) is None:
            return module, extra
    return None


@functools.cache
def cuda_available() -> bool:
    """True when torch and triton are installed and torch sees a CUDA device (imports torch on first call)."""
    if missing_triton_requirement() is not None:
        return False
    import torch

    return bool(torch.cuda.is_available())


def triton_interpreting() -> bool:
    """True when TRITON_INTERPRET is set, so triton kernels run in its (slow) numpy interpreter on CPU."""
    return os.environ.get("TRITON_INTERPRET", "0").lower() in {"1", "true", "on", "yes"}


def resolve_backend(backend: str) -> Literal["rapidfuzz", "numpy", "triton"]:
    """Turn `auto` into a concrete backend, and check that `triton` can run here.

    `auto` is triton when a CUDA device is visible, else rapidfuzz. `triton` without CUDA runs in the triton
    interpreter only when TRITON_INTERPRET=1 is set; otherwise it raises `KernelUnavailableError`.
    """
    if backend not in BACKENDS:
        msg = f"`backend` must be one of {', '.join(BACKENDS)}, got {backend!r}"
        raise ValueError(msg)
    if backend == "auto":
        return "triton" if cuda_available() else "rapidfuzz"
    if backend == "triton":
        missing = missing_triton_requirement()
        if missing is not None:
            module, extra = missing
            msg = f"`backend='triton'` needs the `{module}` package; install it with `pip install '{extra}'`"
            raise MissingDependencyError(msg)
        if not (cuda_available() or triton_interpreting()):
            msg = (
                "`backend='triton'` needs a CUDA GPU and none is visible; "
                "Hint: set TRITON_INTERPRET=1 to run the kernel in the (slow) triton interpreter on CPU"
            )
            raise KernelUnavailableError(msg)
    return backend  # type: ignore[return-value]


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
