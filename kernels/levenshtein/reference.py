"""Numpy reference: exact unit-cost Levenshtein distances of many pairs, one DP row at a time for the whole batch."""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np

# Pairs per DP chunk are capped so that one chunk's row matrix stays near this many cells (about 64 MiB of int32).
MAX_CHUNK_CELLS = 1 << 24


def encode_codepoints(strings: Sequence[str], *, pad: int = -1) -> tuple[np.ndarray, np.ndarray]:
    """Encode strings as int32 code points padded with `pad` into a (len(strings), max_len) array, plus the lengths.

    The width is at least 1 so that an all-empty batch still has a valid 2-D array.

    Example:
        >>> codes, lengths = encode_codepoints(["αβ", ""])
        >>> codes.tolist(), lengths.tolist()
        ([[945, 946], [-1, -1]], [2, 0])
    """
    lengths = np.fromiter((len(s) for s in strings), dtype=np.int64, count=len(strings))
    width = max(1, int(lengths.max(initial=0)))
    codes = np.full((len(strings), width), pad, dtype=np.int32)
    flat = np.frombuffer("".join(strings).encode("utf-32-le", "surrogatepass"), dtype="<u4").astype(np.int32)
    rows = np.repeat(np.arange(len(strings)), lengths)
    starts = np.cumsum(lengths) - lengths
    cols = np.arange(flat.size) - np.repeat(starts, lengths)
    codes[rows, cols] = flat
    return codes, lengths


def _distances_of_chunk(a: Sequence[str], b: Sequence[str]) -> np.ndarray:
    """Row-wise DP over a padded chunk; row i of every pair still in play takes a handful of numpy calls."""
    by_len_a = np.argsort([-len(s) for s in a], kind="stable")  # pairs with a longer `a` first
    codes_a, len_a = encode_codepoints([a[k] for k in by_len_a], pad=-1)
    codes_b, len_b = encode_codepoints([b[k] for k in by_len_a], pad=-2)
    pairs, width_b = codes_b.shape
    columns = np.arange(width_b + 1, dtype=np.int32)
    row = np.broadcast_to(columns, (pairs, width_b + 1)).copy()  # D[0][j] = j
    out = len_b.copy()  # pairs with an empty `a`
    for i in range(1, int(len_a.max(initial=0)) + 1):
        live = int(np.count_nonzero(len_a >= i))  # a prefix, since `a` lengths decrease
        cost = (codes_a[:live, i - 1, None] != codes_b[:live]).astype(np.int32)
        # Best of deletion and substitution, then insertions as a running minimum along the row:
        # D[i][j] = min over k <= j of (T[k] + j - k) = j + cummin(T - k)[j].
        best = np.empty((live, width_b + 1), dtype=np.int32)
        best[:, 0] = i
        np.minimum(row[:live, 1:] + 1, row[:live, :-1] + cost, out=best[:, 1:])
        row = np.minimum.accumulate(best - columns, axis=1) + columns
        done = np.flatnonzero(len_a[:live] == i)
        out[done] = row[done, len_b[done]]
    distances = np.empty(pairs, dtype=np.int64)
    distances[by_len_a] = out
    return distances


def levenshtein_numpy(a: Sequence[str], b: Sequence[str]) -> np.ndarray:
    """Return the Levenshtein distance (unit costs, over code points) of each pair `(a[k], b[k])` as int64.

    Pairs are sorted by length and processed in chunks so padding and memory stay small.

    Example:
        >>> levenshtein_numpy(["kitten", "", "λόγος"], ["sitting", "abc", "λόγος"]).tolist()
        [3, 3, 0]
    """
    if len(a) != len(b):
        msg = f"`a` and `b` must have the same length, got {len(a)} and {len(b)}"
        raise ValueError(msg)
    len_a = np.fromiter((len(s) for s in a), dtype=np.int64, count=len(a))
    len_b = np.fromiter((len(s) for s in b), dtype=np.int64, count=len(b))
    order = np.lexsort((len_a, len_b))
    widths = len_b[order] + 1
    out = np.empty(len(a), dtype=np.int64)
    start = 0
    while start < len(order):
        # Widths grow along `order`, so the cells of a chunk are its size times the width of its last pair.
        cells = np.arange(1, len(order) - start + 1) * widths[start:]
        size = max(1, int(np.searchsorted(cells, MAX_CHUNK_CELLS, side="right")))
        chunk = order[start : start + size]
        out[chunk] = _distances_of_chunk([a[k] for k in chunk], [b[k] for k in chunk])
        start += size
    return out
