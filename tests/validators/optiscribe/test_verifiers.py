"""The four OptiScribe verifiers on real rows: reproduced records pass; tampering, infeasibility, bad text fail."""

import json

import pyarrow as pa
import pytest

pytest.importorskip("pyscipopt")
pytest.importorskip("ortools")

from synth.core.records import score_column
from synth.generators.optiscribe.build import build_model_text
from synth.generators.optiscribe.generator import OPTISCRIBE_SCHEMA, candidate_row
from synth.generators.optiscribe.selfplay import SelfPlaySettings, run_selfplay
from synth.validators.optiscribe import InstructionVerifier, OrtoolsVerifier, RewardVerifier, ScipVerifier
from synth.validators.optiscribe.grammar import parse_instruction
from synth.validators.optiscribe.request import InstanceRequest
from synth.validators.optiscribe.reward import RewardSettings
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
    asks = "a max-cut problem with between 20 and 30 nodes, density between 0.1 and 0.2"
    wrong_size = dict(good, instruction=asks, asked=_json(parse_instruction(asks).asked()))
    stale_asked = dict(good, asked=_json({"family": "max_cut", "sizes": {"nodes": [20, 30]}, "density": [0.1, 0.2]}))
    return [good, tampered, infeasible, malformed, wrong_size, stale_asked]


def _json(value):
    return json.dumps(value, sort_keys=True, separators=(",", ":"))


def defaulted_rows():
    """Rows as the old grammar made them: an instruction whose size it could not read built the default 30 nodes."""
    default = InstanceRequest(family="max_cut")
    text = build_model_text(default.make_spec(), seed=0)
    base = {"family": "max_cut", "model_format": "lp", "model_text": text, "asked": _json(default.asked())}
    instructions = ("a max-cut problem with -5 nodes", "a max-cut problem with 2.5 nodes", "twenty nodes max-cut")
    return [dict(base, instruction=instruction) for instruction in instructions], base


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
    assert not verdicts[1].passed
    assert verdicts[1].reasons == (
        f"nodes_mismatch: {rows[0]['solve_nodes']} nodes differ from the recorded {rows[1]['solve_nodes']}",
    )
    assert verdicts[2].reasons == ("infeasible",)
    assert verdicts[3].reasons == (
        "unreadable_model: Syntax error in line 5 ('Bounds'): expected value as right hand side.",
    )
    assert verdicts[4].passed


def test_instruction_ortools_and_reward_verifiers(rows):
    table = pa.Table.from_pylist(rows, schema=OPTISCRIBE_SCHEMA)
    table, _ = with_scores(table, ScipVerifier(name="scip"))
    instruction = InstructionVerifier(name="instruction").verify(table)
    assert instruction[0].passed and instruction[0].scores["followed"] == 1.0
    assert not instruction[4].passed
    assert instruction[4].reasons == (
        "size_outside: size `nodes` is 12, asked [20, 30]",
        f"density_outside: density is {26 / 66:.4g}, asked [0.1, 0.2]",  # round(0.4 * 66) edges
    )
    assert instruction[5].reasons == (
        'asked_mismatch: the row\'s `asked` {"density":[0.1,0.2],"family":"max_cut","sizes":{"nodes":[20,30]}} is '
        f"not what its instruction asks {rows[0]['asked']}",
    )
    ortools = OrtoolsVerifier(name="ortools").verify(table)
    assert ortools[0].passed and ortools[0].scores["agrees"] == 1.0
    assert ortools[2].passed and ortools[2].scores["checked"] == 1.0  # both say infeasible
    reward = RewardVerifier(name="reward").verify(table)
    assert reward[0].scores["reward"] == pytest.approx(rows[0]["reward"], abs=1e-12)
    assert reward[0].passed != (rows[0]["solve_nodes"] <= 1)
    assert (
        f"reward_mismatch: reward {reward[1].scores['reward']:.6g} differs from the recorded 0.99" in reward[1].reasons
    )
    assert reward[2].scores["reward"] == 0.0


def test_the_instruction_verifier_fails_a_size_its_instruction_never_asked():
    rows, base = defaulted_rows()
    fields = [f for f in OPTISCRIBE_SCHEMA if f.name in InstructionVerifier.reads]
    verdicts = InstructionVerifier(name="instruction").verify(pa.Table.from_pylist(rows, schema=pa.schema(fields)))
    assert [v.passed for v in verdicts] == [False, False, False]
    assert [v.scores["followed"] for v in verdicts] == [0.0, 0.0, 0.0]
    codes = [v.reasons[0].split(": ", 1) for v in verdicts]
    assert codes == [
        [
            "invalid_size",
            "max_cut: '-5 nodes' is not a size; size `nodes` must be a whole number of at least 3 (e.g. '30 nodes')",
        ],
        [
            "invalid_size",
            "max_cut: '2.5 nodes' is not a size; size `nodes` must be a whole number of at least 3 (e.g. '30 nodes')",
        ],
        ["instruction_unparsed", "max_cut: 'twenty nodes' is not read as a size; write it in digits (e.g. '30 nodes')"],
    ]
    followed = dict(base, instruction="a max-cut problem")  # asks nothing: the default is what it asked
    (verdict,) = InstructionVerifier(name="instruction").verify(
        pa.Table.from_pylist([followed], schema=pa.schema(fields))
    )
    assert verdict.passed and verdict.reasons == ()


def test_the_reward_verifier_pays_a_node_capped_row_for_scips_tree_estimate():
    settings = SelfPlaySettings(rounds=1, candidates=1, challenger="default", scip=ScipSettings(total_nodes=40))
    candidates, _ = run_selfplay(["a max-cut problem with 30 nodes, density 0.5"], settings=settings, seed=0)
    row = candidate_row(candidates[0], settings=settings)
    assert row["solve_status"] == "totalnodelimit" and row["solve_nodes"] == 40
    table, _ = with_scores(pa.Table.from_pylist([row], schema=OPTISCRIBE_SCHEMA), ScipVerifier(name="scip"))
    estimate = table[score_column("scip", "treesize_estimate")][0].as_py()
    assert estimate is not None and estimate > 40
    (paid,) = RewardVerifier(name="reward").verify(table)
    assert paid.passed and paid.scores["reward"] == pytest.approx(row["reward"], abs=1e-12)
    (counted,) = RewardVerifier(name="reward", settings=RewardSettings(capped_nodes="count")).verify(table)
    assert counted.scores["reward"] < row["reward"]  # version 2's pay would not match the recorded reward
    assert counted.reasons[0].startswith("reward_mismatch")
