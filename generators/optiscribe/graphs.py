"""Graph families: max-cut (the OptiScribe paper's) and independent set (Ecole's clique formulation).

Graphs are G(n, m) Erdős–Rényi graphs with m = round(density · n(n−1)/2) edges, so the density asked is the
density built, or Barabási–Albert graphs (Ecole: a clique on `affinity`+1 nodes, then each node attaches to
`affinity` nodes chosen in proportion to degree).
"""

from __future__ import annotations

from typing import TYPE_CHECKING

import numpy as np

from synth.validators.optiscribe.spec import InstanceSpec

if TYPE_CHECKING:
    from pyscipopt import Model

Edges = list[tuple[int, int]]


def erdos_renyi_edges(nodes: int, density: float, rng: np.random.Generator) -> Edges:
    """G(n, m) edges (i < j, sorted) with m = round(density · n(n−1)/2), at least one."""
    rows, cols = np.triu_indices(nodes, k=1)
    count = min(max(round(density * len(rows)), 1), len(rows))
    chosen = np.sort(rng.choice(len(rows), size=count, replace=False))
    return [(int(rows[k]), int(cols[k])) for k in chosen]


def barabasi_albert_edges(nodes: int, affinity: int, rng: np.random.Generator) -> Edges:
    """Barabási–Albert edges (i < j, sorted) as Ecole builds them."""
    edges = {(i, j) for i in range(affinity + 1) for j in range(i + 1, affinity + 1)}
    degrees = np.zeros(nodes)
    degrees[: affinity + 1] = affinity
    for new in range(affinity + 1, nodes):
        weights = degrees[:new] / degrees[:new].sum()
        targets = rng.choice(new, size=affinity, replace=False, p=weights)
        for target in targets:
            edges.add((int(target), new))
        degrees[targets] += 1
        degrees[new] = affinity
    return sorted(edges)


def graph_edges(spec: InstanceSpec, rng: np.random.Generator) -> Edges:
    """The edges of the graph `spec` describes."""
    nodes = spec.sizes["nodes"]
    if spec.knobs.get("graph") == "barabasi_albert":
        return barabasi_albert_edges(nodes, int(spec.knobs["affinity"]), rng)
    return erdos_renyi_edges(nodes, float(spec.density or 0.0), rng)


def build_max_cut(spec: InstanceSpec, rng: np.random.Generator) -> Model:
    """Max-cut: max Σ w_ij cut_ij, all binary, with cut_ij = [x_i ≠ x_j] enforced from the side the sign needs.

    Weights are U{weight_low..weight_high}; a `negative_fraction` of the edges (0 in the standard family) gets
    negated weights (Ising spin-glass-like instances). Positive edges get cut_ij ≤ x_i + x_j and
    cut_ij ≤ 2 − x_i − x_j; negative edges get cut_ij ≥ x_i − x_j and cut_ij ≥ x_j − x_i.
    """
    from pyscipopt import Model

    edges = graph_edges(spec, rng)
    weights = rng.integers(int(spec.knobs["weight_low"]), int(spec.knobs["weight_high"]) + 1, size=len(edges))
    negative = rng.random(len(edges)) < float(spec.knobs["negative_fraction"])
    model = Model("max_cut")
    side = [model.addVar(f"x_{i}", vtype="B") for i in range(spec.sizes["nodes"])]
    for (i, j), weight, flip in zip(edges, weights, negative, strict=True):
        cut = model.addVar(f"cut_{i}_{j}", vtype="B", obj=float(-weight if flip else weight))
        if flip:
            model.addCons(cut >= side[i] - side[j], name=f"edge_c_{i}_{j}")
            model.addCons(cut >= side[j] - side[i], name=f"edge_d_{i}_{j}")
        else:
            model.addCons(cut <= side[i] + side[j], name=f"edge_a_{i}_{j}")
            model.addCons(cut <= 2 - side[i] - side[j], name=f"edge_b_{i}_{j}")
    model.setMaximize()
    return model


def greedy_clique_partition(nodes: int, edges: Edges) -> list[list[int]]:
    """Ecole's greedy clique partition: by decreasing degree, grow each clique from unassigned neighbours."""
    neighbours: list[set[int]] = [set() for _ in range(nodes)]
    for i, j in edges:
        neighbours[i].add(j)
        neighbours[j].add(i)
    order = sorted(range(nodes), key=lambda v: (-len(neighbours[v]), v))
    assigned: set[int] = set()
    cliques = []
    for leader in order:
        if leader in assigned:
            continue
        clique = [leader]
        for candidate in sorted(neighbours[leader] - assigned, key=lambda v: (-len(neighbours[v]), v)):
            if all(candidate in neighbours[member] for member in clique):
                clique.append(candidate)
        assigned.update(clique)
        cliques.append(sorted(clique))
    return cliques


def build_independent_set(spec: InstanceSpec, rng: np.random.Generator) -> Model:
    """Maximum independent set: clique-partition rows Σ_{v∈Q} x_v ≤ 1, then x_u + x_v ≤ 1 for edges left over."""
    from pyscipopt import Model, quicksum

    nodes = spec.sizes["nodes"]
    edges = graph_edges(spec, rng)
    model = Model("independent_set")
    chosen = [model.addVar(f"x_{v}", vtype="B", obj=1.0) for v in range(nodes)]
    cliques = greedy_clique_partition(nodes, edges)
    covered = set()
    for index, clique in enumerate(c for c in cliques if len(c) > 1):
        model.addCons(quicksum(chosen[v] for v in clique) <= 1, name=f"clique_{index}")
        covered.update((a, b) for a in clique for b in clique if a < b)
    for i, j in edges:
        if (i, j) not in covered:
            model.addCons(chosen[i] + chosen[j] <= 1, name=f"edge_{i}_{j}")
    model.setMaximize()
    return model
