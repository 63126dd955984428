"""The evaluator verifier recomputes a trajectory row from its responses and names what differs."""

import copy
import random

import pyarrow as pa
import pytest

pytest.importorskip("rdkit")
pytest.importorskip("mol_ga")

from synth.generators.marco import get_task, read_sources
from synth.generators.marco.proposers import ProposalState, ScriptedProposer
from synth.generators.marco.records import MARCO_SCHEMA, trajectory_fields
from synth.generators.marco.trajectory import TrajectorySettings, run_trajectory
from synth.validators.marco import MarcoEvaluatorVerifier, MoleculeEvaluator, RewardSettings, recheck_trajectory


@pytest.fixture(scope="module")
def row():
    task = get_task("PQS")
    source = read_sources("PQS")[0]
    evaluator = MoleculeEvaluator(properties=task.properties)
    state = ProposalState(task, "seen", "", evaluator.profile(source.smiles))
    trajectory = run_trajectory(
        state,
        proposer=ScriptedProposer(),
        evaluator=evaluator,
        rng=random.Random(2),
        settings=TrajectorySettings(budget=3),
    )
    return {
        "source_smiles": state.source.canonical,
        "properties": list(task.properties),
        "protocol": "gellmo",
        "fragments": "reject",
        **trajectory_fields(trajectory),
    }


def test_an_untouched_row_recomputes_identically(row):
    problems, total = recheck_trajectory(row, rewards=RewardSettings())
    assert problems == [] and total == row["trajectory_return"]


def test_edits_to_answers_values_and_rewards_are_named(row):
    edited = copy.deepcopy(row)
    edited["turns"][0]["answer"] = "CCO"
    edited["turns"][0]["properties"][0]["gain"] = 99.0
    problems, _ = recheck_trajectory(edited, rewards=RewardSettings())
    assert "answer_mismatch: turn 0: the stored answer is not the one in the response" in problems
    canonical = row["turns"][0]["canonical"]
    assert f"turn_mismatch: turn 0: canonical {canonical!r} stored, 'CCO' recomputed" in problems
    key = row["turns"][0]["properties"][0]["key"]
    assert any(p.startswith(f"property_mismatch: turn 0: {key} gain 99.0 stored, ") for p in problems)
    other_weights, _ = recheck_trajectory(row, rewards=RewardSettings(similarity_weight=0.0))
    assert any(p.startswith("turn_mismatch: turn 0: reward ") for p in other_weights)
    assert other_weights[-1].startswith(f"return_mismatch: return {row['trajectory_return']!r} stored, ")


def test_an_invalid_source_is_named_by_its_kind(row):
    problems, total = recheck_trajectory({**row, "source_smiles": "C(C)(C)(C)(C)C"}, rewards=RewardSettings())
    assert total == 0.0 and len(problems) == 1
    assert problems[0].startswith("invalid_source:valence: source SMILES 'C(C)(C)(C)(C)C' is invalid: valence error")


def test_verifier_scores_rows_of_the_dataset_schema(row):
    fields = [f for f in MARCO_SCHEMA if f.name in MarcoEvaluatorVerifier.reads]
    table = pa.Table.from_pylist(
        [row, {**row, "trajectory_return": row["trajectory_return"] + 1}], schema=pa.schema(fields)
    )
    good, bad = MarcoEvaluatorVerifier(name="evaluator").verify(table)
    assert good.passed and good.scores["mismatches"] == 0.0 and good.scores["turns"] == len(row["turns"])
    assert not bad.passed and bad.scores["mismatches"] == 1.0
    assert bad.reasons == (
        f"return_mismatch: return {row['trajectory_return'] + 1!r} stored, {row['trajectory_return']!r} recomputed",
    )
