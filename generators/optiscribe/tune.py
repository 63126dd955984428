"""Solver tuning on a generated family: pick SCIP settings on training instances, validate on held-out ones.

Instances are drawn from one instruction's default parameterisation with two disjoint seed streams (train,
held-out). The search is small and documented: SCIP's emphasis presets (`easycip`, `hardlp`, `optimality`)
against the default, then, on top of the best, one pass of coordinate search over the meta settings of
separating (off / fast / aggressive), presolving (fast / aggressive) and heuristics (off / fast), and the
branching score function (`branching/scorefunc` sum `s` or quotient `q` instead of product `p`). A candidate's
score is the geometric mean over the training instances of its deterministic time relative to the default's
(SCIP's machine-independent work measure, so the choice does not depend on the machine's load), with an
instance the candidate does not solve to optimality counted at twice its time (PAR-2). The held-out report gives
the median ratio tuned / default of deterministic time, wall time and nodes.
"""

from __future__ import annotations

import math
import statistics
import time
from collections.abc import Mapping, Sequence
from dataclasses import replace
from typing import Any

import numpy as np

from synth.generators.optiscribe.build import build_model_text
from synth.generators.optiscribe.parallel import solve_many
from synth.validators.optiscribe.grammar import parse_instruction
from synth.validators.optiscribe.scip import ScipSettings, ScipStats

TUNE_INSTRUCTIONS: dict[str, str] = {
    "max_cut": "a max-cut problem with 30 nodes, density 0.3, 20% negative weights",
    "facility_location": "a capacitated facility location problem with 20 customers and 20 facilities, single-sourcing",
    "independent_set": "an independent set problem with 250 nodes, barabasi-albert, affinity 4",
    "combinatorial_auction": "a combinatorial auction problem with 60 items and 300 bids",
    "set_cover": "a set cover problem with 250 rows and 500 columns, density 0.05",
    "knapsack": "a multiple knapsack problem with 60 items and 5 knapsacks, strongly correlated",
}
EMPHASIS_CANDIDATES = ("easycip", "hardlp", "optimality")
META_CANDIDATES: dict[str, tuple[str, ...]] = {
    "separating": ("off", "fast", "aggressive"),
    "presolving": ("fast", "aggressive"),
    "heuristics": ("off", "fast"),
}
SCOREFUNC_CANDIDATES = ("s", "q")


def _describe(settings: ScipSettings) -> dict[str, Any]:
    data = settings.to_dict()
    return {key: data[key] for key in ("emphasis", "meta", "overrides") if key in data} or {"emphasis": "default"}


def _effort(stats: ScipStats) -> float:
    """Deterministic time, doubled when the solve stopped before optimality (PAR-2)."""
    return stats.deterministic_time * (1.0 if stats.status == "optimal" else 2.0)


def _score(candidate: Sequence[ScipStats], default: Sequence[ScipStats]) -> float:
    ratios = [_effort(c) / max(_effort(d), 1e-9) for c, d in zip(candidate, default, strict=True)]
    return math.exp(statistics.fmean(math.log(max(r, 1e-9)) for r in ratios))


def _instances(instruction: str, *, seed: int, split: int, count: int) -> list[str]:
    spec = parse_instruction(instruction).make_spec()
    seeds = np.random.Generator(np.random.PCG64([seed, split])).integers(2**62, size=count)
    return [build_model_text(spec, seed=int(s)) for s in seeds]


def _run(texts: Sequence[str], settings: ScipSettings, workers: int) -> list[ScipStats]:
    return solve_many([(text, settings) for text in texts], workers=workers)


def _median_ratio(tuned: Sequence[float], default: Sequence[float]) -> float:
    return statistics.median(t / max(d, 1e-9) for t, d in zip(tuned, default, strict=True))


def _group(stats: Sequence[ScipStats]) -> dict[str, Any]:
    return {
        "median_deterministic_time": statistics.median(s.deterministic_time for s in stats),
        "median_wall_seconds": round(statistics.median(s.wall_seconds for s in stats), 3),
        "median_nodes": statistics.median(s.nodes for s in stats),
        "optimal": sum(s.status == "optimal" for s in stats),
    }


