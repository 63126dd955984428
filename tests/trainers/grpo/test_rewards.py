"""The GRPO reward registry and the built-in MARCO and ToolForge rewards (real RDKit and rule layers)."""

from __future__ import annotations

import json

import pytest

from synth.core.errors import InputError
from synth.trainers.grpo.rewards import REWARDS, completion_text, make_reward, register_reward

TOOLS = [
    {
        "type": "function",
        "function": {
            "name": "person_profile_finder",
            "description": "Find people.",
            "parameters": {
                "type": "object",
                "properties": {
                    "person_name": {"type": "string"},
                    "detail": {"type": "string", "enum": ["basic", "full"]},
                },
                "required": ["person_name"],
            },
        },
    },
    {"type": "function", "function": {"name": "other_tool", "parameters": {"type": "object", "properties": {}}}},
]


def call(name: str, arguments: dict) -> str:
    return f"<tool_call>\n{json.dumps({'name': name, 'arguments': arguments})}\n</tool_call>"


def test_unknown_reward_is_one_line_input_error() -> None:
    with pytest.raises(InputError, match="unknown GRPO reward 'nope'"):
        make_reward("nope")


def test_bad_settings_are_input_errors() -> None:
    with pytest.raises(InputError, match="bad settings"):
        make_reward("marco", no_such_weight=1.0)


def test_register_reward_in_process() -> None:
    def constant(*, value: float = 1.0):
        def reward(prompts, completions, **columns):
            return [value] * len(completions)

        return reward

    register_reward("constant_test", constant)
    try:
        function = make_reward("constant_test", value=0.5)
        assert function.__name__ == "constant_test"
        assert function(["p", "p"], ["a", "b"]) == [0.5, 0.5]
    finally:
        del REWARDS["constant_test"]
    with pytest.raises(ValueError, match="snake_case"):
        register_reward("bad name", constant)


def test_completion_text_reads_strings_and_messages() -> None:
    assert completion_text("x") == "x"
    assert completion_text([{"role": "assistant", "content": "y"}]) == "y"
    assert completion_text([]) == ""


def test_marco_reward_grades_answers_with_rdkit() -> None:
    reward = make_reward("marco", task="PQS")
    source = "COc1ccccc1"
    completions = ["<SMILES> CCOc1ccccc1 </SMILES>", "<SMILES> C1CC( </SMILES>", f"<SMILES> {source} </SMILES>", "hi"]
    values = reward(["p"] * 4, completions, source_smiles=[source] * 4, task=["PQS"] * 4)
    assert values[1] == -1.0 and values[3] == -1.0  # invalid and missing answers hit the invalid gate
    assert values[0] > values[2]  # an edit beats repeating the source (repeat penalty)
    assert len(set(values)) >= 3  # varies within the group
    # a rollout's return is used as is; rows without a source are not applicable
    assert reward(["p"], ["x"], trajectory_return=[2.5]) == [2.5]
    assert reward(["p"], ["x"]) == [None]


def test_toolforge_reward_orders_calls_by_the_rules() -> None:
    reward = make_reward("toolforge_first_call")
    planned = {"person_name": "Mira Castellan"}
    completions = [
        call("person_profile_finder", {"person_name": "mira castellan"}),  # planned, normalised equal
        call("person_profile_finder", {"person_name": "Someone Else"}),
        call("person_profile_finder", {"person_name": "Mira Castellan", "bogus": 1}),  # schema violation
        call("other_tool", {}),
        call("unknown_tool", {}),
        "no call at all",
    ]
    n = len(completions)
    values = reward(
        ["p"] * n,
        completions,
        tools=[[json.dumps(t) for t in TOOLS]] * n,
        first_tool=["person_profile_finder"] * n,
        first_arguments=[json.dumps(planned)] * n,
    )
    assert values == [1.0, 0.75, 0.75, 0.5, 0.0, -1.0]
