"""Instance-space mutation: an archive of instances that landed in the asked band, and their children.

A knob challenger picks a parameterisation; the instance seed then spreads SCIP's effort over a decade or more
(measured on CFL 20x20), wider than a calibrated medium band, so no parameterisation lands there reliably. A child
of an in-band instance keeps its constraints and jitters its objective (`Mutation`): at a small sigma its effort
stays near its parent's. The archive starts from the in-band instances a knob challenger's self-play solved (no
external seed instances) and counts, per instance, how many of its children landed in the band. Evolution rounds
pick parents by Thompson sampling on those counts, solve their children, and let in-band children join the archive
(lineage: the parent's mutations plus one). Generating after training picks, also by Thompson sampling, among
parents with at least `min_children` children tried. Every instance rebuilds from (spec, seed, mutations).

Two parent models (`ParentModel`). "beta" scores a parent by its children's in-band count alone, so an untried
parent at the band's edge looks as good as one at its centre. "lognormal" predicts a child's log-nodes: a parent's
children scatter as N(theta, tau^2) around a level theta of its own; tau is pooled over every lineage group
(a parent and its children) in the archive, and theta's posterior given the group's observations is
N(mean, tau^2 / n) (the parent's own solve counts as one observation). A Thompson draw of theta gives the
probability that a child lands in the band, and the parent with the highest wins: untried parents near the band's
log-centre are preferred from the start, and a parent whose children drift is dropped once they do.
"""

from __future__ import annotations

import math
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any, Literal, get_args

import numpy as np

from synth.generators.optiscribe.build import Mutation, build_model_text
from synth.generators.optiscribe.parallel import solve_many
from synth.validators.optiscribe.difficulty import EffortBand, effort_violations
from synth.validators.optiscribe.scip import ScipSettings, ScipStats
from synth.validators.optiscribe.spec import InstanceSpec


@dataclass(frozen=True)
class Instance:
    """One instance: a spec, its instance seed and the mutations applied after building it."""

    spec: InstanceSpec
    seed: int
    mutations: tuple[Mutation, ...] = ()

    def text(self) -> str:
        """Its LP text."""
        return build_model_text(self.spec, seed=self.seed, mutations=self.mutations)

    def child(self, mutation: Mutation) -> Instance:
        """This instance with one more mutation."""
        return Instance(self.spec, self.seed, (*self.mutations, mutation))

    def root(self) -> tuple[str, int]:
        """The (spec, seed) its lineage starts from."""
        return self.spec.to_json(), self.seed

    def to_dict(self) -> dict[str, Any]:
        """Plain JSON values."""
        return {"spec": self.spec.to_dict(), "seed": self.seed, "mutations": [m.to_list() for m in self.mutations]}

    @classmethod
    def from_dict(cls, data: Mapping[str, Any]) -> Instance:
        """The instance recorded by `to_dict`."""
        mutations = tuple(Mutation.from_list(m) for m in data.get("mutations", ()))
        return cls(InstanceSpec.from_dict(data["spec"]), int(data["seed"]), mutations)


@dataclass
class ArchiveEntry:
    """An in-band instance, its node count, and how many of its children were tried and landed in the band."""

    instance: Instance
    nodes: int
    children: int = 0
    in_band: int = 0
    child_nodes: list[int] = field(default_factory=list)

    def log_nodes(self) -> list[float]:
        """Its lineage group's observations: log nodes of itself and of each child tried."""
        return [log_nodes(self.nodes), *(log_nodes(n) for n in self.child_nodes)]

    def to_dict(self) -> dict[str, Any]:
        """Plain JSON values."""
        counts = {"nodes": self.nodes, "children": self.children, "in_band": self.in_band}
        return {"instance": self.instance.to_dict(), **counts, "child_nodes": list(self.child_nodes)}

    @classmethod
    def from_dict(cls, data: Mapping[str, Any]) -> ArchiveEntry:
        """The entry recorded by `to_dict` (`child_nodes` absent in states written before it existed)."""
        counts = (int(data["nodes"]), int(data["children"]), int(data["in_band"]))
        return cls(Instance.from_dict(data["instance"]), *counts, [int(n) for n in data.get("child_nodes", ())])


