"""`bulk_tanimoto`: one entry point over RDKit, the numpy reference and the triton kernel."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any, Literal, get_args

import numpy as np

from synth.kernels.runtime import resolve_backend_name
from synth.kernels.tanimoto.reference import pack_fingerprints, tanimoto_numpy

Backend = Literal["rdkit", "numpy", "triton", "auto"]
BACKENDS: tuple[str, ...] = get_args(Backend)


def resolve_backend(backend: str) -> Literal["rdkit", "numpy", "triton"]:
    """`auto` is triton on a CUDA device, else numpy; `triton` without CUDA needs TRITON_INTERPRET=1."""
    return resolve_backend_name(backend, BACKENDS, cpu_default="numpy")  # type: ignore[return-value]


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