def tune_family(
    family: str,
    *,
    instruction: str | None = None,
    train: int = 4,
    heldout: int = 6,
    seed: int = 0,
    total_nodes: int = 20_000,
    time_limit: float = 120.0,
    workers: int = 1,
) -> dict[str, Any]:
    """Tune SCIP on generated instances of `family` and validate on held-out ones; a JSON-able report."""
    instruction = instruction or TUNE_INSTRUCTIONS[family]
    request = parse_instruction(instruction)
    if request.family != family:
        msg = f"tune: the instruction asks {request.family}, not {family}"
        raise ValueError(msg)
    start = time.perf_counter()
    base = ScipSettings(seed=0, total_nodes=total_nodes, time_limit=time_limit)
    train_texts = _instances(instruction, seed=seed, split=1, count=train)
    default_stats = _run(train_texts, base, workers)
    trials: list[dict[str, Any]] = [{"settings": _describe(base), "score": 1.0}]

    def trial(settings: ScipSettings) -> float:
        score = _score(_run(train_texts, settings, workers), default_stats)
        trials.append({"settings": _describe(settings), "score": round(score, 6)})
        return score

    best, best_score = base, 1.0
    for emphasis in EMPHASIS_CANDIDATES:
        candidate = replace(base, emphasis=emphasis)
        score = trial(candidate)
        if score < best_score:
            best, best_score = candidate, score
    for group, values in META_CANDIDATES.items():
        current = best
        for value in values:
            candidate = replace(current, meta={**current.meta, group: value})
            score = trial(candidate)
            if score < best_score:
                best, best_score = candidate, score
    for scorefunc in SCOREFUNC_CANDIDATES:
        candidate = replace(best, overrides={**best.overrides, "branching/scorefunc": scorefunc})
        score = trial(candidate)
        if score < best_score:
            best, best_score = candidate, score
    heldout_texts = _instances(instruction, seed=seed, split=2, count=heldout)
    held_default = _run(heldout_texts, base, workers)
    held_tuned = _run(heldout_texts, best, workers) if best != base else held_default
    return {
        "family": family,
        "instruction": instruction,
        "train_instances": train,
        "heldout_instances": heldout,
        "caps": {"total_nodes": total_nodes, "time_limit": time_limit},
        "chosen": _describe(best),
        "train_score": round(best_score, 6),
        "trials": trials,
        "heldout": {
            "default": _group(held_default),
            "tuned": _group(held_tuned),
            "median_deterministic_time_ratio": _median_ratio(
                [s.deterministic_time for s in held_tuned], [s.deterministic_time for s in held_default]
            ),
            "median_wall_time_ratio": _median_ratio(
                [s.wall_seconds for s in held_tuned], [s.wall_seconds for s in held_default]
            ),
            "median_nodes_ratio": _median_ratio([s.nodes for s in held_tuned], [max(s.nodes, 1) for s in held_default]),
            "same_objective": all(
                _same(t.primal_bound, d.primal_bound)
                for t, d in zip(held_tuned, held_default, strict=True)
                if t.status == d.status == "optimal"
            ),
        },
        "seconds": round(time.perf_counter() - start, 2),
    }


def _same(a: float | None, b: float | None) -> bool:
    return a is not None and b is not None and abs(a - b) <= 1e-6 * max(1.0, abs(a))


def tune_report(families: Sequence[str], *, options: Mapping[str, Any]) -> dict[str, Any]:
    """Tune several families; the machine's load is recorded since wall times depend on it."""
    import os

    load_before = os.getloadavg()
    results = {family: tune_family(family, **options) for family in families}
    return {
        "bench": "optiscribe-tune",
        "families": results,
        "load_average": {"before": [round(x, 2) for x in load_before], "after": [round(x, 2) for x in os.getloadavg()]},
    }
