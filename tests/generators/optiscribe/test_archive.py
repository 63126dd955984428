"""The mutation challenger: an archive of in-band instances, evolved by Thompson sampling on its children."""

import numpy as np
import pytest

pytest.importorskip("pyscipopt")

from synth.generators.optiscribe.archive import (
    PRIOR_TAU,
    ArchiveEntry,
    Instance,
    InstanceArchive,
    band_log_edges,
    evolve,
    in_band,
    in_band_probability,
    pooled_tau,
    solve_instances,
)
from synth.generators.optiscribe.bench import MutationSettings, bench_mutation
from synth.generators.optiscribe.build import Mutation, build_model_text
from synth.generators.optiscribe.selfplay import SelfPlaySettings, run_selfplay
from synth.validators.optiscribe.difficulty import EffortBand
from synth.validators.optiscribe.grammar import parse_instruction
from synth.validators.optiscribe.scip import ScipSettings

INSTRUCTION = "a max-cut problem with 12 nodes, density 0.4"
SCIP = ScipSettings(total_nodes=500)
OPEN = EffortBand(1, None, "open")


def _instances(count: int) -> list[Instance]:
    spec = parse_instruction(INSTRUCTION).make_spec()
    return [Instance(spec, seed) for seed in range(count)]


def test_an_instance_rebuilds_from_spec_seed_and_mutations():
    instance = _instances(1)[0].child(Mutation(4, 0.02)).child(Mutation(9, 0.01))
    assert instance.text() == build_model_text(instance.spec, seed=0, mutations=[Mutation(4, 0.02), Mutation(9, 0.01)])
    assert Instance.from_dict(instance.to_dict()) == instance
    assert instance.root() == (instance.spec.to_json(), 0)


def test_the_archive_keeps_only_in_band_solves_and_counts_children_against_their_parent():
    parents = _instances(6)
    solved = solve_instances(parents, scip=SCIP)
    nodes = sorted(s.nodes for s in solved)
    band = EffortBand(nodes[2], nodes[2], "exact")  # exactly the third-smallest node count
    archive = InstanceArchive(band)
    kept = archive.extend(zip(parents, solved, strict=True))
    assert kept == sum(s.nodes == nodes[2] for s in solved) == len(archive.entries)
    assert all(entry.nodes == nodes[2] for entry in archive.entries)
    ((parent, child),) = archive.propose(1, np.random.default_rng(0))
    assert child.mutations[:-1] == archive.entries[parent].instance.mutations and child.mutations[-1].sigma == 0.01
    (stats,) = solve_instances([child], scip=SCIP)
    size = len(archive.entries)
    landed = archive.record(parent, child, stats)
    assert landed == in_band(band, stats) == (stats.nodes == nodes[2])
    assert archive.entries[parent].children == 1 and archive.entries[parent].in_band == int(landed)
    assert archive.entries[parent].child_nodes == [stats.nodes]  # the lognormal parent model's observations
    assert len(archive.entries) == size + landed
    assert not InstanceArchive(EffortBand(10**6, None, "far")).extend(zip(parents, solved, strict=True))


def test_choosing_after_training_uses_only_parents_with_enough_children_tried():
    instances = _instances(3)
    archive = InstanceArchive(OPEN, min_children=2)
    archive.entries = [
        ArchiveEntry(instances[0], 3),
        ArchiveEntry(instances[1], 3, 1, 1),
        ArchiveEntry(instances[2], 3, 4, 1),
    ]
    rng = np.random.default_rng(0)
    assert {archive.choose(rng, trained=True) for _ in range(50)} == {2}
    assert {archive.choose(rng) for _ in range(200)} == {0, 1, 2}  # training explores every parent
    # a parent whose children all landed is chosen far more often than one whose children mostly missed
    archive.entries = [ArchiveEntry(instances[0], 3, 10, 10), ArchiveEntry(instances[1], 3, 10, 1)]
    picks = [archive.choose(rng, trained=True) for _ in range(200)]
    assert picks.count(0) > 190
    with pytest.raises(ValueError, match="no in-band instance"):
        InstanceArchive(OPEN).choose(rng)


def test_evolution_is_reproducible_and_every_archived_instance_resolves_in_band():
    parents = _instances(3)
    solved = solve_instances(parents, scip=SCIP)
    runs = []
    for _ in range(2):
        archive = InstanceArchive(OPEN, sigma=0.05)
        archive.extend(zip(parents, solved, strict=True))
        history = evolve(archive, rounds=2, children=3, key=(11, 1), scip=SCIP)
        runs.append((archive.to_dict(), history))
    assert runs[0] == runs[1]
    archive_dict, history = runs[0]
    assert [h["children"] for h in history] == [3, 3] and history[-1]["archive_size"] == 3 + 6  # the open band
    entries = [ArchiveEntry.from_dict(e) for e in archive_dict["entries"]]
    assert sum(e.children for e in entries) == 6 and sum(e.in_band for e in entries) == 6
    assert max(len(e.instance.mutations) for e in entries) >= 1
    resolved = solve_instances([e.instance for e in entries], scip=SCIP)
    assert [s.nodes for s in resolved] == [e.nodes for e in entries]


