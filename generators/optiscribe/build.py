"""Build a family's model from (spec, seed) and write it as LP or MPS text, deterministically."""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING

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


def build_model(spec: InstanceSpec, *, seed: int) -> Model:
    """The pyscipopt model of `spec`; the same (spec, seed) always gives the same model."""
    return BUILDERS[spec.family](spec, instance_rng(seed))


def build_model_text(spec: InstanceSpec, *, seed: int, fmt: ModelFormat = "lp") -> str:
    """`build_model` then `write_model_text`."""
    return write_model_text(build_model(spec, seed=seed), fmt=fmt)
