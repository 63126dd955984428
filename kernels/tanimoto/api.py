"""`bulk_tanimoto`: one entry point over RDKit, the numpy reference and the triton kernel."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any, Literal, get_args

import numpy as np

from synth.core.errors import MissingDependencyError
from synth.kernels.levenshtein.api import (
    KernelUnavailableError,
    cuda_available,
    missing_triton_requirement,
    triton_interpreting,
)
from synth.kernels.tanimoto.reference import pack_fingerprints, tanimoto_numpy

Backend = Literal["rdkit", "numpy", "triton", "auto"]
BACKENDS: tuple[str, ...] = get_args(Backend)


def resolve_backend(backend: str) -> Literal["rdkit", "numpy", "triton"]:
    """`auto` is triton on a CUDA device, else numpy; `triton` without CUDA needs TRITON_INTERPRET=1."""
    if backend not in BACKENDS:
        msg = f"`backend` must be one of {', '.join(BACKENDS)}, got {backend!r}"
        raise ValueError(msg)
    if backend == "auto":
        return "triton" if cuda_available() else "numpy"
    if backend == "triton":
        missing = missing_triton_requirement()
        if missing is not None:
            msg = f"`backend='triton'` needs the `{missing[0]}` package; install it with `pip install '{missing[1]}'`"
            raise MissingDependencyError(msg)
        if not (cuda_available() or triton_interpreting()):
            msg = (
                "`backend='triton'` needs a CUDA GPU and none is visible; "
                "Hint: set TRITON_INTERPRET=1 to run the kernel in the (slow) triton interpreter on CPU"
            )
            raise KernelUnavailableError(msg)
    return backend  # type: ignore[return-value]


def bulk_tanimoto(query: Any, targets: Sequence[Any], *, backend: Backend = "auto") -> np.ndarray:
    """Tanimoto similarity of RDKit bit vector `query` to each of `targets`, as float64.

    The `rdkit` backend is `DataStructs.BulkTanimotoSimilarity`; `numpy` and `triton` work on packed words and
    give the same floats.
    """
    chosen = resolve_backend(backend)
    if chosen == "rdkit":
        from rdkit import DataStructs

        return np.asarray(DataStructs.BulkTanimotoSimilarity(query, list(targets)), dtype=np.float64)
    packed_query = pack_fingerprints([query])[0]
    packed = pack_fingerprints(list(targets), n_bits=query.GetNumBits())
    if chosen == "numpy":
        return tanimoto_numpy(packed_query, packed)
    from synth.kernels.tanimoto.triton_kernel import tanimoto_triton

    return tanimoto_triton(packed_query, packed)
