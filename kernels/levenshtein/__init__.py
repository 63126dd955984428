"""Batched Levenshtein distance: a triton kernel (bit-parallel Myers/Hyyrö) beside its numpy reference.

Importing this package needs neither torch nor triton; the kernel module imports them when the triton backend runs.
"""

from synth.kernels.levenshtein.api import BACKENDS, Backend, levenshtein_batch, resolve_backend
from synth.kernels.levenshtein.reference import encode_codepoints, levenshtein_numpy
from synth.kernels.runtime import TRITON_REQUIRES, KernelUnavailableError, missing_triton_requirement

__all__ = [
    "BACKENDS",
    "TRITON_REQUIRES",
    "Backend",
    "KernelUnavailableError",
    "encode_codepoints",
    "levenshtein_batch",
    "levenshtein_numpy",
    "missing_triton_requirement",
    "resolve_backend",
]
