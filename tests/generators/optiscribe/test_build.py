"""Family generators: deterministic models from (spec, seed), standard structure, LP and MPS text."""

import math

import pytest

pytest.importorskip("pyscipopt")

from synth.generators.optiscribe.build import Mutation, build_model, build_model_text, jitter_objective
from synth.generators.optiscribe.graphs import barabasi_albert_edges, greedy_clique_partition
from synth.validators.optiscribe.grammar import parse_instruction
from synth.validators.optiscribe.reading import read_model_text, write_model_text
from synth.validators.optiscribe.request import InstanceRequest
from synth.validators.optiscribe.spec import FAMILIES
from synth.validators.optiscribe.structure import instruction_violations, measure_structure

SMALL = {
    "facility_location": "a facility location problem with 12 customers and 4 facilities",
    "max_cut": "a max-cut problem with 12 nodes, density 0.4",
    "set_cover": "a set cover problem with 30 rows and 60 columns, density 0.1",
    "combinatorial_auction": "a combinatorial auction with 15 items and 30 bids",
    "independent_set": "an independent set problem with 40 nodes, affinity 3",
    "knapsack": "a multiple knapsack problem with 15 items and 3 knapsacks, weakly correlated",
}


def test_every_family_has_a_small_instruction():
    assert set(SMALL) == set(FAMILIES)


@pytest.mark.parametrize("family", FAMILIES)
def test_same_spec_and_seed_give_identical_text_and_another_seed_differs(family):
    spec = parse_instruction(SMALL[family]).make_spec()
    first = build_model_text(spec, seed=3)
    assert first == build_model_text(spec, seed=3)
    assert first != build_model_text(spec, seed=4)
    assert build_model_text(spec, seed=3, fmt="mps").startswith("*")


@pytest.mark.parametrize("family", FAMILIES)
def test_built_models_have_the_asked_sizes_when_read_back(family):
    request = parse_instruction(SMALL[family])
    model = read_model_text(build_model_text(request.make_spec(), seed=1))
    measured = measure_structure(model, family)
    assert instruction_violations(measured, request.asked()) == []


def test_facility_location_has_the_ecole_structure():
    spec = parse_instruction(
        "a facility location problem with 6 customers and 3 facilities, single-sourcing"
    ).make_spec()
    model = build_model(spec, seed=0)
    assert model.getNBinVars() == 3 + 18 and model.getNConss() == 6 + 3 + 1 + 18
    continuous = parse_instruction("a facility location problem with 6 customers and 3 facilities").make_spec()
    assert build_model(continuous, seed=0).getNBinVars() == 3


def test_fixed_cost_exponent_one_makes_fixed_cost_proportional_to_capacity():
    import numpy as np

    from synth.generators.optiscribe.build import instance_rng
    from synth.generators.optiscribe.facility import facility_data

    request = parse_instruction("a facility location problem with 30 customers and 40 facilities")
    standard = request.make_spec()
    assert standard.knobs["fixed_cost_exponent"] == 0.5
    linear = request.make_spec(knobs={**standard.knobs, "fixed_cost_exponent": 1.0})
    concave = facility_data(standard, instance_rng(7))
    proportional = facility_data(linear, instance_rng(7))
    assert np.array_equal(concave["capacities"], proportional["capacities"])  # only the fixed costs change
    per_unit = [proportional["fixed"] / proportional["capacities"], concave["fixed"] / concave["capacities"]]
    spread = [float(np.std(u) / np.mean(u)) for u in per_unit]
    assert spread[0] < 0.15 < spread[1]  # nearly equal cost per unit of capacity when e = 1
    assert abs(proportional["fixed"].mean() / concave["fixed"].mean() - 1) < 0.25  # same scale on average


def test_max_cut_builds_exactly_the_asked_number_of_edges():
    request = InstanceRequest(family="max_cut", sizes={"nodes": (20, 20)}, density=(0.3, 0.3))
    model = build_model(request.make_spec(), seed=5)
    edges = round(0.3 * 190)
    assert model.getNVars() == 20 + edges and model.getNConss() == 2 * edges


def test_barabasi_albert_degrees_and_clique_partition_cover_every_node():
    import numpy as np

    edges = barabasi_albert_edges(50, 3, np.random.default_rng(0))
    assert len(edges) == 6 + 3 * (50 - 4) and all(i < j for i, j in edges)
    cliques = greedy_clique_partition(50, edges)
    assert sorted(v for c in cliques for v in c) == list(range(50))
    edge_set = set(edges)
    assert all((a, b) in edge_set for c in cliques for a in c for b in c if a < b)


def test_max_cut_with_negative_weights_solves_to_the_brute_force_optimum():
    from itertools import product

    from synth.validators.optiscribe.scip import solve_model_text

    spec = parse_instruction("a max-cut problem with 9 nodes, density 0.5, 50% negative weights").make_spec()
    text = build_model_text(spec, seed=4)
    model = read_model_text(text)
    weights = {}
    for var in model.getVars():
        if var.name.startswith("cut_"):
            _, i, j = var.name.split("_")
            weights[int(i), int(j)] = var.getObj()
    assert any(w < 0 for w in weights.values()) and any(w > 0 for w in weights.values())
    best = max(sum(w for (i, j), w in weights.items() if sides[i] != sides[j]) for sides in product((0, 1), repeat=9))
    assert solve_model_text(text).primal_bound == best


def _objective(text: str) -> dict[str, float]:
    model = read_model_text(text)  # held while its variables are read: they point into it
    return {var.name: var.getObj() for var in model.getVars()}


def _constraints(text: str) -> str:
    return text[text.index("Subject to") :]


@pytest.mark.parametrize("family", FAMILIES)
def test_a_mutation_jitters_only_the_objective_and_rebuilds_exactly(family):
    request = parse_instruction(SMALL[family])
    spec = request.make_spec()
    parent = build_model_text(spec, seed=3)
    assert build_model_text(spec, seed=3, mutations=()) == parent  # no mutation: the unmutated bytes
    child = build_model_text(spec, seed=3, mutations=[Mutation(7, 0.05)])
    assert child == build_model_text(spec, seed=3, mutations=[Mutation(7, 0.05)])
    assert child != build_model_text(spec, seed=3, mutations=[Mutation(8, 0.05)])
    assert _constraints(child) == _constraints(parent)
    before, after = _objective(parent), _objective(child)
    assert before.keys() == after.keys() and before != after
    for name, coefficient in before.items():
        if coefficient == 0:
            assert after[name] == 0, name
        else:  # the same sign, within 6 sigma (and the 4-decimal rounding) of the parent's coefficient
            assert after[name] * coefficient > 0 and abs(math.log(after[name] / coefficient)) < 0.3 + 1e-3, name
    measured = measure_structure(read_model_text(child), family)
    assert instruction_violations(measured, request.asked()) == []


def test_mutations_apply_in_order_as_a_lineage():
    spec = parse_instruction(SMALL["facility_location"]).make_spec()
    first, second = Mutation(1, 0.02), Mutation(2, 0.02)
    parent = build_model(spec, seed=5, mutations=[first])
    jitter_objective(parent, second)
    assert write_model_text(parent) == build_model_text(spec, seed=5, mutations=[first, second])
    assert build_model_text(spec, seed=5, mutations=[second, first]) != build_model_text(
        spec, seed=5, mutations=[first, second]
    )
    assert Mutation.from_list(second.to_list()) == second
    with pytest.raises(ValueError, match="sigma"):
        Mutation(1, 0.0)
