"""The instruction grammar: instructions to requests, round trips, and one-line errors for bad instructions."""

import pytest

from synth.validators.optiscribe.grammar import parse_instruction, render_instruction
from synth.validators.optiscribe.request import InstanceRequest
from synth.validators.optiscribe.spec import InstanceSpec, SpecError


def test_the_issue_example_parses_into_sizes_knob_range_and_difficulty():
    request = parse_instruction(
        "a capacitated facility location problem with 40 customers and 15 facilities, tight capacities, hard"
    )
    assert request.family == "facility_location"
    assert request.sizes == {"customers": (40, 40), "facilities": (15, 15)}
    assert request.knob_ranges == {"ratio": (1.2, 2.5)}
    assert request.difficulty == "hard"
    spec = request.make_spec()
    assert spec.sizes == {"customers": 40, "facilities": 15}
    assert 1.2 <= spec.knobs["ratio"] <= 2.5 and spec.knobs["assignment"] == "continuous"


@pytest.mark.parametrize(
    ("instruction", "family", "sizes", "density"),
    [
        ("Max-Cut on 30 vertices with 25% density", "max_cut", {"nodes": (30, 30)}, (0.225, 0.275)),
        (
            "a set covering instance, between 200 and 300 rows, 400 columns, density 0.05",
            "set_cover",
            {"rows": (200, 300), "cols": (400, 400)},
            (0.045, 0.055),
        ),
        (
            "combinatorial auction: 50-60 items and at most 200 bids",
            "combinatorial_auction",
            {"items": (50, 60), "bids": (1, 200)},
            None,
        ),
        ("a sparse independent set problem with 1,000 nodes", "independent_set", {"nodes": (1000, 1000)}, (0.02, 0.1)),
        (
            "multiple knapsack, 50 items, 5 knapsacks, subset-sum",
            "knapsack",
            {"items": (50, 50), "knapsacks": (5, 5)},
            None,
        ),
    ],
)
def test_families_sizes_and_densities_are_recognised(instruction, family, sizes, density):
    request = parse_instruction(instruction)
    assert (request.family, dict(request.sizes), request.density) == (family, sizes, density)


@pytest.mark.parametrize(
    "instruction",
    [
        "a capacitated facility location problem with 40 customers and 15 facilities, tight capacities, hard",
        "a max-cut problem with 20 nodes, density 0.4, weights from 1 to 3, 50% negative weights, medium",
        "an independent set problem with 80 nodes, barabasi-albert, affinity 6, easy",
        "a multiple knapsack problem with 30 items and 3 knapsacks, strongly correlated",
        "a combinatorial auction problem with between 20 and 30 items and 80 bids",
        "a set cover problem with 50 rows and 100 columns, costs up to 20",
    ],
)
def test_render_then_parse_gives_the_same_request(instruction):
    request = parse_instruction(instruction)
    assert parse_instruction(render_instruction(request)) == request


@pytest.mark.parametrize(
    ("instruction", "expected", "code"),
    [
        (
            "a travelling salesman problem with 40 cities",
            "unknown family in instruction ('travelling salesman')",
            "unknown_family",
        ),
        ("make me something hard", "unknown family in instruction (no family)", "unknown_family"),
        ("max-cut and set cover with 30 nodes", "names several families", "ambiguous_family"),
        ("a max-cut problem with 2 nodes", "2 nodes is impossible", "invalid_size"),
        ("a facility location problem with 0 customers and 5 facilities", "0 customers is impossible", "invalid_size"),
        (
            "a facility location problem with 40 customers, 15 facilities, density 0.3",
            "`density` does not apply",
            "invalid_density",
        ),
        ("a max-cut problem with 30 nodes, density 1.5", "densities lie in (0, 1]", "invalid_density"),
        ("a max-cut problem with 30 nodes, easy, hard", "contradictory difficulties", "contradiction"),
        (
            "a facility location problem with 40 customers, tight capacities, loose capacities",
            "contradictory `ratio`",
            "contradiction",
        ),
        ("a max-cut problem with 30 nodes and 40 nodes", "contradictory `nodes` sizes", "contradiction"),
        (
            "a max-cut problem with 30 nodes, tight capacities",
            "does not apply (it is a facility_location setting)",
            "invalid_knob",
        ),
        ("a knapsack problem with 10 items and 3 customers", "`customers` does not apply", "unknown_size"),
        (
            "a set cover problem with 100 rows and 100 columns, density 0.01",
            "fewer than 2 per column",
            "infeasible_combination",
        ),
        (
            "an independent set problem with 5 nodes, barabasi-albert, affinity 8",
            "must be below `nodes`",
            "infeasible_combination",
        ),
        ("a max-cut problem with 100000 nodes", "more than 200000 variables", "too_large"),
        ("a max-cut problem with between 50 and 40 nodes", "is empty", "empty_range"),
    ],
)
def test_bad_instructions_raise_one_line_naming_the_problem(instruction, expected, code):
    with pytest.raises(SpecError) as caught:
        parse_instruction(instruction)
    assert expected in str(caught.value) and "\n" not in str(caught.value)
    assert caught.value.code == code


