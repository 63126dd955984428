"""Measure a model's sizes and density from its variables and rows, to check them against an instruction.

Models follow each family's naming convention (the scripted families write it; an LLM challenger is asked for
it): facility location `open_j`, `serve_i_j`; max-cut `x_i`, `cut_i_j`; set cover `x_j` and rows `cover_i`;
combinatorial auction `bid_b` and rows `item_k`; independent set `x_v` (edges are the vertex pairs sharing a
row); knapsack `x_i_k`. A size that cannot be identified is missing, which fails the check.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from itertools import combinations
from typing import Any

INDEXED = re.compile(r"^([a-z]+)_(\d+)(?:_(\d+))?$")


def _indices(names: list[str], prefix: str, *, pairs: bool) -> list[tuple[int, ...]]:
    found = []
    for name in names:
        match = INDEXED.match(name)
        if match and match.group(1) == prefix and (match.group(3) is not None) == pairs:
            found.append(tuple(int(g) for g in match.groups()[1:] if g is not None))
    return found


def _row_supports(model: Any, prefix: str) -> list[list[str]]:
    rows = []
    for cons in model.getConss():
        if cons.name.startswith(prefix) and cons.isLinear():
            rows.append(sorted(model.getValsLinear(cons)))
    return rows


def _graph_density(measured: dict[str, float], nodes: int, edges: int) -> None:
    if nodes > 1:
        pairs = nodes * (nodes - 1) / 2
        measured["density"] = edges / pairs
        measured["density_step"] = 1 / pairs


def measure_structure(model: Any, family: str) -> dict[str, float]:
    """The family's sizes (and density where it has one) that can be identified in `model`."""
    names = [var.name for var in model.getVars()]
    measured: dict[str, float] = {}
    if family == "facility_location":
        measured["facilities"] = len(_indices(names, "open", pairs=False))
        measured["customers"] = len({i for i, _ in _indices(names, "serve", pairs=True)})
    elif family == "max_cut":
        nodes = len(_indices(names, "x", pairs=False))
        measured["nodes"] = nodes
        _graph_density(measured, nodes, len(_indices(names, "cut", pairs=True)))
    elif family == "set_cover":
        rows = _row_supports(model, "cover_")
        measured["cols"] = len(_indices(names, "x", pairs=False))
        measured["rows"] = len(rows)
        if rows and measured["cols"]:
            measured["density"] = sum(len(r) for r in rows) / (len(rows) * measured["cols"])
            measured["density_step"] = 1 / (len(rows) * measured["cols"])
    elif family == "combinatorial_auction":
        measured["bids"] = len(_indices(names, "bid", pairs=False))
        items = [
            int(c.name.split("_")[1]) for c in model.getConss() if INDEXED.match(c.name) and c.name.startswith("item_")
        ]
        measured["items"] = max(items) + 1 if items else 0
    elif family == "independent_set":
        nodes = len(_indices(names, "x", pairs=False))
        edges = {pair for row in _row_supports(model, "") for pair in combinations(row, 2)}
        measured["nodes"] = nodes
        _graph_density(measured, nodes, len(edges))
    elif family == "knapsack":
        pairs = _indices(names, "x", pairs=True)
        measured["items"] = len({i for i, _ in pairs})
        measured["knapsacks"] = len({k for _, k in pairs})
    return {name: float(value) for name, value in measured.items() if value}


def instruction_violations(measured: Mapping[str, float], asked: Mapping[str, Any], *, slack: float = 0.0) -> list[str]:
    """One reason (`size_missing`, `size_outside`, `density_missing`, `density_outside`) per asked size or density the
    model misses.

    The density range is widened by `slack` and by half of `density_step` (one edge or nonzero), since an integer
    count can only come within half a step of an asked bound.
    """
    reasons = []
    for name, (low, high) in (asked.get("sizes") or {}).items():
        value = measured.get(name)
        if value is None:
            reasons.append(f"size_missing: size `{name}` not found in the model")
        elif not low <= value <= high:
            reasons.append(f"size_outside: size `{name}` is {value:g}, asked [{low}, {high}]")
    density = asked.get("density")
    tolerance = slack + measured.get("density_step", 0.0) / 2
    if density is not None:
        value = measured.get("density")
        if value is None:
            reasons.append("density_missing: density not measurable in the model")
        elif not density[0] - tolerance <= value <= density[1] + tolerance:
            reasons.append(f"density_outside: density is {value:.4g}, asked [{density[0]:g}, {density[1]:g}]")
    return reasons
