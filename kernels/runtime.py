"""What every triton kernel's entry point checks before it runs: its optional packages, CUDA, the interpreter."""

from __future__ import annotations

import functools
import importlib.util
import os
from collections.abc import Sequence

from synth.core.errors import MissingDependencyError, SynthError

# Optional packages of the triton backends, as (module, pip extra).
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


def resolve_backend_name(backend: str, backends: Sequence[str], *, cpu_default: str) -> str:
    """Turn `auto` into a concrete backend of `backends`, and check that `triton` can run here.

    `auto` is triton when a CUDA device is visible, else `cpu_default`. `triton` without CUDA runs in the triton
    interpreter only when TRITON_INTERPRET=1 is set; otherwise it raises `KernelUnavailableError`.

    Raises:
        ValueError: `backend` is not one of `backends`.
        MissingDependencyError: `triton` was asked for and torch or triton is not installed.
        KernelUnavailableError: `triton` was asked for with neither CUDA nor the interpreter.
    """
    if backend not in backends:
        msg = f"`backend` must be one of {', '.join(backends)}, got {backend!r}"
        raise ValueError(msg)
    if backend == "auto":
        return "triton" if cuda_available() else cpu_default
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
    return backend


def check_interpreter_mode(interpret: bool) -> None:
    """Refuse to jit a kernel in a mode other than the one triton was imported in (triton reads TRITON_INTERPRET
    once, at import, to pick its language implementation)."""
    import triton.language as tl
    from triton.runtime.interpreter import InterpretedFunction

    if isinstance(tl.standard.sum, InterpretedFunction) != interpret:
        now, then = ("set", "unset") if interpret else ("unset", "set")
        msg = (
            f"TRITON_INTERPRET is {now} now but was {then} when triton was imported; "
            "Hint: set it (or not) in the environment before the process first imports triton"
        )
        raise KernelUnavailableError(msg)
