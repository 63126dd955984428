"""Corruption operators: each makes the full validator reject a valid row; random stacks never raise."""

from __future__ import annotations

from typing import Any

import numpy as np
import pytest
from toolforge_rows import fixture_rows, wrong_arguments_row

from synth.validators.toolforge.corruptions import OPERATORS, applicable_actions, apply_action
from synth.validators.toolforge.mcts import messages_hash
from synth.validators.toolforge.verifiers import validate_row

ROWS = fixture_rows()
EXPECTED_LAYER = {
    "swap_tool_distractor": "plan",
    "swap_tool_unoffered": "schema",
    "ungrounded_argument": "grounding",
    "swap_argument_entity": "grounding",
    "reasoning_other_answer": "judge",
    "add_unknown_argument": "schema",
    "drop_required_argument": "schema",
    "drop_gold_sentence": "evidence",
    "swap_answer_entity": "answer",
    "reasoning_other_tool": "judge",
    "delete_reflection": "judge",
    "fake_reflection": "judge",
    "drop_tool_message": "pairing",
    "change_call_id": "pairing",
    "leak_answer": "leak",
    "duplicate_call": "plan",
}


@pytest.mark.parametrize("operator", OPERATORS, ids=lambda op: op.name)
def test_every_operator_applies_and_every_position_is_rejected(operator: Any) -> None:
    positions = 0
    for row in ROWS:
        for position in operator.applicable(row):
            positions += 1
            corrupted = operator.apply(row, position, np.random.default_rng(0))
            assert corrupted["plan"] is row["plan"]
            assert messages_hash(corrupted) != messages_hash(row)
            results = validate_row(corrupted)
            assert any(results.values()), (operator.name, position)
            if operator.name in EXPECTED_LAYER:
                assert results[EXPECTED_LAYER[operator.name]], (operator.name, position, results)
    assert positions, f"{operator.name} applies nowhere on the fixtures"


def test_operators_leave_the_input_row_untouched() -> None:
    row = wrong_arguments_row()
    before = messages_hash(row)
    for action in applicable_actions(row):
        apply_action(row, action, np.random.default_rng(1))
    assert messages_hash(row) == before


def test_random_operator_stacks_never_raise() -> None:
    rng = np.random.default_rng(7)
    for start in ROWS:
        for _ in range(25):
            row = start
            for _ in range(int(rng.integers(1, 7))):
                actions = applicable_actions(row)
                if not actions:
                    break
                row = apply_action(row, actions[int(rng.integers(len(actions)))], rng)
            validate_row(row)  # never raises on any stack
