"""numba kernels over a batch of normalised texts (UTF-8 bytes + Arrow offsets): keys, shingles, MinHash.

Texts are expected normalised (`text.normalize_expr`): tokens are the byte runs between single spaces. Every
hash is a fixed function of the bytes (FNV-1a 64 and a splitmix64 finaliser), the same in every process and on
every machine, unlike Python's `hash()` or polars' `hash()`.
"""

from __future__ import annotations

from typing import Literal

import numba
import numpy as np
import pyarrow as pa
import pyarrow.compute as pc

FNV_OFFSET = np.uint64(0xCBF29CE484222325)
FNV_PRIME = np.uint64(0x100000001B3)
MERSENNE = np.uint64((1 << 61) - 1)
MAX_HASH = np.uint64(0xFFFFFFFF)
EMPTY = np.uint32(0xFFFFFFFF)
Unit = Literal["word", "char"]


def text_buffers(array: pa.Array | pa.ChunkedArray) -> tuple[np.ndarray, np.ndarray]:
    """(bytes as uint8, int64 offsets of len+1) of a string array; nulls read as empty strings."""
    if isinstance(array, pa.ChunkedArray):
        array = array.combine_chunks() if array.num_chunks != 1 else array.chunk(0)
    array = pc.fill_null(array.cast(pa.large_string()), "")
    if isinstance(array, pa.ChunkedArray):
        array = array.combine_chunks()
    _, offsets, data = array.buffers()
    offsets_np = np.frombuffer(offsets, dtype=np.int64)[array.offset : array.offset + len(array) + 1]
    data_np = np.frombuffer(data, dtype=np.uint8) if data is not None else np.zeros(0, dtype=np.uint8)
    return data_np, np.ascontiguousarray(offsets_np)


@numba.njit(cache=True, inline="always")
def _mix64(x: np.uint64) -> np.uint64:
    x ^= x >> np.uint64(30)
    x *= np.uint64(0xBF58476D1CE4E5B9)
    x ^= x >> np.uint64(27)
    x *= np.uint64(0x94D049BB133111EB)
    x ^= x >> np.uint64(31)
    return x


@numba.njit(cache=True)
def _fnv(data: np.ndarray, start: int, end: int) -> np.uint64:
    h = FNV_OFFSET
    for i in range(start, end):
        h ^= np.uint64(data[i])
        h *= FNV_PRIME
    return h


@numba.njit(cache=True)
def exact_keys(data: np.ndarray, offsets: np.ndarray) -> np.ndarray:
    """128-bit key per text as two uint64 columns (FNV-1a 64 and a second, independently mixed hash)."""
    n = offsets.shape[0] - 1
    out = np.empty((n, 2), dtype=np.uint64)
    for row in range(n):
        start, end = offsets[row], offsets[row + 1]
        out[row, 0] = _fnv(data, start, end)
        h = np.uint64(end - start) ^ np.uint64(0x9E3779B97F4A7C15)
        for i in range(start, end):
            h = _mix64(h ^ np.uint64(data[i]))
        out[row, 1] = h
    return out


@numba.njit(cache=True)
def _token_hashes(data: np.ndarray, start: int, end: int, unit_char: bool, buffer: np.ndarray) -> int:
    """Hash each token (a space-separated word, or a byte for `char`) into `buffer`; return the count."""
    count = 0
    if unit_char:
        for i in range(start, end):
            buffer[count] = _mix64(np.uint64(data[i]) + np.uint64(1))
            count += 1
        return count
    word = start
    for i in range(start, end + 1):
        if i == end or data[i] == 32:
            if i > word:
                buffer[count] = _fnv(data, word, i)
                count += 1
            word = i + 1
    return count


@numba.njit(cache=True, inline="always")
def _window(tokens: np.ndarray, first: int, width: int) -> np.uint64:
    h = np.uint64(width) * np.uint64(0x9E3779B97F4A7C15)
    for k in range(first, first + width):
        h = _mix64(h ^ tokens[k])
    return h


@numba.njit(cache=True, inline="always")
def _mod_mersenne(x: np.uint64) -> np.uint64:
    """`x mod (2^61 - 1)` without a division."""
    x = (x & MERSENNE) + (x >> np.uint64(61))
    return x - MERSENNE if x >= MERSENNE else x


@numba.njit(cache=True)
def _signatures(
    data: np.ndarray, offsets: np.ndarray, n: int, unit_char: bool, a: np.ndarray, b: np.ndarray
) -> tuple[np.ndarray, np.ndarray]:
    rows, perms = offsets.shape[0] - 1, a.shape[0]
    sig = np.full((rows, perms), EMPTY, dtype=np.uint32)
    shingles = np.zeros(rows, dtype=np.int32)
    longest = 1
    for row in range(rows):
        longest = max(longest, offsets[row + 1] - offsets[row] + 1)
    tokens = np.empty(longest, dtype=np.uint64)
    for row in range(rows):
        count = _token_hashes(data, offsets[row], offsets[row + 1], unit_char, tokens)
        if count == 0:
            continue
        width = min(n, count)
        windows = count - width + 1
        shingles[row] = windows
        for w in range(windows):
            x = _window(tokens, w, width) & MAX_HASH
            for k in range(perms):
                v = np.uint32(_mod_mersenne(a[k] * x + b[k]) & MAX_HASH)
                if v < sig[row, k]:
                    sig[row, k] = v
    return sig, shingles


