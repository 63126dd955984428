"""A random-search baseline for difficulty following: the best uniformly drawn spec per band, re-measured.

A challenger that only chooses a spec's knobs cannot choose its instance seed, and one spec's node counts spread
over about a decade between seeds (`seed_spread`), so even the right knobs put only a share of their instances in a
band. `best_uniform_specs` measures how far plain search gets: it solves `specs` specs drawn uniformly over the free
knobs, each under `seeds` instance seeds, and picks each band's best spec by its in-band rate over those seeds. That
in-sample rate is biased upwards (the maximum of many noisy rates), so the chosen spec is solved again under
`holdout` fresh seeds; the held-out rate is the honest figure. It is a baseline, not a bound: a learner that spends
its solves where the reward is (`gp`) can find better regions than any of the sampled specs.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

import numpy as np

from synth.generators.optiscribe.archive import in_band
from synth.generators.optiscribe.build import build_model_text
from synth.generators.optiscribe.parallel import solve_many
from synth.generators.optiscribe.policy import sample_uniform_specs
from synth.validators.optiscribe.difficulty import EffortBand
from synth.validators.optiscribe.grammar import parse_instruction
from synth.validators.optiscribe.scip import ScipSettings, ScipStats


def in_band_rate(band: EffortBand, solved: Sequence[ScipStats]) -> float:
    """Share of `solved` that lie inside `band` (an infeasible or unsolved instance counts as outside)."""
    inside = [in_band(band, s) for s in solved]
    return sum(inside) / len(inside) if inside else 0.0


def _seeds(rng: np.random.Generator, count: int) -> list[int]:
    return [int(s) for s in rng.integers(2**62, size=count)]


def best_uniform_specs(
    base: str,
    bands: Mapping[str, EffortBand],
    *,
    specs: int,
    seeds: int,
    holdout: int,
    seed: int,
    scip: ScipSettings,
    workers: int = 1,
) -> dict[str, Any]:
    """Per named band (`{"medium": EffortBand(5, 14, "medium"), …}`) at the size of `base`: the best of `specs`
    uniform specs by its in-band rate over `seeds` instance seeds (ties go to the earlier spec), and that spec's rate
    over `holdout` fresh seeds. The specs and their seeds come from (seed, 40_000); the held-out seeds of the k-th
    band from (seed, 40_001, k)."""
    request = parse_instruction(base)
    rng = np.random.Generator(np.random.PCG64([seed, 40_000]))
    drawn = sample_uniform_specs(request, specs, rng)
    grid = [_seeds(rng, seeds) for _ in drawn]
    jobs = [(build_model_text(spec, seed=s), scip) for spec, group in zip(drawn, grid, strict=True) for s in group]
    solved = solve_many(jobs, workers=workers)
    groups = [solved[k * seeds : (k + 1) * seeds] for k in range(specs)]
    report: dict[str, Any] = {}
    for index, (name, band) in enumerate(bands.items()):
        rates = [in_band_rate(band, group) for group in groups]
        best = int(np.argmax(rates))
        fresh = _seeds(np.random.Generator(np.random.PCG64([seed, 40_001, index])), holdout)
        held = solve_many([(build_model_text(drawn[best], seed=s), scip) for s in fresh], workers=workers)
        report[name] = {
            "effort_band": band.to_list(),
            "best_in_sample": rates[best],
            "held_out": in_band_rate(band, held),
            "held_out_nodes": [s.nodes if s.feasible else None for s in held],
            "best_knobs": dict(drawn[best].knobs),
            "best_nodes": [s.nodes if s.feasible else None for s in groups[best]],
            "in_sample_rates": rates,
        }
    return {"base": base, "specs": specs, "seeds": seeds, "holdout": holdout, "bands": report}
