"""MinHash signatures spilled to one file, and candidate pairs verified against it within a memory budget."""

from __future__ import annotations

from pathlib import Path

import numba
import numpy as np


class SignatureFile:
    """uint32 signatures of `num_perm` values per row, appended in row order to `path`."""

    def __init__(self, path: Path, num_perm: int) -> None:
        self.path, self.num_perm = path, num_perm
        path.parent.mkdir(parents=True, exist_ok=True)
        self._handle = path.open("wb")

    def add(self, signatures: np.ndarray) -> None:
        np.ascontiguousarray(signatures, dtype=np.uint32).tofile(self._handle)

    def close(self) -> None:
        self._handle.close()

    def gather(self, rows: np.ndarray, *, chunk_rows: int = 1 << 15) -> np.ndarray:
        """Signatures of sorted, distinct `rows`, read by streaming the file chunk by chunk."""
        self.close()
        out = np.empty((len(rows), self.num_perm), dtype=np.uint32)
        width = self.num_perm * 4
        with self.path.open("rb") as handle:
            done = 0
            while done < len(rows):
                first = int(rows[done])
                last = min(first + chunk_rows, int(rows[-1]) + 1)
                stop = done + int(np.searchsorted(rows[done:], last))
                handle.seek(first * width)
                block = np.fromfile(handle, dtype=np.uint32, count=(last - first) * self.num_perm)
                block = block.reshape(-1, self.num_perm)
                out[done:stop] = block[rows[done:stop] - first]
                done = stop
        return out


@numba.njit(cache=True)
def _similarities(pairs: np.ndarray, index_low: np.ndarray, index_high: np.ndarray, sigs: np.ndarray) -> np.ndarray:
    out = np.empty(pairs.shape[0], dtype=np.float32)
    perms = sigs.shape[1]
    for p in range(pairs.shape[0]):
        a, b = index_low[p], index_high[p]
        same = 0
        for k in range(perms):
            same += sigs[a, k] == sigs[b, k]
        out[p] = same / perms
    return out


def verify_pairs(pairs: np.ndarray, signatures: SignatureFile, *, budget_bytes: int) -> np.ndarray:
    """The estimated Jaccard similarity (share of equal MinHash values) of each pair, computed in groups of pairs
    whose signatures fit `budget_bytes`."""
    out = np.empty(len(pairs), dtype=np.float32)
    per_group = max(1, budget_bytes // (2 * signatures.num_perm * 4))
    for start in range(0, len(pairs), per_group):
        group = pairs[start : start + per_group]
        rows = np.unique(group)
        sigs = signatures.gather(rows)
        out[start : start + len(group)] = _similarities(
            group, np.searchsorted(rows, group[:, 0]), np.searchsorted(rows, group[:, 1]), sigs
        )
    return out
