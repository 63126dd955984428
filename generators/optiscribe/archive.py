"""Instance-space mutation: an archive of instances that landed in the asked band, and their children.

A knob challenger picks a parameterisation; the instance seed then spreads SCIP's effort over a decade or more
(measured on CFL 20x20), wider than a calibrated medium band, so no parameterisation lands there reliably. A child
of an in-band instance keeps its constraints and jitters its objective (`Mutation`): at a small sigma its effort
stays near its parent's. The archive starts from the in-band instances a knob challenger's self-play solved (no
external seed instances) and counts, per instance, how many of its children landed in the band. Evolution rounds
pick parents by Thompson sampling on those counts, solve their children, and let in-band children join the archive
(lineage: the parent's mutations plus one). Generating after training picks, also by Thompson sampling, among
parents with at least `min_children` children tried. Every instance rebuilds from (spec, seed, mutations).
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

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

    def to_dict(self) -> dict[str, Any]:
        """Plain JSON values."""
        counts = {"nodes": self.nodes, "children": self.children, "in_band": self.in_band}
        return {"instance": self.instance.to_dict(), **counts}

    @classmethod
    def from_dict(cls, data: Mapping[str, Any]) -> ArchiveEntry:
        """The entry recorded by `to_dict`."""
        counts = (int(data["nodes"]), int(data["children"]), int(data["in_band"]))
        return cls(Instance.from_dict(data["instance"]), *counts)


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
        """A parent's index by Thompson sampling on Beta(1 + in band, 1 + missed) of its children; `trained`
        restricts the choice to parents with at least `min_children` children tried (all, when none has)."""
        if not self.entries:
            msg = f"archive of band {self.band.label}: no in-band instance to mutate"
            raise ValueError(msg)
        indices = list(range(len(self.entries)))
        if trained:
            indices = [i for i in indices if self.entries[i].children >= self.min_children] or indices
        chosen = [self.entries[i] for i in indices]
        draws = [rng.beta(1 + e.in_band, 1 + e.children - e.in_band) for e in chosen]
        return indices[int(np.argmax(draws))]

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
        }

    @classmethod
    def from_dict(cls, data: Mapping[str, Any]) -> InstanceArchive:
        """The archive recorded by `to_dict`."""
        low, high, label = data["band"]
        entries = [ArchiveEntry.from_dict(e) for e in data["entries"]]
        return cls(EffortBand(low, high, label), float(data["sigma"]), int(data["min_children"]), entries)


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
