"""Solve a model text with SCIP under fixed settings and measure hardness (the robust post-cut root-gap recipe).

Nodes are `getNTotalNodes()` (restarts included). The pre-cut root value is `root.first_lp_value` from SCIP's
JSON statistics; the post-cut root bound is the dual bound when the root node is first solved (a NODESOLVED
event at depth 0), falling back to the statistics' final root dual bound, and to the primal bound only for an
instance solved at the root. Wall-clock time is measured but never stored in data files; the deterministic
time and node count are reproducible for fixed settings on one SCIP build.

SCIP's node count moves with its random seeds alone (performance variability), so settings with `effort_seeds`
k > 1 solve under seeds seed … seed+k-1 and report the median solve: its node count is the instance's effort, a
property of the instance rather than of one seed's luck, and the per-seed counts are kept in `nodes_by_seed`.
"""

from __future__ import annotations

import json
import math
import os
import tempfile
import time
from collections.abc import Mapping
from dataclasses import asdict, dataclass, field, replace
from typing import Any

from synth.validators.optiscribe.reading import ModelFormat, read_model_text

FEASIBLE_STATUSES = ("optimal", "nodelimit", "timelimit", "gaplimit", "sollimit", "stallnodelimit", "totalnodelimit")


EMPHASES = ("default", "easycip", "hardlp", "optimality", "feasibility", "counter", "cpsolver", "numerics")
META_SETTINGS = ("default", "off", "fast", "aggressive")
META_GROUPS = ("presolving", "separating", "heuristics")


@dataclass(frozen=True, kw_only=True)
class ScipSettings:
    """Fixed SCIP settings: seeds, one LP thread, a total node cap and a wall-clock safety limit, and optionally a
    tuned configuration: an emphasis preset, meta settings of presolving / separating / heuristics (SCIP's
    `SCIP_PARAMSETTING`) and explicit parameter overrides, applied in that order and before the seeds and caps.
    `effort_seeds` (odd) is how many seeds, from `seed` on, one measurement solves under (the median counts)."""

    seed: int = 0
    total_nodes: int = 5000
    time_limit: float = 60.0
    emphasis: str = "default"
    meta: Mapping[str, str] = field(default_factory=dict)
    overrides: Mapping[str, Any] = field(default_factory=dict)
    effort_seeds: int = 1

    def __post_init__(self) -> None:
        if self.effort_seeds < 1 or self.effort_seeds % 2 == 0:
            msg = f"scip: effort_seeds {self.effort_seeds} must be odd and at least 1 (the median of the solves counts)"
            raise ValueError(msg)
        if self.emphasis not in EMPHASES:
            msg = f"scip: unknown emphasis {self.emphasis!r}; choose from {list(EMPHASES)}"
            raise ValueError(msg)
        for group, value in self.meta.items():
            if group not in META_GROUPS or value not in META_SETTINGS:
                msg = f"scip: meta setting {group}={value!r}; groups {list(META_GROUPS)}, values {list(META_SETTINGS)}"
                raise ValueError(msg)

    def apply(self, model: Any) -> None:
        """Set these settings on a pyscipopt model (emphasis, meta settings, overrides, then seeds and caps)."""
        from pyscipopt import SCIP_PARAMEMPHASIS, SCIP_PARAMSETTING

        if self.emphasis != "default":
            model.setEmphasis(getattr(SCIP_PARAMEMPHASIS, self.emphasis.upper()))
        setters = {
            "presolving": model.setPresolve,
            "separating": model.setSeparating,
            "heuristics": model.setHeuristics,
        }
        for group, value in sorted(self.meta.items()):
            setters[group](getattr(SCIP_PARAMSETTING, value.upper()))
        if self.overrides:
            model.setParams(dict(self.overrides))
        model.setParams(self.params())

    def params(self) -> dict[str, Any]:
        """The SCIP parameters these settings set."""
        return {
            "randomization/randomseedshift": self.seed,
            "randomization/permutationseed": self.seed,
            "randomization/lpseed": self.seed,
            "lp/threads": 1,
            "parallel/maxnthreads": 1,
            "limits/totalnodes": self.total_nodes,
            "limits/time": self.time_limit,
        }

    def single_seeds(self) -> list[ScipSettings]:
        """One single-seed settings per solve of a measurement: seeds `seed` … `seed + effort_seeds - 1`."""
        return [replace(self, seed=self.seed + k, effort_seeds=1) for k in range(self.effort_seeds)]

    def to_dict(self) -> dict[str, Any]:
        """Plain values, recorded beside every solve (the tuning fields and `effort_seeds` only when set, so
        untuned single-seed rows keep the three fields they always had)."""
        data = asdict(self)
        data["meta"], data["overrides"] = dict(self.meta), dict(self.overrides)
        for name, empty in (("emphasis", "default"), ("meta", {}), ("overrides", {}), ("effort_seeds", 1)):
            if data[name] == empty:
                del data[name]
        return data


