"""Morgan-fingerprint Tanimoto similarity (radius 2, 2048 bits, no chirality), as in GeLLMO and RePO."""

from __future__ import annotations

from collections.abc import Sequence
from functools import cache
from typing import Any

MORGAN_RADIUS = 2
MORGAN_BITS = 2048


@cache
def _generator() -> Any:
    from rdkit.Chem import rdFingerprintGenerator

    return rdFingerprintGenerator.GetMorganGenerator(radius=MORGAN_RADIUS, fpSize=MORGAN_BITS)


def morgan_fingerprint(mol: Any) -> Any:
    """The Morgan bit vector of a molecule (RDKit `ExplicitBitVect`)."""
    return _generator().GetFingerprint(mol)


def tanimoto(first: Any, second: Any) -> float:
    """Tanimoto similarity of two molecules."""
    from rdkit import DataStructs

    return DataStructs.TanimotoSimilarity(morgan_fingerprint(first), morgan_fingerprint(second))


def bulk_tanimoto(query: Any, mols: Sequence[Any]) -> list[float]:
    """Tanimoto similarity of `query` to each of `mols` (RDKit `BulkTanimotoSimilarity`)."""
    from rdkit import DataStructs

    return list(DataStructs.BulkTanimotoSimilarity(morgan_fingerprint(query), [morgan_fingerprint(m) for m in mols]))


def mean_pairwise_distance(mols: Sequence[Any]) -> float | None:
    """Internal diversity: 1 − mean pairwise Tanimoto over distinct pairs; None with fewer than two molecules."""
    from rdkit import DataStructs

    if len(mols) < 2:
        return None
    fps = [morgan_fingerprint(m) for m in mols]
    total, pairs = 0.0, 0
    for index in range(1, len(fps)):
        sims = DataStructs.BulkTanimotoSimilarity(fps[index], fps[:index])
        total += sum(sims)
        pairs += len(sims)
    return 1.0 - total / pairs
