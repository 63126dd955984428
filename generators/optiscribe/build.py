"""Build a family's model from (spec, seed), optionally mutated, and write it as LP or MPS text, deterministically.

A `Mutation` (seed, sigma) multiplies every nonzero objective coefficient by exp(N(0, sigma)) (rounded to 4
decimals), drawn from its own PCG64 stream in the model's variable order. It leaves the constraints, so a mutated
instance keeps its parent's feasible region, sizes and density; several mutations apply in order (a lineage), so
(spec, seed, mutations) rebuilds any descendant exactly.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

import numpy as np

from synth.generators.optiscribe.covering import build_combinatorial_auction, build_set_cover
from synth.generators.optiscribe.facility import build_facility_location
from synth.generators.optiscribe.graphs import build_independent_set, build_max_cut
from synth.generators.optiscribe.knapsack import build_knapsack
from synth.validators.optiscribe.reading import ModelFormat, write_model_text
from synth.validators.optiscribe.spec import Family, InstanceSpec

if TYPE_CHECKING:
    from pyscipopt import Model

BUILDERS: dict[Family, Callable[[InstanceSpec, np.random.Generator], Model]] = {
    "facility_location": build_facility_location,
    "max_cut": build_max_cut,
    "set_cover": build_set_cover,
    "combinatorial_auction": build_combinatorial_auction,
    "independent_set": build_independent_set,
    "knapsack": build_knapsack,
}


def instance_rng(seed: int) -> np.random.Generator:
    """The PCG64 generator of one instance (never the global RNG)."""
    return np.random.Generator(np.random.PCG64(seed))


@dataclass(frozen=True)
class Mutation:
    """One objective jitter: coefficients times exp(N(0, `sigma`)), drawn from the PCG64 stream of `seed`."""

    seed: int
    sigma: float

    def __post_init__(self) -> None:
        if not 0.0 < self.sigma <= 1.0:
            msg = f"mutation: `sigma` must lie in (0, 1], got {self.sigma!r}"
            raise ValueError(msg)

    def to_list(self) -> list[Any]:
        """[seed, sigma], as rows and reports record a lineage."""
        return [self.seed, self.sigma]

    @classmethod
    def from_list(cls, value: Sequence[Any]) -> Mutation:
        """The mutation recorded by `to_list`."""
        seed, sigma = value
        return cls(int(seed), float(sigma))


def jitter_objective(model: Model, mutation: Mutation) -> None:
    """Apply `mutation` to `model`'s objective in place (zero coefficients stay zero, signs never flip)."""
    from pyscipopt import quicksum

    variables = model.getVars()
    factors = np.exp(instance_rng(mutation.seed).normal(0.0, mutation.sigma, size=len(variables)))
    terms = [
        (float(np.round(coefficient * factor, 4)), variable)
        for variable, factor in zip(variables, factors, strict=True)
        if (coefficient := variable.getObj())
    ]
    model.setObjective(quicksum(c * v for c, v in terms), sense=model.getObjectiveSense(), clear=True)


def build_model(spec: InstanceSpec, *, seed: int, mutations: Sequence[Mutation] = ()) -> Model:
    """The pyscipopt model of `spec`, then each mutation in order; the same (spec, seed, mutations) always gives the
    same model."""
    model = BUILDERS[spec.family](spec, instance_rng(seed))
    for mutation in mutations:
        jitter_objective(model, mutation)
    return model


def build_model_text(
    spec: InstanceSpec, *, seed: int, mutations: Sequence[Mutation] = (), fmt: ModelFormat = "lp"
) -> str:
    """`build_model` then `write_model_text`."""
    return write_model_text(build_model(spec, seed=seed, mutations=mutations), fmt=fmt)
