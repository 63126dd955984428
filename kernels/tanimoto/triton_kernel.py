"""Bulk Tanimoto in triton: one query against a block of packed fingerprints per program, SWAR popcount.

Words are 32-bit values held in int64, so the shifts and masks of the SWAR popcount never touch a sign bit.
This module imports torch and triton at the top: import it only once the triton backend has been chosen, and set
TRITON_INTERPRET before triton is first imported in the process.
"""

from __future__ import annotations

import functools

import numpy as np
import torch
import triton
import triton.language as tl

from synth.kernels.runtime import check_interpreter_mode, triton_interpreting

BLOCK_CUDA = 128
BLOCK_INTERPRETER = 1024


@triton.jit
def _popcount32(x):
    """Set bits of each 32-bit value held in an int64 (SWAR)."""
    x = x - ((x >> 1) & 0x55555555)
    x = (x & 0x33333333) + ((x >> 2) & 0x33333333)
    x = (x + (x >> 4)) & 0x0F0F0F0F
    return (x * 0x01010101 >> 24) & 0xFF


def _tanimoto_kernel(query_ptr, targets_ptr, out_ptr, n_targets, n_words: tl.constexpr, block: tl.constexpr):
    rows = tl.program_id(0) * block + tl.arange(0, block)
    inside = rows < n_targets
    words = tl.arange(0, n_words)
    query = tl.load(query_ptr + words)
    targets = tl.load(targets_ptr + rows[:, None] * n_words + words[None, :], mask=inside[:, None], other=0)
    common = tl.sum(_popcount32(targets & query[None, :]), axis=1)
    union = tl.sum(_popcount32(query), axis=0) + tl.sum(_popcount32(targets), axis=1) - common
    similarity = tl.where(union > 0, common.to(tl.float64) / tl.maximum(union, 1).to(tl.float64), 0.0)
    tl.store(out_ptr + rows, similarity, mask=inside)


@functools.cache
def _compiled_kernel(interpret: bool):
    """The jitted kernel; triton reads TRITON_INTERPRET when jitting, so each mode gets its own wrapper."""
    check_interpreter_mode(interpret)
    return triton.jit(_tanimoto_kernel)


def tanimoto_triton(query: np.ndarray, targets: np.ndarray, *, block: int | None = None) -> np.ndarray:
    """Tanimoto of packed `query` (words,) to each row of packed `targets` (n, words), by the triton kernel."""
    interpret = triton_interpreting()
    device = "cpu" if interpret else "cuda"
    n_words = query.shape[0]
    if n_words & (n_words - 1):
        msg = f"the number of words must be a power of two, got {n_words}"
        raise ValueError(msg)
    if block is None:
        block = min(BLOCK_INTERPRETER, triton.next_power_of_2(max(len(targets), 1))) if interpret else BLOCK_CUDA
    out = torch.empty(len(targets), dtype=torch.float64, device=device)
    if not len(targets):
        return out.cpu().numpy()
    query_t = torch.from_numpy(np.ascontiguousarray(query, dtype=np.int64)).to(device)
    targets_t = torch.from_numpy(np.ascontiguousarray(targets, dtype=np.int64)).to(device)
    grid = (triton.cdiv(len(targets), block),)
    _compiled_kernel(interpret)[grid](query_t, targets_t, out, len(targets), n_words=n_words, block=block)
    return out.cpu().numpy()
