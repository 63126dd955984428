"""OR-Tools cross-check: HiGHS agrees with SCIP on small instances; disagreements and skips are reported."""

import pytest

pytest.importorskip("pyscipopt")
pytest.importorskip("ortools")

from synth.generators.optiscribe.build import build_model_text
from synth.validators.optiscribe.crosscheck import CrossCheck, CrossCheckSettings, agreement, crosscheck_model_text
from synth.validators.optiscribe.grammar import parse_instruction
from synth.validators.optiscribe.scip import solve_model_text

from .test_scip import INFEASIBLE_LP


@pytest.mark.parametrize(
    "instruction",
    [
        "a facility location problem with 10 customers and 4 facilities, tight capacities",
        "a max-cut problem with 12 nodes, density 0.4",
        "a multiple knapsack problem with 12 items and 2 knapsacks, strongly correlated",
    ],
)
def test_highs_finds_the_same_optimum_as_scip(instruction):
    text = build_model_text(parse_instruction(instruction).make_spec(), seed=0)
    scip = solve_model_text(text)
    check = crosscheck_model_text(text)
    assert check.status == "optimal"
    assert (
        agreement(check, scip_status=scip.status, scip_feasible=scip.feasible, scip_objective=scip.primal_bound) is None
    )
    assert check.objective == pytest.approx(scip.primal_bound, rel=1e-6)


def test_infeasibility_is_confirmed_and_large_instances_are_skipped():
    assert crosscheck_model_text(INFEASIBLE_LP).status == "infeasible"
    text = build_model_text(parse_instruction("a max-cut problem with 12 nodes, density 0.4").make_spec(), seed=0)
    assert crosscheck_model_text(text, settings=CrossCheckSettings(max_variables=10)).status == "skipped"


def test_disagreements_are_named():
    check = CrossCheck(solver="highs", status="optimal", objective=10.0)
    assert agreement(check, scip_status="optimal", scip_feasible=True, scip_objective=11.0) == (
        "objective_disagreement: highs optimum 10 differs from SCIP's 11"
    )
    infeasible = CrossCheck(solver="highs", status="infeasible")
    assert agreement(infeasible, scip_status="optimal", scip_feasible=True, scip_objective=1.0) == (
        "infeasible_disagreement: highs says infeasible, SCIP found a solution"
    )
    assert agreement(
        CrossCheck(solver="highs", status="optimal"), scip_status="infeasible", scip_feasible=False, scip_objective=None
    ) == ("feasible_disagreement: highs found a solution, SCIP says infeasible")
    assert (
        agreement(
            CrossCheck(solver="highs", status="skipped"),
            scip_status="infeasible",
            scip_feasible=False,
            scip_objective=None,
        )
        is None
    )
