"""Packed fingerprints and the numpy reference of bulk Tanimoto similarity.

A fingerprint of `n_bits` bits is packed into `n_bits / 32` unsigned 32-bit words held in int64 (bit i of the
fingerprint is bit i % 32 of word i // 32), so a popcount needs no unsigned arithmetic in the kernel. Tanimoto is
|a ∧ b| / (|a| + |b| − |a ∧ b|) in float64, and 0.0 when both are empty, as in RDKit.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy as np

WORD_BITS = 32


def pack_fingerprints(fingerprints: Sequence[Any], *, n_bits: int | None = None) -> np.ndarray:
    """Pack RDKit `ExplicitBitVect`s (all of one length) into an int64 array of shape (n, n_bits / 32)."""
    if n_bits is None:
        n_bits = fingerprints[0].GetNumBits() if len(fingerprints) else 2048
    if n_bits % WORD_BITS:
        msg = f"`n_bits` must be a multiple of {WORD_BITS}, got {n_bits}"
        raise ValueError(msg)
    bits = np.zeros((len(fingerprints), n_bits), dtype=np.uint8)
    for row, fingerprint in enumerate(fingerprints):
        if fingerprint.GetNumBits() != n_bits:
            msg = f"fingerprint {row} has {fingerprint.GetNumBits()} bits, expected {n_bits}"
            raise ValueError(msg)
        bits[row, list(fingerprint.GetOnBits())] = 1
    words = np.packbits(bits.reshape(len(fingerprints), -1, WORD_BITS), axis=2, bitorder="little")
    return words.view("<u4").reshape(len(fingerprints), -1).astype(np.int64)


def tanimoto_numpy(query: np.ndarray, targets: np.ndarray) -> np.ndarray:
    """Tanimoto similarity of one packed fingerprint `query` (words,) to each row of `targets` (n, words)."""
    if query.ndim != 1 or targets.ndim != 2 or targets.shape[1] != query.shape[0]:
        msg = f"`query` must be (words,) and `targets` (n, words), got {query.shape} and {targets.shape}"
        raise ValueError(msg)
    common = np.bitwise_count(targets & query[None, :]).sum(axis=1, dtype=np.int64)
    union = np.bitwise_count(query).sum(dtype=np.int64) + np.bitwise_count(targets).sum(axis=1, dtype=np.int64)
    union -= common
    out = np.zeros(len(targets), dtype=np.float64)
    np.divide(common, union, out=out, where=union > 0)
    return out
