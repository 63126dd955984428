"""Bulk Tanimoto similarity on packed fingerprint bit vectors: a triton popcount kernel beside its numpy reference.

Importing this package needs neither torch nor triton; the kernel module imports them when the triton backend runs.
"""

from synth.kernels.tanimoto.api import BACKENDS, Backend, bulk_tanimoto, resolve_backend
from synth.kernels.tanimoto.reference import WORD_BITS, pack_fingerprints, tanimoto_numpy

__all__ = [
    "BACKENDS",
    "WORD_BITS",
    "Backend",
    "bulk_tanimoto",
    "pack_fingerprints",
    "resolve_backend",
    "tanimoto_numpy",
]
