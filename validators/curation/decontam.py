"""Decontamination: which rows share a word n-gram with an evaluation item.

An item of at least `ngram` words contributes its `ngram`-grams; a shorter one (of at least `min_words`)
contributes itself as one n-gram of its own length, so a 10-word question is found inside a long dialogue.
`exact` matching compares whole normalised texts instead (canonical SMILES, identifiers).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field

import numpy as np
import pyarrow as pa

from synth.validators.curation.hashing import exact_keys, first_matches, ngram_hashes, text_buffers, word_counts


@dataclass(frozen=True)
class EvalIndex:
    """Sorted n-gram hashes of the evaluation items, per n-gram width, each with the item it came from."""

    ngram: int
    exact: bool
    tables: dict[int, tuple[np.ndarray, np.ndarray]] = field(default_factory=dict)
    items: int = 0
    indexed: int = 0

    @classmethod
    def build(cls, texts: Sequence[str], *, ngram: int, min_words: int, exact: bool = False) -> EvalIndex:
        """Index normalised evaluation `texts` (item i is `texts[i]`); items too short to index are skipped."""
        data, offsets = text_buffers(pa.array(list(texts), type=pa.large_string()))
        tables: dict[int, tuple[np.ndarray, np.ndarray]] = {}
        if exact:
            keys = exact_keys(data, offsets)[:, 0]
            usable = np.flatnonzero(np.diff(offsets) > 0)
            tables[0] = _sorted(keys[usable], usable)
            return cls(ngram=ngram, exact=True, tables=tables, items=len(texts), indexed=len(usable))
        words = word_counts(data, offsets)
        indexed = 0
        widths = sorted({ngram, *(int(w) for w in words if min_words <= w < ngram)})
        for width in widths:
            chosen = np.flatnonzero(words >= ngram) if width == ngram else np.flatnonzero(words == width)
            if not len(chosen):
                continue
            starts, hashes = ngram_hashes(data, offsets, width)
            counts = np.diff(starts)[chosen]
            picks = np.concatenate([np.arange(starts[i], starts[i + 1]) for i in chosen])
            tables[width] = _sorted(hashes[picks], np.repeat(chosen, counts))
            indexed += len(chosen)
        return cls(ngram=ngram, exact=False, tables=tables, items=len(texts), indexed=indexed)

    def match(self, data: np.ndarray, offsets: np.ndarray) -> np.ndarray:
        """Per text, the first evaluation item it overlaps (lowest n-gram width first), else -1."""
        found = np.full(len(offsets) - 1, -1, dtype=np.int64)
        for width, (table, items) in sorted(self.tables.items()):
            if self.exact:
                nonempty = np.diff(offsets) > 0
                keys = exact_keys(data, offsets)[:, 0][nonempty]
                starts = np.concatenate([[0], np.cumsum(nonempty)]).astype(np.int64)
                hits = first_matches(starts, keys, table, items)
            else:
                starts, hashes = ngram_hashes(data, offsets, width)
                hits = first_matches(starts, hashes, table, items)
            found = np.where(found < 0, hits, found)
        return found


def _sorted(hashes: np.ndarray, items: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    order = np.lexsort((items, hashes))
    hashes, items = hashes[order], items[order]
    first = np.concatenate([[True], hashes[1:] != hashes[:-1]]) if len(hashes) else np.zeros(0, dtype=bool)
    return np.ascontiguousarray(hashes[first]), np.ascontiguousarray(items[first].astype(np.int64))
