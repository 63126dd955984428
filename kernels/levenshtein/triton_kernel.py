"""Batched Levenshtein distance in triton: bit-parallel Myers/Hyyrö DP, one lane per pair, one program per block.

Each pair is split into a pattern (the DP rows, packed 64 per int64 word) and a text (the DP columns). A program
takes `block_p` pairs side by side and, word by word, sweeps the text columns with Myers' bit-vector step; the
horizontal delta leaving the top of a word at column j is kept in a scratch buffer and enters the next word at the
same column (Hyyrö's multi-word variant, words processed one after another rather than interleaved). The distance
is `len(text)` plus the vertical deltas of the last column, counted per word over the rows of the pattern.

This module imports torch and triton at the top: import it only once a triton backend has been chosen. Triton
decides at import time whether its own library functions are interpreted, so TRITON_INTERPRET=1 must be set before
triton is first imported in the process.
"""

from __future__ import annotations

import functools
from collections.abc import Sequence

import numpy as np
import torch
import triton
import triton.language as tl

from synth.kernels.levenshtein.reference import encode_codepoints
from synth.kernels.runtime import check_interpreter_mode, triton_interpreting

WORD_BITS = 64
# Pairs per program: one program per few pairs keeps a GPU busy; the interpreter pays per program, so it takes many.
BLOCK_PAIRS_CUDA = 32
BLOCK_PAIRS_INTERPRETER = 4096
# Pairs per launch are capped so a launch's (pairs x length) buffers stay near 512 MiB and int32 offsets fit.
MAX_LAUNCH_CELLS = 1 << 25


def _levenshtein_kernel(
    pattern_ptr,  # int32 (pairs, pattern_width): code points of the patterns, padded with -1 to whole words
    text_ptr,  # int32 (text_width, pairs): code points of the texts, padded with -2; column j of all pairs contiguous
    pattern_len_ptr,  # int32 (pairs,)
    text_len_ptr,  # int32 (pairs,)
    carry_ptr,  # int64 (2, text_width, pairs): horizontal deltas between words, plane 0 preset to +1
    out_ptr,  # int64 (pairs,)
    n_pairs,  # a multiple of block_p: the host pads the batch, so no load needs a mask
    pattern_width,
    carry_plane,  # text_width * n_pairs
    block_p: tl.constexpr,
):
    lanes = tl.program_id(0) * block_p + tl.arange(0, block_p)
    m = tl.load(pattern_len_ptr + lanes)
    n = tl.load(text_len_ptr + lanes).to(tl.int64)
    n_words = (tl.max(m, axis=0) + 63) // 64

    # Constants as tensors: the interpreter charges each op, and a literal operand costs a broadcast more.
    bits = tl.arange(0, 64).to(tl.int64)
    zero = tl.zeros([block_p], dtype=tl.int64)
    one = zero + 1
    two = zero + 2
    all_ones = zero - 1
    sign = zero + 63
    no_bits = tl.zeros([block_p, 64], dtype=tl.int64)
    bit_tile = no_bits + (1 << bits)[None, :]
    column_step = (zero + n_pairs).to(tl.int32)
    distance = n  # D[0][n]; the vertical deltas of the last column are added word by word

    for w in range(0, n_words):
        pattern = tl.load(pattern_ptr + lanes[:, None] * pattern_width + (w * 64 + bits)[None, :])
        text = text_ptr + lanes[:, None]
        # Carries alternate between two planes so no thread overwrites a delta another thread has yet to read.
        carry_in = carry_ptr + (w % 2) * carry_plane + lanes
        carry_out = carry_ptr + ((w + 1) % 2) * carry_plane + lanes
        pv = all_ones  # column 0: every vertical delta is +1
        mv = zero
        column = zero
        # Sweep the columns of the longest text among the pairs whose pattern reaches this word.
        n_max = tl.max(tl.where(m > w * 64, n, zero), axis=0)
        for _ in range(0, n_max):
            char = tl.load(text)
            eq = tl.sum(tl.where(pattern == char, bit_tile, no_bits), axis=1)
            h_in = tl.load(carry_in)  # bit 0: +1 enters this word, bit 1: -1 enters
            h_pos = h_in & one
            h_neg = h_in >> one
            xv = eq | mv
            eq = eq | h_neg
            xh = (((eq & pv) + pv) ^ pv) | eq
            ph = mv | ((xh | pv) ^ all_ones)
            mh = pv & xh
            tl.store(carry_out, ((ph >> sign) & one) | ((mh >> sign) & two))
            ph = (ph << one) | h_pos
            mh = (mh << one) | h_neg
            active = column < n  # lanes past the end of their text keep their last column
            pv = tl.where(active, mh | ((xv | ph) ^ all_ones), pv)
            mv = tl.where(active, ph & xv, mv)
            column += one
            text += column_step[:, None]
            carry_in += column_step
            carry_out += column_step
        # Count the vertical deltas of the last column on the rows of this word that lie inside the pattern.
        rows_in = tl.minimum(tl.maximum(m - w * 64, 0), 64).to(tl.int64)
        row_mask = tl.where(rows_in >= 64, all_ones, (one << tl.minimum(rows_in, 63)) - one)
        plus = ((pv & row_mask)[:, None] >> bits[None, :]) & 1
        minus = ((mv & row_mask)[:, None] >> bits[None, :]) & 1
        distance += tl.sum(plus - minus, axis=1)
        # The next word reads, in other threads, the carries this word wrote.
        tl.debug_barrier()

    tl.store(out_ptr + lanes, distance)


