"""SCIP measurement: determinism, the post-cut root gap, infeasibility, and parser errors on malformed text."""

import pytest

pytest.importorskip("pyscipopt")

from synth.generators.optiscribe.build import build_model_text
from synth.validators.optiscribe.grammar import parse_instruction
from synth.validators.optiscribe.reading import ModelTextError, convert_model_text, read_model_text
from synth.validators.optiscribe.scip import ScipSettings, solve_model_text

INFEASIBLE_LP = """Minimize
 obj: x + y
Subject To
 c1: x + y >= 3
Bounds
 0 <= x <= 1
 0 <= y <= 1
Binaries
 x y
End
"""
MALFORMED_LP = "Maximize\n obj: 3 x + 2 y\nSubject To\n c1: x + y <= \nBounds\nEnd\n"


@pytest.fixture(scope="module")
def max_cut_text():
    return build_model_text(parse_instruction("a max-cut problem with 22 nodes, density 0.35").make_spec(), seed=2)


def test_fixed_settings_reproduce_nodes_and_deterministic_time(max_cut_text):
    settings = ScipSettings(seed=1, total_nodes=3000)
    first = solve_model_text(max_cut_text, settings=settings)
    second = solve_model_text(max_cut_text, settings=settings)
    assert first.status == "optimal" and first.feasible and first.nodes > 1
    assert first.to_dict() == second.to_dict()


def test_root_gaps_are_ordered_and_cuts_close_part_of_the_gap(max_cut_text):
    stats = solve_model_text(max_cut_text, settings=ScipSettings(total_nodes=3000))
    assert stats.gap == 0.0
    assert stats.precut_gap is not None and stats.postcut_gap is not None
    assert 0.0 < stats.postcut_gap < stats.precut_gap  # max-cut's first LP is Σw; cuts tighten it


def test_total_node_limit_caps_the_search(max_cut_text):
    stats = solve_model_text(max_cut_text, settings=ScipSettings(total_nodes=2))
    assert stats.status == "totalnodelimit" and stats.nodes == 2 and stats.feasible


def test_an_infeasible_model_is_reported_without_a_solution():
    stats = solve_model_text(INFEASIBLE_LP)
    assert stats.status == "infeasible" and not stats.feasible and stats.primal_bound is None
    assert stats.postcut_gap is None


def test_malformed_lp_raises_the_parsers_message_on_one_line():
    with pytest.raises(ModelTextError) as caught:
        read_model_text(MALFORMED_LP)
    assert str(caught.value) == "Syntax error in line 5 ('Bounds'): expected value as right hand side."
    with pytest.raises(ModelTextError, match="empty model text"):
        solve_model_text("   ")


def test_lp_and_its_mps_conversion_describe_the_same_problem(max_cut_text):
    mps = convert_model_text(max_cut_text, source="lp", target="mps")
    settings = ScipSettings(total_nodes=3000)
    assert (
        solve_model_text(mps, fmt="mps", settings=settings).primal_bound
        == solve_model_text(max_cut_text, settings=settings).primal_bound
    )


def test_a_conversion_gives_the_same_bytes_every_time_and_keeps_the_problem_name(max_cut_text):
    first = convert_model_text(max_cut_text, source="lp", target="mps", name="row-1")
    assert convert_model_text(max_cut_text, source="lp", target="mps", name="row-1") == first
    assert "NAME          max_cut\n" in first and "tmp" not in first  # named as in the source header
    back = convert_model_text(first, source="mps", target="lp", name="other")
    assert convert_model_text(first, source="mps", target="lp", name="other") == back
    assert "Problem name     : max_cut" in back


def test_a_source_without_a_header_is_named_by_the_caller():
    text = "Maximize\n obj: x + y\nSubject To\n c1: x + y <= 1\nBinaries\n x y\nEnd\n"
    assert "NAME          row-1\n" in convert_model_text(text, source="lp", target="mps", name="row-1")


def test_a_capped_solve_records_scips_estimate_of_the_full_tree():
    from synth.validators.optiscribe.reward import compute_reward

    text = build_model_text(parse_instruction("a max-cut problem with 30 nodes, density 0.5").make_spec(), seed=2)
    capped = solve_model_text(text, settings=ScipSettings(total_nodes=60))
    full = solve_model_text(text, settings=ScipSettings(total_nodes=5000))
    assert capped.status == "totalnodelimit" and capped.nodes == 60
    assert full.status == "optimal" and full.nodes > 300
    assert capped.treesize_estimate is not None and full.nodes / 3 < capped.treesize_estimate < 3 * full.nodes
    assert full.treesize_estimate is not None  # recorded for every solve; the reward reads it only at a cap
    paid = compute_reward(capped.to_dict())
    assert paid > compute_reward({**capped.to_dict(), "treesize_estimate": None})  # the estimate pays beyond the cap
    assert abs(paid - compute_reward(full.to_dict())) < 0.05  # about what the full search is paid