def permutations(num_perm: int, seed: int) -> tuple[np.ndarray, np.ndarray]:
    """The (a, b) of `num_perm` universal hash functions `(a*x + b) mod (2^61 - 1)`, from `seed`."""
    rng = np.random.Generator(np.random.PCG64(seed))
    a = rng.integers(1, 1 << 32, size=num_perm, dtype=np.uint64)
    b = rng.integers(0, 1 << 32, size=num_perm, dtype=np.uint64)
    return a, b


def minhash_signatures(
    data: np.ndarray, offsets: np.ndarray, *, ngram: int, unit: Unit, a: np.ndarray, b: np.ndarray
) -> tuple[np.ndarray, np.ndarray]:
    """(uint32 signatures [rows, num_perm], shingle counts) over word or byte n-grams; a text shorter than
    `ngram` tokens is one shingle, an empty text has none (its signature is all 0xFFFFFFFF)."""
    return _signatures(data, offsets, ngram, unit == "char", a, b)


@numba.njit(cache=True)
def band_hashes(sig: np.ndarray, bands: int, rows: int) -> np.ndarray:
    """uint64 [n, bands]: one hash of each band's `rows` consecutive signature values."""
    n = sig.shape[0]
    out = np.empty((n, bands), dtype=np.uint64)
    for i in range(n):
        for band in range(bands):
            h = np.uint64(band + 1) * np.uint64(0x9E3779B97F4A7C15)
            for k in range(band * rows, (band + 1) * rows):
                h = _mix64(h ^ np.uint64(sig[i, k]))
            out[i, band] = h
    return out


@numba.njit(cache=True)
def ngram_hashes(data: np.ndarray, offsets: np.ndarray, width: int) -> tuple[np.ndarray, np.ndarray]:
    """Word `width`-grams of each text as CSR: (row offsets of len+1, uint64 hashes); a text with fewer words
    has none."""
    rows = offsets.shape[0] - 1
    longest = 1
    total = 0
    for row in range(rows):
        size = offsets[row + 1] - offsets[row]
        longest = max(longest, size + 1)
        total += size // 2 + 1
    tokens = np.empty(longest, dtype=np.uint64)
    out = np.empty(total, dtype=np.uint64)
    starts = np.zeros(rows + 1, dtype=np.int64)
    used = 0
    for row in range(rows):
        count = _token_hashes(data, offsets[row], offsets[row + 1], False, tokens)
        for w in range(count - width + 1):
            out[used] = _window(tokens, w, width)
            used += 1
        starts[row + 1] = used
    return starts, out[:used]


@numba.njit(cache=True)
def word_counts(data: np.ndarray, offsets: np.ndarray) -> np.ndarray:
    """Words (space-separated runs) per normalised text."""
    rows = offsets.shape[0] - 1
    out = np.zeros(rows, dtype=np.int64)
    for row in range(rows):
        inside = False
        for i in range(offsets[row], offsets[row + 1]):
            if data[i] == 32:
                inside = False
            elif not inside:
                inside = True
                out[row] += 1
    return out


@numba.njit(cache=True)
def first_matches(starts: np.ndarray, hashes: np.ndarray, table: np.ndarray, items: np.ndarray) -> np.ndarray:
    """Per row, the item of its first n-gram found in the sorted `table` (items aligned with it), else -1."""
    rows = starts.shape[0] - 1
    out = np.full(rows, -1, dtype=np.int64)
    if table.shape[0] == 0:
        return out
    for row in range(rows):
        for i in range(starts[row], starts[row + 1]):
            pos = np.searchsorted(table, hashes[i])
            if pos < table.shape[0] and table[pos] == hashes[i]:
                out[row] = items[pos]
                break
    return out


@numba.njit(cache=True)
def shingle_sets(
    data: np.ndarray, offsets: np.ndarray, n: int, unit_char: bool, chosen: np.ndarray
) -> tuple[np.ndarray, np.ndarray]:
    """The sorted distinct 32-bit shingle hashes (the values MinHash permutes) of the `chosen` texts, as CSR."""
    longest, total = 1, 0
    for row in chosen:
        size = offsets[row + 1] - offsets[row] + 1
        longest = max(longest, size)
        total += size
    tokens = np.empty(longest, dtype=np.uint64)
    out = np.empty(total, dtype=np.uint32)
    starts = np.zeros(chosen.shape[0] + 1, dtype=np.int64)
    used = 0
    for index in range(chosen.shape[0]):
        row = chosen[index]
        count = _token_hashes(data, offsets[row], offsets[row + 1], unit_char, tokens)
        if count > 0:
            width = min(n, count)
            windows = count - width + 1
            values = np.empty(windows, dtype=np.uint32)
            for w in range(windows):
                values[w] = np.uint32(_window(tokens, w, width) & MAX_HASH)
            values = np.unique(values)
            out[used : used + values.shape[0]] = values
            used += values.shape[0]
        starts[index + 1] = used
    return starts, out[:used]


@numba.njit(cache=True)
def jaccard_pairs(first: np.ndarray, second: np.ndarray, starts: np.ndarray, values: np.ndarray) -> np.ndarray:
    """Exact Jaccard similarity of CSR sets `first[p]` and `second[p]` (sorted distinct values)."""
    out = np.zeros(first.shape[0], dtype=np.float32)
    for p in range(first.shape[0]):
        i, end_i = starts[first[p]], starts[first[p] + 1]
        j, end_j = starts[second[p]], starts[second[p] + 1]
        size = (end_i - i) + (end_j - j)
        if size == 0:
            continue
        common = 0
        while i < end_i and j < end_j:
            if values[i] == values[j]:
                common += 1
                i += 1
                j += 1
            elif values[i] < values[j]:
                i += 1
            else:
                j += 1
        out[p] = common / (size - common)
    return out