@functools.cache
def _compiled_kernel(interpret: bool):
    """The jitted kernel; triton reads TRITON_INTERPRET when jitting, so each mode gets its own wrapper."""
    check_interpreter_mode(interpret)
    return triton.jit(_levenshtein_kernel)


def _orient_and_order(len_a: np.ndarray, len_b: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Pick the pattern side of each pair (fewer word-column steps) and an order grouping similar work."""
    words_a = -(-len_a // WORD_BITS)
    words_b = -(-len_b // WORD_BITS)
    a_is_pattern = words_a * len_b <= words_b * len_a
    m = np.where(a_is_pattern, len_a, len_b)
    n = np.where(a_is_pattern, len_b, len_a)
    order = np.lexsort((n, -(-m // WORD_BITS)))
    return a_is_pattern, order


def levenshtein_triton(
    a: Sequence[str], b: Sequence[str], *, device: str | None = None, block_pairs: int | None = None
) -> np.ndarray:
    """Return the Levenshtein distance of each pair `(a[k], b[k])` as int64, computed by the triton kernel.

    Args:
        device: torch device for the tensors; "cuda" by default, "cpu" under TRITON_INTERPRET=1.
        block_pairs: pairs per program, a power of two; by default 32 on CUDA, up to 4096 in the interpreter.
    """
    if len(a) != len(b):
        msg = f"`a` and `b` must have the same length, got {len(a)} and {len(b)}"
        raise ValueError(msg)
    interpret = triton_interpreting()
    device = device or ("cpu" if interpret else "cuda")
    if block_pairs is None:
        block_pairs = min(BLOCK_PAIRS_INTERPRETER, triton.next_power_of_2(len(a))) if interpret else BLOCK_PAIRS_CUDA
    if block_pairs < 1 or block_pairs & (block_pairs - 1):
        msg = f"`block_pairs` must be a power of two, got {block_pairs}"
        raise ValueError(msg)
    out = np.empty(len(a), dtype=np.int64)
    if not len(a):
        return out
    len_a = np.fromiter((len(s) for s in a), dtype=np.int64, count=len(a))
    len_b = np.fromiter((len(s) for s in b), dtype=np.int64, count=len(b))
    a_is_pattern, order = _orient_and_order(len_a, len_b)
    width = int(max(len_a.max(), len_b.max())) + WORD_BITS
    chunk = max(block_pairs, MAX_LAUNCH_CELLS // width // block_pairs * block_pairs)
    kernel = _compiled_kernel(interpret)
    for start in range(0, len(order), chunk):
        ids = order[start : start + chunk]
        patterns = [a[k] if a_is_pattern[k] else b[k] for k in ids]
        texts = [b[k] if a_is_pattern[k] else a[k] for k in ids]
        out[ids] = _launch(kernel, patterns, texts, device=device, block_pairs=block_pairs)
    return out


def _launch(kernel, patterns: list[str], texts: list[str], *, device: str, block_pairs: int) -> np.ndarray:
    """Pad one chunk to whole blocks of pairs and whole pattern words, run the kernel, return the distances."""
    pairs = len(patterns)
    padded = -(-pairs // block_pairs) * block_pairs
    filler = [""] * (padded - pairs)
    pattern_codes, pattern_len = encode_codepoints(patterns + filler, pad=-1)
    text_codes, text_len = encode_codepoints(texts + filler, pad=-2)
    words = -(-pattern_codes.shape[1] // WORD_BITS)
    pattern_codes = np.pad(pattern_codes, ((0, 0), (0, words * WORD_BITS - pattern_codes.shape[1])), constant_values=-1)
    pattern_t = torch.from_numpy(pattern_codes).to(device)
    text_t = torch.from_numpy(np.ascontiguousarray(text_codes.T)).to(device)
    pattern_len_t = torch.from_numpy(pattern_len.astype(np.int32)).to(device)
    text_len_t = torch.from_numpy(text_len.astype(np.int32)).to(device)
    carry = torch.zeros((2, *text_t.shape), dtype=torch.int64, device=device)
    carry[0] = 1
    out = torch.empty(padded, dtype=torch.int64, device=device)
    kernel[(padded // block_pairs,)](
        pattern_t,
        text_t,
        pattern_len_t,
        text_len_t,
        carry,
        out,
        padded,
        pattern_t.shape[1],
        carry[0].numel(),
        block_p=block_pairs,
    )
    return out[:pairs].cpu().numpy()
