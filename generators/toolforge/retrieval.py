"""Simulated retrieval: BM25 (rank-bm25) over a seed's context sentences; virtual tools are never executed.

- successful: the BM25 top-k over the non-gold sentences plus the call's gold sentences, shuffled;
- misleading: the same ranking with every gold sentence removed (distractors move up into the top-k);
- insufficient: a lower band of the ranking (related but not enough), for fallback cascades.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass
from functools import cached_property

import numpy as np
from rank_bm25 import BM25Okapi

from synth.validators.toolforge.model import Evidence, QASeed

_STOPWORD_TEXT = (
    "a an the of in on at to for from by with and or but is are was were be been being which who whom whose what "
    "when where why how that this these those it its as did do does has have had than then there their they he "
    "she his her him them also both same not no yes s can could would should will many much during into about "
    "whose one ones"
)
STOPWORDS = frozenset(_STOPWORD_TEXT.split())
_WORD = re.compile(r"\w+", re.UNICODE)


def tokens(text: str) -> list[str]:
    """Lower-cased word tokens without stopwords (BM25 terms)."""
    return [w for w in _WORD.findall(text.lower()) if w not in STOPWORDS]


@dataclass(frozen=True)
class SentenceIndex:
    """BM25 over every sentence of a seed's context, with gold flags."""

    seed: QASeed

    @cached_property
    def refs(self) -> tuple[tuple[int, int], ...]:
        """(passage, sentence) of every non-empty sentence, in context order (duplicates of text dropped)."""
        seen: set[str] = set()
        refs = []
        for p, passage in enumerate(self.seed.passages):
            for s, text in enumerate(passage.sentences):
                key = " ".join(tokens(text))
                if key and key not in seen:
                    seen.add(key)
                    refs.append((p, s))
        return tuple(refs)

    @cached_property
    def _bm25(self) -> BM25Okapi:
        corpus = [tokens(f"{self.seed.passages[p].title} {self.seed.sentence((p, s))}") for p, s in self.refs]
        return BM25Okapi(corpus)

    def evidence(self, ref: tuple[int, int]) -> Evidence:
        """The `Evidence` item of one sentence."""
        p, s = ref
        return Evidence(p, s, self.seed.passages[p].title, self.seed.sentence(ref).strip(), ref in self.seed.supporting)

    @cached_property
    def gold(self) -> frozenset[tuple[int, int]]:
        """The seed's supporting sentences, and any other sentence with the same text (never a distractor)."""
        texts = {" ".join(tokens(self.seed.sentence(ref))) for ref in self.seed.supporting}
        same = {ref for ref in self.refs if " ".join(tokens(self.seed.sentence(ref))) in texts}
        return frozenset({*self.seed.supporting, *same})

    def ranking(self, query: str) -> list[tuple[int, int]]:
        """All sentences by BM25 score for `query` (ties in context order)."""
        scores = self._bm25.get_scores(tokens(query))
        order = np.lexsort((np.arange(len(scores)), -scores))
        return [self.refs[i] for i in order]

    def rank_of(self, query: str, refs: Sequence[tuple[int, int]]) -> int:
        """The worst (1-based) rank any of `refs` gets for `query`."""
        ranking = self.ranking(query)
        return max(ranking.index(ref) + 1 if ref in ranking else len(ranking) + 1 for ref in refs)

    def successful(
        self, query: str, gold: Sequence[tuple[int, int]], k: int, rng: np.random.Generator
    ) -> tuple[Evidence, ...]:
        """Top-k distractors plus the call's gold sentences, shuffled."""
        distractors = [ref for ref in self.ranking(query) if ref not in self.gold][:k]
        items = [self.evidence(ref) for ref in (*dict.fromkeys(gold), *distractors)]
        return tuple(items[i] for i in rng.permutation(len(items)))

    def misleading(self, query: str, k: int) -> tuple[Evidence, ...]:
        """The top-k of the ranking with every gold sentence removed."""
        return tuple(self.evidence(ref) for ref in self.ranking(query) if ref not in self.gold)[:k]

    def insufficient(self, query: str, k: int) -> tuple[Evidence, ...]:
        """The band just below the top-k (ranks k+1 … 2k) of the gold-free ranking."""
        return tuple(self.evidence(ref) for ref in self.ranking(query) if ref not in self.gold)[k : 2 * k]
