"""Case scripts: a clean run or one error-and-recovery script at one round, for self-reflection data.

| case | failed call (kind) | observation | recovery |
|---|---|---|---|
| `clean` | none | gold | none |
| `wrong_tool` | a plausible tool of another family | misleading | the gold tool |
| `wrong_arguments` | the gold tool, `query` about the wrong target | misleading | the corrected `query` |
| `misleading` | the gold tool, a vague `query` | misleading (gold absent) | a re-query naming the need |
| `fallback` | the gold family's specialist | insufficient (a lower band) | the general search tool |
| `early_stop_avoided` | none (multi-round only) | gold | a later round's reasoning refuses to stop early |

Each error script applies to one hop (a call of a parallel round, or one round of a chain); the retry runs in the
next round, so a failure adds one round.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Literal

import numpy as np

from synth.generators.toolforge.paradigms import ParadigmChoice

CaseKind = Literal["clean", "wrong_tool", "wrong_arguments", "misleading", "fallback", "early_stop_avoided"]
REFLECTION_KINDS: tuple[CaseKind, ...] = (
    "wrong_tool",
    "wrong_arguments",
    "misleading",
    "fallback",
    "early_stop_avoided",
)
DEFAULT_CASE_WEIGHTS: Mapping[str, float] = {
    "wrong_tool": 0.25,
    "wrong_arguments": 0.25,
    "misleading": 0.2,
    "fallback": 0.15,
    "early_stop_avoided": 0.15,
}


@dataclass(frozen=True, slots=True)
class Case:
    """A case script applied to one hop (`hop` indexes `ParadigmChoice.hops`; -1 for clean runs)."""

    kind: CaseKind
    hop: int = -1

    @property
    def name(self) -> str:
        """`clean`, `early_stop_avoided`, or `<kind>@hop<k>`."""
        return self.kind if self.hop < 0 else f"{self.kind}@hop{self.hop}"


def applicable_kinds(choice: ParadigmChoice, *, gold_families: Sequence[str]) -> tuple[CaseKind, ...]:
    """Case kinds that fit a paradigm choice (fallback needs a specialist; early stop needs two rounds)."""
    kinds: list[CaseKind] = ["clean", "wrong_tool", "wrong_arguments", "misleading"]
    if any(family != "general_information" for family in gold_families):
        kinds.append("fallback")
    if max(h.round for h in choice.hops) >= 1:
        kinds.append("early_stop_avoided")
    return tuple(kinds)


def pick_cases(
    choice: ParadigmChoice,
    *,
    gold_families: Sequence[str],
    count: int,
    weights: dict[str, float],
    rng: np.random.Generator,
) -> tuple[Case, ...]:
    """`count` distinct cases for one seed: `clean` first, then error cases drawn by `weights` without replacement."""
    kinds = applicable_kinds(choice, gold_families=gold_families)
    cases: list[Case] = [Case("clean")]
    others = [k for k in kinds if k != "clean" and weights.get(k, 0) > 0]
    while len(cases) < count and others:
        p = np.array([weights[k] for k in others], dtype=float)
        kind = others.pop(int(rng.choice(len(others), p=p / p.sum())))
        if kind == "early_stop_avoided":
            cases.append(Case(kind))
            continue
        eligible = [
            i for i, family in enumerate(gold_families) if kind != "fallback" or family != "general_information"
        ]
        cases.append(Case(kind, int(rng.choice(eligible))))
    return tuple(cases[:count])
