"""Capacitated facility location (Cornuéjols et al. 1991), with Ecole's parameterisation.

Customers and facilities lie on the unit square; demands U{5..35}, capacities U{10..160} rescaled so that total
capacity is `ratio` times total demand, fixed costs U{100..110}·√s + U{0..90} (times `fixed_cost_scale`),
transport costs 10·distance·demand. `fixed_cost_exponent` e replaces √s by s^e·85^(0.5−e) (85 is the mean of
U{10..160}, so an average facility costs the same): e = 1 makes fixed cost proportional to capacity, the
strongly correlated regime where every facility costs the same per unit and choosing which to open becomes a
subset-sum-like covering problem (as strongly correlated knapsacks are the hard ones). Variables `open_j`
(binary) and `serve_i_j` (continuous in [0, 1], or binary with `assignment: binary`, the single-sourcing variant).
"""

from __future__ import annotations

from typing import TYPE_CHECKING

import numpy as np

from synth.validators.optiscribe.spec import InstanceSpec

if TYPE_CHECKING:
    from pyscipopt import Model

MEAN_CAPACITY = 85.0


def facility_data(spec: InstanceSpec, rng: np.random.Generator) -> dict[str, np.ndarray]:
    """Demands, capacities, fixed and transport costs of one instance."""
    n, m = spec.sizes["customers"], spec.sizes["facilities"]
    customers = rng.random((n, 2))
    facilities = rng.random((m, 2))
    demands = rng.integers(5, 36, size=n)
    capacities = rng.integers(10, 161, size=m)
    exponent = float(spec.knobs["fixed_cost_exponent"])
    scaled = np.sqrt(capacities) if exponent == 0.5 else capacities**exponent * MEAN_CAPACITY ** (0.5 - exponent)
    fixed = rng.integers(100, 111, size=m) * scaled + rng.integers(0, 91, size=m)
    fixed = np.floor(fixed * float(spec.knobs["fixed_cost_scale"]))
    distances = np.sqrt(((customers[:, None, :] - facilities[None, :, :]) ** 2).sum(axis=2))
    transport = np.round(distances * 10 * demands[:, None], 4)
    capacities = np.floor(capacities * float(spec.knobs["ratio"]) * demands.sum() / capacities.sum())
    return {"demands": demands, "capacities": capacities, "fixed": fixed, "transport": transport}


def build_facility_location(spec: InstanceSpec, rng: np.random.Generator) -> Model:
    """The capacitated facility location model of `spec` (minimise fixed plus transport cost)."""
    from pyscipopt import Model, quicksum

    data = facility_data(spec, rng)
    n, m = data["transport"].shape
    vtype = "B" if spec.knobs["assignment"] == "binary" else "C"
    model = Model("facility_location")
    open_ = [model.addVar(f"open_{j}", vtype="B", obj=float(data["fixed"][j])) for j in range(m)]
    serve = [
        [
            model.addVar(f"serve_{i}_{j}", vtype=vtype, lb=0.0, ub=1.0, obj=float(data["transport"][i, j]))
            for j in range(m)
        ]
        for i in range(n)
    ]
    for i in range(n):
        model.addCons(quicksum(serve[i]) >= 1, name=f"demand_{i}")
    for j in range(m):
        column = quicksum(float(data["demands"][i]) * serve[i][j] for i in range(n))
        model.addCons(column <= float(data["capacities"][j]) * open_[j], name=f"capacity_{j}")
    total = quicksum(float(data["capacities"][j]) * open_[j] for j in range(m))
    model.addCons(total >= float(data["demands"].sum()), name="total_capacity")
    for i in range(n):
        for j in range(m):
            model.addCons(serve[i][j] <= open_[j], name=f"tighten_{i}_{j}")
    model.setMinimize()
    return model