@pytest.mark.parametrize(
    ("instruction", "code", "message"),
    [
        (
            "a max-cut problem with -5 nodes",
            "invalid_size",
            "max_cut: '-5 nodes' is not a size; size `nodes` must be a whole number of at least 3 (e.g. '30 nodes')",
        ),
        (
            "a max-cut problem with 2.5 nodes",
            "invalid_size",
            "max_cut: '2.5 nodes' is not a size; size `nodes` must be a whole number of at least 3 (e.g. '30 nodes')",
        ),
        (
            "a max-cut problem with twenty nodes",
            "instruction_unparsed",
            "max_cut: 'twenty nodes' is not read as a size; write it in digits (e.g. '30 nodes')",
        ),
        (
            "a knapsack problem with 20 items and twenty-five knapsacks",
            "instruction_unparsed",
            "knapsack: 'twenty-five knapsacks' is not read as a size; write it in digits (e.g. '5 knapsacks')",
        ),
        (
            "a max-cut problem with 1234567890123 nodes",
            "invalid_size",
            "number '1234567890123' has 13 digits, more than the 12 a size or count may have",
        ),
    ],
)
def test_a_size_the_grammar_cannot_read_is_refused_not_defaulted(instruction, code, message):
    with pytest.raises(SpecError) as caught:
        parse_instruction(instruction)
    assert (caught.value.code, str(caught.value)) == (code, message)


def test_size_nouns_without_a_count_are_not_sizes():
    request = parse_instruction("a knapsack problem whose items are strongly correlated, hard")
    assert request.sizes == {} and request.knob_choices == {"correlation": "strongly_correlated"}


def test_specs_validate_knobs_and_round_trip_through_json():
    spec = InstanceSpec(family="knapsack", sizes={"items": 20, "knapsacks": 2}, knobs={"correlation": "subset_sum"})
    assert spec.knobs == {"correlation": "subset_sum", "capacity_fraction": 0.5}
    assert InstanceSpec.from_json(spec.to_json()) == spec
    with pytest.raises(SpecError, match=r"knob `ratio`: 0\.5 outside"):
        InstanceSpec(family="facility_location", sizes={"customers": 5, "facilities": 2}, knobs={"ratio": 0.5})
    with pytest.raises(SpecError, match="unknown knob `colour`"):
        InstanceSpec.from_dict({"family": "max_cut", "sizes": {"nodes": 5}, "knobs": {"colour": 1}})
    with pytest.raises(SpecError, match="not JSON"):
        InstanceSpec.from_json("{family")


def test_make_spec_clips_choices_into_the_asked_ranges():
    request = InstanceRequest(family="max_cut", sizes={"nodes": (10, 20)}, density=(0.2, 0.3))
    spec = request.make_spec(sizes={"nodes": 99}, density=0.9, knobs={"weight_low": 1, "weight_high": 500})
    assert spec.sizes == {"nodes": 20} and spec.density == 0.3 and spec.knobs["weight_high"] == 100
    assert request.asked() == {"family": "max_cut", "sizes": {"nodes": [10, 20]}, "density": [0.2, 0.3]}


def test_the_docstring_example_runs():
    import doctest

    from synth.validators.optiscribe import grammar

    result = doctest.testmod(grammar)
    assert result.attempted >= 2 and result.failed == 0