ParentModel = Literal["beta", "lognormal"]
PARENT_MODELS: tuple[str, ...] = get_args(ParentModel)
PRIOR_TAU = 0.5  # log-nodes scatter of a child around its parent's level before any sibling is seen (about 1.6x)
PRIOR_TAU_WEIGHT = 2.0  # ... worth this many degrees of freedom in the pooled estimate


def log_nodes(nodes: int) -> float:
    """The scale the lognormal model works on (0 nodes counts as the root, as `EffortBand` does)."""
    return math.log(max(nodes, 1))


def pooled_tau(groups: Iterable[Sequence[float]]) -> float:
    """The within-group standard deviation pooled over lineage groups, shrunk towards `PRIOR_TAU`."""
    squares, freedom = PRIOR_TAU_WEIGHT * PRIOR_TAU**2, PRIOR_TAU_WEIGHT
    for values in groups:
        if len(values) > 1:
            mean = math.fsum(values) / len(values)
            squares += math.fsum((v - mean) ** 2 for v in values)
            freedom += len(values) - 1
    return math.sqrt(squares / freedom)


def band_log_edges(band: EffortBand) -> tuple[float, float]:
    """The band's edges on the log-nodes scale, half a node outside each integer edge (open edges infinite)."""
    low = math.log(band.low - 0.5) if band.low > 1 else -math.inf
    high = math.log(band.high + 0.5) if band.high is not None else math.inf
    return low, high


def _normal_cdf(x: float) -> float:
    return 0.5 * math.erfc(-x / math.sqrt(2.0))


def in_band_probability(level: float, tau: float, edges: tuple[float, float]) -> float:
    """P(a child lands in the band) when children scatter as N(level, tau^2) in log-nodes."""
    low, high = edges
    return _normal_cdf((high - level) / tau) - _normal_cdf((low - level) / tau)


def in_band(band: EffortBand, stats: ScipStats) -> bool:
    """Whether a solve lies inside `band`: feasible, with its node count in the band (an infeasible instance SCIP
    closes in presolving reports 0 nodes, which `EffortBand` counts as the root, so feasibility is checked first)."""
    return stats.feasible and not effort_violations(band, status=stats.status, nodes=stats.nodes)