def test_the_bench_measures_children_of_selfplayed_instances(tmp_path):
    settings = SelfPlaySettings(rounds=1, candidates=3, challenger="cem", scip=SCIP)
    candidates, _ = run_selfplay([INSTRUCTION], settings=settings, seed=0)
    nodes = sorted(c.stats.nodes for c in candidates if c.stats is not None)
    band = EffortBand(1, nodes[-1], "up to the hardest")  # every self-played instance is inside
    mutation = MutationSettings(rounds=1, children=2, sigma=0.05, eval_instances=3)
    report = bench_mutation(candidates, band, settings=mutation, max_draws=2, seed=0, scip=SCIP)
    assert report["seed_instances"] == len(candidates) and report["training_solves"] == 2
    delivered = [Instance.from_dict(d) for d in report["delivered"]]
    assert len(delivered) == 3 and all(len(i.mutations) >= 1 for i in delivered)
    resolved = [s.nodes for s in solve_instances(delivered, scip=SCIP)]
    assert resolved == report["delivered_nodes"]  # what the report delivers rebuilds and re-solves identically
    share = sum(band.contains(n) for n in resolved) / 3
    assert report["delivered_in_band"] == share
    assert report["first_draw_in_band"] <= share and 1.0 <= report["mean_solves"] <= 2.0
    low, high = report["delivered_in_band_90ci"]
    assert low <= share <= high
    assert 1 <= report["distinct_roots"] <= report["distinct_parents"] <= 3
    assert report == bench_mutation(candidates, band, settings=mutation, max_draws=2, seed=0, scip=SCIP)
    far = bench_mutation(candidates, EffortBand(10**6, None, "far"), settings=mutation, max_draws=2, seed=0, scip=SCIP)
    assert far["seed_instances"] == 0 and far["first_draw_in_band"] is None


def test_an_infeasible_instance_closed_in_presolving_is_never_in_band():
    from synth.validators.optiscribe.scip import solve_model_text

    infeasible = "Minimize\n obj: x\nSubject To\n c: x >= 2\nBounds\n 0 <= x <= 1\nGenerals\n x\nEnd\n"
    stats = solve_model_text(infeasible, settings=SCIP)
    assert not stats.feasible and OPEN.contains(stats.nodes)  # 0 nodes would pass the node band on its own
    assert not in_band(OPEN, stats)
    archive = InstanceArchive(OPEN)
    assert not archive.add(_instances(1)[0], stats) and not archive.entries


def test_the_lognormal_model_pools_the_scatter_of_lineage_groups_on_log_nodes():
    assert pooled_tau([]) == pytest.approx(PRIOR_TAU) and pooled_tau([[1.0], [2.0]]) == pytest.approx(PRIOR_TAU)
    rng = np.random.default_rng(0)
    groups = [list(level + 0.2 * rng.standard_normal(8)) for level in rng.uniform(1, 4, 200)]
    assert pooled_tau(groups) == pytest.approx(0.2, rel=0.06)  # 1,400 degrees of freedom outweigh the prior's 2
    assert band_log_edges(EffortBand(5, 14, "medium")) == (np.log(4.5), np.log(14.5))
    assert band_log_edges(EffortBand(1, None, "open")) == (-np.inf, np.inf)
    centre = 0.5 * sum(band_log_edges(EffortBand(5, 14, "medium")))
    edges = band_log_edges(EffortBand(5, 14, "medium"))
    assert in_band_probability(centre, 0.3, edges) > in_band_probability(np.log(5), 0.3, edges) > 0.4
    assert in_band_probability(np.log(200), 0.3, edges) < 1e-6
    assert in_band_probability(0.0, 0.3, band_log_edges(OPEN)) == 1.0


def test_the_lognormal_parent_model_prefers_the_band_centre_and_drops_parents_whose_children_drift():
    instances = _instances(3)
    band = EffortBand(5, 14, "medium")  # log-centre about 8.4 nodes
    archive = InstanceArchive(band, parent_model="lognormal")
    archive.entries = [ArchiveEntry(instances[0], 5), ArchiveEntry(instances[1], 8)]  # untried: edge and centre
    rng = np.random.default_rng(0)
    picks = [archive.choose(rng) for _ in range(400)]
    assert 0.6 * 400 < picks.count(1) < 400  # the centre wins most draws, the edge still some
    beta = InstanceArchive(band, entries=archive.entries)  # the count model cannot tell the two apart
    assert abs([beta.choose(rng) for _ in range(400)].count(1) - 200) < 40
    # the centre parent's children all landed far above the band; the edge parent's landed near the centre
    archive.entries = [
        ArchiveEntry(instances[0], 5, 4, 4, [8, 9, 7, 8]),
        ArchiveEntry(instances[1], 8, 4, 0, [60, 80, 45, 70]),
        ArchiveEntry(instances[2], 6, 4, 3, [6, 10, 7, 30]),
    ]
    picks = [archive.choose(rng, trained=True) for _ in range(400)]
    assert picks.count(1) == 0 and picks.count(0) > picks.count(2)
    restored = InstanceArchive.from_dict(archive.to_dict())
    assert restored == archive and restored.entries[2].child_nodes == [6, 10, 7, 30]
    legacy = archive.to_dict()  # a state saved before the parent model and child nodes were recorded
    del legacy["parent_model"]
    for entry in legacy["entries"]:
        del entry["child_nodes"]
    old = InstanceArchive.from_dict(legacy)
    assert old.parent_model == "beta" and all(e.child_nodes == [] for e in old.entries)
    with pytest.raises(ValueError, match="parent model"):
        InstanceArchive(band, parent_model="best")  # type: ignore[arg-type]
