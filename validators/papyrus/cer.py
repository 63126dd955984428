"""Recompute the Levenshtein distance of each degraded text and check it hits the target exactly."""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import ClassVar

import pyarrow as pa
from rapidfuzz.distance import Levenshtein

from synth.pipelines.records import Verdict
from synth.pipelines.steps import Verifier

# Greek letters (basic block incl. the numeral letters stigma, koppa, sampi), space and newline.
ALPHABET = re.compile(r"[\u03b1-\u03c9\u03db\u03d9\u03df\u03e1 \n]*")


@dataclass(frozen=True, kw_only=True)
class CERVerifier(Verifier):
    """Pass a row only if `lev(text_clean, text_noisy) == k` and the noisy text keeps the alphabet."""

    reads: ClassVar[tuple[str, ...]] = ("text_clean", "text_noisy", "k", "n_ref")
    scores: ClassVar[tuple[str, ...]] = ("distance", "rate")

    def verify(self, table: pa.Table) -> list[Verdict]:
        columns = table.select(list(self.reads)).to_pydict()
        verdicts = []
        for clean, noisy, k, n_ref in zip(*(columns[c] for c in self.reads), strict=True):
            distance = Levenshtein.distance(clean, noisy)
            reasons = []
            if distance != k:
                reasons.append("distance_mismatch")
            if ALPHABET.fullmatch(noisy) is None:
                reasons.append("alphabet")
            cer = distance / n_ref if n_ref else 0.0
            verdicts.append(Verdict(not reasons, tuple(reasons), {"distance": float(distance), "rate": cer}))
        return verdicts