@dataclass
class InstanceArchive:
    """The in-band instances of one asked band, mutated with `sigma`."""

    band: EffortBand
    sigma: float = 0.01
    min_children: int = 2
    entries: list[ArchiveEntry] = field(default_factory=list)
    parent_model: ParentModel = "beta"

    def __post_init__(self) -> None:
        if self.parent_model not in PARENT_MODELS:
            msg = f"parent model {self.parent_model!r}: expected one of {', '.join(PARENT_MODELS)}"
            raise ValueError(msg)

    def add(self, instance: Instance, stats: ScipStats) -> bool:
        """Keep `instance` when its solve lies in the band; whether it was kept."""
        if not in_band(self.band, stats):
            return False
        self.entries.append(ArchiveEntry(instance, stats.nodes))
        return True

    def extend(self, solved: Iterable[tuple[Instance, ScipStats]]) -> int:
        """`add` each solved instance; how many were kept."""
        return sum(self.add(instance, stats) for instance, stats in solved)

    def choose(self, rng: np.random.Generator, *, trained: bool = False) -> int:
        """A parent's index by Thompson sampling under the `parent_model`; `trained` restricts the choice to parents
        with at least `min_children` children tried (all, when none has)."""
        if not self.entries:
            msg = f"archive of band {self.band.label}: no in-band instance to mutate"
            raise ValueError(msg)
        indices = list(range(len(self.entries)))
        if trained:
            indices = [i for i in indices if self.entries[i].children >= self.min_children] or indices
        if self.parent_model == "lognormal":
            scores = self._lognormal_draws(indices, rng)
        else:
            chosen = [self.entries[i] for i in indices]
            scores = np.array([rng.beta(1 + e.in_band, 1 + e.children - e.in_band) for e in chosen])
        return indices[int(np.argmax(scores))]

    def _lognormal_draws(self, indices: Sequence[int], rng: np.random.Generator) -> np.ndarray:
        """Per parent in `indices`, the in-band probability of a child at a level drawn from the level's posterior
        (the spread pooled over every entry's lineage group)."""
        every = [e.log_nodes() for e in self.entries]
        tau = pooled_tau(every)
        groups = [every[i] for i in indices]
        means = np.array([math.fsum(g) / len(g) for g in groups])
        spreads = tau / np.sqrt([len(g) for g in groups])
        levels = means + spreads * rng.standard_normal(len(groups))
        edges = band_log_edges(self.band)
        return np.array([in_band_probability(float(level), tau, edges) for level in levels])

    def propose(self, count: int, rng: np.random.Generator, *, trained: bool = False) -> list[tuple[int, Instance]]:
        """`count` children: (parent index, child), each with a fresh mutation seed."""
        proposals = []
        for _ in range(count):
            parent = self.choose(rng, trained=trained)
            mutation = Mutation(int(rng.integers(2**62)), self.sigma)
            proposals.append((parent, self.entries[parent].instance.child(mutation)))
        return proposals

    def record(self, parent: int, child: Instance, stats: ScipStats) -> bool:
        """Count a child's solve against its parent; an in-band child joins the archive. Whether it was in band."""
        entry = self.entries[parent]
        entry.children += 1
        entry.child_nodes.append(stats.nodes)
        landed = self.add(child, stats)
        entry.in_band += landed
        return landed

    def to_dict(self) -> dict[str, Any]:
        """Plain JSON values."""
        return {
            "band": [*self.band.to_list(), self.band.label],
            "sigma": self.sigma,
            "min_children": self.min_children,
            "entries": [e.to_dict() for e in self.entries],
            "parent_model": self.parent_model,
        }

    @classmethod
    def from_dict(cls, data: Mapping[str, Any]) -> InstanceArchive:
        """The archive recorded by `to_dict`."""
        low, high, label = data["band"]
        entries = [ArchiveEntry.from_dict(e) for e in data["entries"]]
        band, model = EffortBand(low, high, label), data.get("parent_model", "beta")
        return cls(band, float(data["sigma"]), int(data["min_children"]), entries, model)


def solve_instances(instances: Sequence[Instance], *, scip: ScipSettings, workers: int = 1) -> list[ScipStats]:
    """Solve each instance's LP text (in `workers` processes)."""
    return solve_many([(instance.text(), scip) for instance in instances], workers=workers)


def evolve(
    archive: InstanceArchive,
    *,
    rounds: int,
    children: int,
    key: Sequence[int],
    scip: ScipSettings,
    workers: int = 1,
) -> list[dict[str, Any]]:
    """Play `rounds` rounds of `children` children each (round r seeded by (*key, r), a stream the caller keeps
    apart from its others); one summary per round."""
    history = []
    for index in range(rounds):
        rng = np.random.Generator(np.random.PCG64([*key, index]))
        proposals = archive.propose(children, rng)
        solved = solve_instances([child for _, child in proposals], scip=scip, workers=workers)
        landed = [archive.record(p, child, stats) for (p, child), stats in zip(proposals, solved, strict=True)]
        history.append(
            {
                "round": index,
                "children": len(proposals),
                "in_band_rate": sum(landed) / len(landed) if landed else 0.0,
                "archive_size": len(archive.entries),
                "nodes": [s.nodes for s in solved],
            }
        )
    return history
