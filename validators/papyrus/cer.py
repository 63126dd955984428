"""Recompute the Levenshtein distance of each degraded text and check it hits the target exactly."""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import ClassVar, Literal, get_args

import pyarrow as pa

from synth.core.errors import MissingDependencyError
from synth.core.records import Verdict
from synth.core.steps import Verifier
from synth.kernels.levenshtein import levenshtein_batch, missing_triton_requirement

Kernel = Literal["rapidfuzz", "triton"]

# Greek letters (basic block incl. the numeral letters stigma, koppa, sampi), space and newline.
ALPHABET = re.compile(r"[\u03b1-\u03c9\u03db\u03d9\u03df\u03e1 \n]*")


@dataclass(frozen=True, kw_only=True)
class CERVerifier(Verifier):
    """Pass a row only if `lev(text_clean, text_noisy) == k` and the noisy text keeps the alphabet.

    `kernel` picks how a batch's distances are computed: `rapidfuzz` on CPU, or `triton` (needs torch and triton,
    and a CUDA GPU, or TRITON_INTERPRET=1 for the slow CPU interpreter). Both give the same exact distances.
    """

    kernel: Kernel = "rapidfuzz"
    reads: ClassVar[tuple[str, ...]] = ("text_clean", "text_noisy", "k", "n_ref")
    scores: ClassVar[tuple[str, ...]] = ("distance", "rate")

    def __post_init__(self) -> None:
        super().__post_init__()
        if self.kernel not in get_args(Kernel):
            msg = f"step `{self.name}`: `kernel` must be rapidfuzz or triton, got {self.kernel!r}"
            raise ValueError(msg)
        # `requires` is a ClassVar, so the kernel's optional packages are checked here, per instance.
        missing = missing_triton_requirement() if self.kernel == "triton" else None
        if missing is not None:
            module, extra = missing
            msg = (
                f"step `{self.name}` needs the `{module}` package for `kernel='triton'`; "
                f"install it with `pip install '{extra}'`"
            )
            raise MissingDependencyError(msg)

    def verify(self, table: pa.Table) -> list[Verdict]:
        columns = table.select(list(self.reads)).to_pydict()
        distances = levenshtein_batch(columns["text_clean"], columns["text_noisy"], backend=self.kernel).tolist()
        verdicts = []
        rows = zip(columns["text_noisy"], columns["k"], columns["n_ref"], distances, strict=True)
        for noisy, k, n_ref, distance in rows:
            reasons = []
            if distance != k:
                reasons.append("distance_mismatch")
            if ALPHABET.fullmatch(noisy) is None:
                reasons.append("alphabet")
            cer = distance / n_ref if n_ref else 0.0
            verdicts.append(Verdict(not reasons, tuple(reasons), {"distance": float(distance), "rate": cer}))
        return verdicts
