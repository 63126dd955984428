"""Bucket indexes that spill to disk: (key, row) records in hash-partitioned files, resolved one file at a time.

An exact-dedup index has one `BucketSpill` keyed by the 128-bit text key; an LSH index one per band keyed by the
band hash. Records are appended batch by batch while the input streams, so memory holds one batch; each
partition file is sized to fit the memory budget when it is loaded for resolution. A group of records with the
same key is a bucket; resolving a bucket gives (representative, member) pairs, the representative being the
lowest row (the earliest in input order).
"""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import numba
import numpy as np

RECORD = np.dtype([("k1", "<u8"), ("k2", "<u8"), ("row", "<i8")])
RECORD_ONE_KEY = np.dtype([("k1", "<u8"), ("row", "<i8")])


def partitions_for(rows: int, budget_bytes: int) -> int:
    """How many partition files keep one loaded partition (records, sort order, sorted copy) within
    `budget_bytes`."""
    return max(1, -(-rows * RECORD.itemsize * 3 // max(budget_bytes, 1)))


def second_key(records: np.ndarray) -> np.ndarray:
    """The records' k2, or zeros for one-key records."""
    return records["k2"] if "k2" in records.dtype.names else np.zeros(len(records), dtype=np.uint64)


class BucketSpill:
    """(k1, k2, row) records (without k2 when `two_keys` is False) appended to `partitions` files under `folder`,
    partitioned by `k1`."""

    def __init__(self, folder: Path, name: str, partitions: int, *, two_keys: bool = True) -> None:
        folder.mkdir(parents=True, exist_ok=True)
        self.dtype = RECORD if two_keys else RECORD_ONE_KEY
        self.paths = [folder / f"{name}-{index:04d}.bin" for index in range(partitions)]
        self._handles = [path.open("wb") for path in self.paths]

    def add(self, k1: np.ndarray, k2: np.ndarray | None, rows: np.ndarray) -> None:
        """Append one batch of records."""
        records = np.empty(len(rows), dtype=self.dtype)
        records["k1"], records["row"] = k1, rows
        if "k2" in self.dtype.names:
            records["k2"] = 0 if k2 is None else k2
        parts = len(self._handles)
        if parts == 1:
            records.tofile(self._handles[0])
            return
        which = (k1 >> np.uint64(40)) % np.uint64(parts)
        order = np.argsort(which, kind="stable")
        bounds = np.searchsorted(which[order], np.arange(parts + 1, dtype=np.uint64))
        for index in range(parts):
            chunk = records[order[bounds[index] : bounds[index + 1]]]
            if len(chunk):
                chunk.tofile(self._handles[index])

    def close(self) -> None:
        for handle in self._handles:
            handle.close()

    def partitions(self, alive: np.ndarray | None = None) -> Iterator[np.ndarray]:
        """Each partition's records (only rows with `alive[row]`), sorted by (k1, k2, row)."""
        self.close()
        for path in self.paths:
            records = np.fromfile(path, dtype=self.dtype)
            if alive is not None and len(records):
                records = records[alive[records["row"]]]
            # records are appended in row order, so a stable sort on k1 orders ties by row; a k1 shared by two
            # k2 values (a 64-bit collision) needs the full sort
            records = records[np.argsort(records["k1"], kind="stable")]
            if "k2" in self.dtype.names:
                k1, k2 = records["k1"], records["k2"]
                if np.any((k1[1:] == k1[:-1]) & (k2[1:] != k2[:-1])):
                    records = records[np.lexsort((records["row"], k2, k1))]
            yield records


@numba.njit(cache=True)
def bucket_pairs(k1: np.ndarray, k2: np.ndarray, rows: np.ndarray, all_pairs_up_to: int) -> np.ndarray:
    """(rep, member) pairs of each run of equal (k1, k2) in sorted records.

    A bucket of at most `all_pairs_up_to` rows gives every pair; a larger one its star from the lowest row
    plus the chain of consecutive rows.
    """
    n = rows.shape[0]
    out = np.empty((max(n * 2, 1), 2), dtype=np.int64)
    used = 0
    start = 0
    while start < n:
        end = start + 1
        while end < n and k1[end] == k1[start] and k2[end] == k2[start]:
            end += 1
        size = end - start
        if size > 1:
            if size <= all_pairs_up_to:
                for x in range(start, end):
                    for y in range(x + 1, end):
                        if used == out.shape[0]:
                            grown = np.empty((out.shape[0] * 2, 2), dtype=np.int64)
                            grown[:used] = out[:used]
                            out = grown
                        out[used, 0], out[used, 1] = rows[x], rows[y]
                        used += 1
            else:
                for y in range(start + 1, end):
                    if used + 2 > out.shape[0]:
                        grown = np.empty((out.shape[0] * 2, 2), dtype=np.int64)
                        grown[:used] = out[:used]
                        out = grown
                    out[used, 0], out[used, 1] = rows[start], rows[y]
                    used += 1
                    if y > start + 1:
                        out[used, 0], out[used, 1] = rows[y - 1], rows[y]
                        used += 1
        start = end
    return out[:used]


def unique_pairs(parts: list[np.ndarray]) -> np.ndarray:
    """The distinct (low, high) pairs of several pair arrays, sorted."""
    if not parts:
        return np.zeros((0, 2), dtype=np.int64)
    pairs = np.concatenate(parts)
    return np.unique(pairs, axis=0) if len(pairs) else pairs.reshape(0, 2)


@numba.njit(cache=True)
def greedy_keep(pairs: np.ndarray, dropped: np.ndarray, taken: np.ndarray) -> None:
    """Resolve sorted (low, high) duplicate pairs: the lowest row of a cluster stays, and each row joined by a
    pair to a kept row is dropped onto it (`dropped[high]`, and `taken[pair]` marks the pair that dropped it).
    A row similar only to dropped rows stays, so every dropped row is directly similar to the row it names."""
    for index in range(pairs.shape[0]):
        low, high = pairs[index, 0], pairs[index, 1]
        if not dropped[low] and not dropped[high]:
            dropped[high] = True
            taken[index] = True