@dataclass(frozen=True, kw_only=True)
class ScipStats:
    """What one SCIP solve reports (gaps are None without a primal solution or a finite bound). `treesize_estimate`
    is SCIP's estimate of the final search-tree size when it stopped (`getTreesizeEstimation`; None when SCIP has
    none): for a solve stopped by the node cap, how large the full search would have been. A measurement over
    several seeds reports its median solve, every seed's node count in `nodes_by_seed` (empty for one seed) and the
    wall time of all its solves."""

    status: str
    feasible: bool
    nodes: int
    runs: int
    primal_bound: float | None
    dual_bound: float | None
    gap: float | None
    precut_gap: float | None
    postcut_gap: float | None
    treesize_estimate: float | None
    deterministic_time: float
    lp_iterations: int
    variables: int
    binary_variables: int
    integer_variables: int
    continuous_variables: int
    constraints: int
    scip_version: str
    wall_seconds: float
    nodes_by_seed: tuple[int, ...] = ()

    def to_dict(self, *, include_wall_time: bool = False) -> dict[str, Any]:
        """Plain values; wall time only when asked (it must stay out of data files), `nodes_by_seed` only when
        several seeds were solved (single-seed records keep the fields they always had)."""
        data = asdict(self)
        if not include_wall_time:
            del data["wall_seconds"]
        if self.nodes_by_seed:
            data["nodes_by_seed"] = list(self.nodes_by_seed)
        else:
            del data["nodes_by_seed"]
        return data


def _relative_gap(primal: float | None, bound: float | None) -> float | None:
    if primal is None or bound is None:
        return None
    return abs(primal - bound) / max(abs(primal), 1e-9)


def _statistics_json(model: Any) -> dict[str, Any]:
    fd, path = tempfile.mkstemp(suffix=".json")
    os.close(fd)
    try:
        model.writeStatisticsJson(path)
        with open(path, encoding="utf-8") as handle:
            return json.load(handle)
    finally:
        os.remove(path)


def _root_event_handler() -> Any:
    from pyscipopt import SCIP_EVENTTYPE, Eventhdlr

    class RootBoundHandler(Eventhdlr):
        """Records the dual bound (original space, after cuts) when the root of the first run is solved."""

        root_dual: float | None = None

        def eventinit(self) -> None:
            self.model.catchEvent(SCIP_EVENTTYPE.NODESOLVED, self)

        def eventexit(self) -> None:
            self.model.dropEvent(SCIP_EVENTTYPE.NODESOLVED, self)

        def eventexec(self, event: Any) -> None:
            if self.root_dual is None and event.getNode().getDepth() == 0:
                self.root_dual = self.model.getDualbound()

    return RootBoundHandler()


def _treesize_estimate(model: Any) -> float | None:
    """SCIP's estimate of the final tree size, rounded to whole nodes; None when it reports none (negative)."""
    estimate = float(model.getTreesizeEstimation())
    return float(round(estimate)) if math.isfinite(estimate) and estimate >= 0 else None


def _finite(value: Any, infinity: float) -> float | None:
    return None if value is None or abs(value) >= infinity else float(value)


def median_solve(solves: list[ScipStats]) -> ScipStats:
    """The solve a several-seed measurement reports: the median by node count (ties in seed order), or the first
    solve the wall-clock cap stopped, since then the counts do not reproduce; with every seed's count and the
    wall time of them all."""
    stopped = [s for s in solves if s.status == "timelimit"]
    chosen = stopped[0] if stopped else sorted(solves, key=lambda s: s.nodes)[len(solves) // 2]
    return replace(
        chosen,
        nodes_by_seed=tuple(s.nodes for s in solves),
        wall_seconds=sum(s.wall_seconds for s in solves),
    )


def solve_model_text(text: str, *, fmt: ModelFormat = "lp", settings: ScipSettings | None = None) -> ScipStats:
    """Read `text`, solve it under `settings` and measure it (the median solve over `effort_seeds` seeds);
    malformed text raises `ModelTextError`."""
    settings = settings or ScipSettings()
    if settings.effort_seeds > 1:
        return median_solve([solve_model_text(text, fmt=fmt, settings=one) for one in settings.single_seeds()])
    model = read_model_text(text, fmt=fmt)
    settings.apply(model)
    handler = _root_event_handler()
    model.includeEventhdlr(handler, "rootbound", "root dual bound after cuts")
    start = time.perf_counter()
    model.optimize()
    wall = time.perf_counter() - start
    stats = _statistics_json(model)
    infinity = model.infinity()
    status = model.getStatus()
    primal = float(model.getPrimalbound()) if model.getNSols() else None
    root = _finite(handler.root_dual, infinity)
    root_stats = stats.get("root") or {}  # absent when a cap stops SCIP before the root LP
    if root is None:
        root = _finite(root_stats.get("final_dual_bound"), infinity)
    if root is None and status == "optimal" and model.getNTotalNodes() <= 1:
        root = primal
    first_lp = _finite(root_stats.get("first_lp_value"), infinity)
    origprob = stats["origprob"]
    return ScipStats(
        status=status,
        feasible=primal is not None and status in FEASIBLE_STATUSES,
        nodes=int(model.getNTotalNodes()),
        runs=int(model.getNRuns()),
        primal_bound=primal,
        dual_bound=_finite(model.getDualbound(), infinity),
        gap=_relative_gap(primal, _finite(model.getDualbound(), infinity)),
        precut_gap=_relative_gap(primal, first_lp),
        postcut_gap=_relative_gap(primal, root),
        treesize_estimate=_treesize_estimate(model),
        deterministic_time=float(model.getDeterministicTime()),
        lp_iterations=int(model.getNLPIterations()),
        variables=int(origprob["num_variables"]),
        binary_variables=int(origprob["num_binary_variables"]),
        integer_variables=int(origprob.get("num_integer_variables", 0)),
        continuous_variables=int(origprob["num_continuous_variables"]),
        constraints=int(origprob["num_initial_constraints"]),
        scip_version=str(model.version()),
        wall_seconds=wall,
    )
