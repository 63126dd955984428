"""The four OptiScribe verifiers on real rows: reproduced records pass; tampering, infeasibility, bad text fail."""

import json

import pyarrow as pa
import pytest

pytest.importorskip("pyscipopt")
pytest.importorskip("ortools")

from synth.core.records import score_column
from synth.generators.optiscribe.generator import OPTISCRIBE_SCHEMA, candidate_row
from synth.generators.optiscribe.selfplay import SelfPlaySettings, run_selfplay
from synth.validators.optiscribe import InstructionVerifier, OrtoolsVerifier, RewardVerifier, ScipVerifier
from synth.validators.optiscribe.scip import ScipSettings

from .test_scip import INFEASIBLE_LP, MALFORMED_LP

SETTINGS = SelfPlaySettings(rounds=1, candidates=2, challenger="default", scip=ScipSettings(total_nodes=500))


@pytest.fixture(scope="module")
def rows():
    candidates, _ = run_selfplay(["a max-cut problem with 12 nodes, density 0.4"], settings=SETTINGS, seed=0)
    good = candidate_row(candidates[0], settings=SETTINGS)
    tampered = dict(good, solve_nodes=good["solve_nodes"] + 7, reward=0.99)
    infeasible = dict(good, model_text=INFEASIBLE_LP, solve_status="infeasible", solve_nodes=0, reward=0.0)
    malformed = dict(good, model_text=MALFORMED_LP)
    wrong_size = dict(good, asked=json.dumps({"sizes": {"nodes": [20, 30]}, "density": [0.1, 0.2]}))
    return [good, tampered, infeasible, malformed, wrong_size]


def with_scores(table, verifier):
    verdicts = verifier.verify(table)
    for score in verifier.scores:
        table = table.append_column(
            score_column(verifier.name, score), pa.array([v.scores.get(score) for v in verdicts], pa.float64())
        )
    return table, verdicts


def test_scip_verifier_reproduces_records_and_names_each_failure(rows):
    table = pa.Table.from_pylist(rows, schema=OPTISCRIBE_SCHEMA)
    _, verdicts = with_scores(table, ScipVerifier(name="scip"))
    assert verdicts[0].passed and verdicts[0].scores["nodes"] == rows[0]["solve_nodes"]
    assert not verdicts[1].passed and "differ from the recorded" in verdicts[1].reasons[0]
    assert verdicts[2].reasons == ("infeasible",)
    assert verdicts[3].reasons == (
        "unreadable model: Syntax error in line 5 ('Bounds'): expected value as right hand side.",
    )
    assert verdicts[4].passed


def test_instruction_ortools_and_reward_verifiers(rows):
    table = pa.Table.from_pylist(rows, schema=OPTISCRIBE_SCHEMA)
    table, _ = with_scores(table, ScipVerifier(name="scip"))
    instruction = InstructionVerifier(name="instruction").verify(table)
    assert instruction[0].passed and instruction[0].scores["followed"] == 1.0
    assert not instruction[4].passed
    assert instruction[4].reasons[0] == "size `nodes` is 12, asked [20, 30]"
    assert instruction[4].reasons[1] == f"density is {26 / 66:.4g}, asked [0.1, 0.2]"  # round(0.4 * 66) edges
    ortools = OrtoolsVerifier(name="ortools").verify(table)
    assert ortools[0].passed and ortools[0].scores["agrees"] == 1.0
    assert ortools[2].passed and ortools[2].scores["checked"] == 1.0  # both say infeasible
    reward = RewardVerifier(name="reward").verify(table)
    assert reward[0].scores["reward"] == pytest.approx(rows[0]["reward"], abs=1e-12)
    assert reward[0].passed != (rows[0]["solve_nodes"] <= 1)
    assert any("differs from the recorded 0.99" in r for r in reward[1].reasons)
    assert reward[2].scores["reward"] == 0.0
