"""Multiple knapsack (rl2branch / MILP-Evolve seed class) with Pisinger's profit correlations.

Weights U{10..30}; profits uncorrelated U{10..30}, weakly correlated w + U{−3..3} (at least 1), strongly
correlated w + 3, or subset-sum p = w; total capacity `capacity_fraction`·Σw, split at random between the
knapsacks. Variables `x_i_k`, rows `assign_i` and `capacity_k`.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

import numpy as np

from synth.validators.optiscribe.spec import InstanceSpec

if TYPE_CHECKING:
    from pyscipopt import Model


def knapsack_data(spec: InstanceSpec, rng: np.random.Generator) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Weights, profits and capacities of one instance."""
    items, knapsacks = spec.sizes["items"], spec.sizes["knapsacks"]
    weights = rng.integers(10, 31, size=items)
    correlation = spec.knobs["correlation"]
    if correlation == "uncorrelated":
        profits = rng.integers(10, 31, size=items)
    elif correlation == "weakly_correlated":
        profits = np.maximum(weights + rng.integers(-3, 4, size=items), 1)
    elif correlation == "strongly_correlated":
        profits = weights + 3
    else:
        profits = weights.copy()
    shares = rng.dirichlet(np.full(knapsacks, 5.0))
    capacities = np.floor(shares * float(spec.knobs["capacity_fraction"]) * weights.sum())
    return weights, profits, capacities


def build_knapsack(spec: InstanceSpec, rng: np.random.Generator) -> Model:
    """Multiple knapsack: max Σ p_i x_ik, each item in at most one knapsack, capacities respected."""
    from pyscipopt import Model, quicksum

    weights, profits, capacities = knapsack_data(spec, rng)
    items, knapsacks = len(weights), len(capacities)
    model = Model("knapsack")
    x = [[model.addVar(f"x_{i}_{k}", vtype="B", obj=float(profits[i])) for k in range(knapsacks)] for i in range(items)]
    for i in range(items):
        model.addCons(quicksum(x[i]) <= 1, name=f"assign_{i}")
    for k in range(knapsacks):
        model.addCons(
            quicksum(float(weights[i]) * x[i][k] for i in range(items)) <= float(capacities[k]), name=f"capacity_{k}"
        )
    model.setMaximize()
    return model
