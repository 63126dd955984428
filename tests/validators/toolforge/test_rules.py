"""Rule layers: each accepts the hand-built valid dialogues and rejects its target corruption.

The fixture rows come from `tests/helpers/toolforge_rows.py` (built by hand with `dialogue_row` following the
model's message conventions); the other ToolForge validator tests use them too.
"""

from __future__ import annotations

import copy
import json
from typing import Any

import pytest
from toolforge_rows import clean_row, fixture_rows, wrong_arguments_row

from synth.core.records import split_reason
from synth.validators.toolforge import rules


def _set_args(row: dict[str, Any], message: int, call: int, **changes: Any) -> dict[str, Any]:
    row = copy.deepcopy(row)
    function = row["messages"][message]["tool_calls"][call]["function"]
    arguments = json.loads(function["arguments"])
    for key, value in changes.items():
        if value is None:
            arguments.pop(key)
        else:
            arguments[key] = value
    function["arguments"] = json.dumps(arguments)
    return row


@pytest.mark.parametrize("row", fixture_rows(), ids=["clean", "wrong_arguments"])
@pytest.mark.parametrize("layer", sorted(rules.LAYER_REPORTS))
def test_valid_rows_pass_every_layer(row: dict[str, Any], layer: str) -> None:
    assert rules.run_report(rules.LAYER_REPORTS[layer], row).reasons == []


def test_structure_rejects_a_missing_answer_turn() -> None:
    row = clean_row()
    row["messages"] = row["messages"][:-1]
    assert rules.check_structure(row) == ["missing_answer_turn: message 6: expected the answer turn of user turn 0"]


def test_pairing_rejects_a_changed_id() -> None:
    row = clean_row()
    row["messages"][2]["tool_calls"][0]["id"] = "call_x"
    assert rules.check_pairing(row) == [
        "result_count: call 0: id 'call_x' answered by 0 tool messages",
        "result_out_of_order: message 3: tool result ('call_0', 'work_lookup') out of order for call 0",
    ]


def test_schema_rejects_unknown_missing_and_mistyped_arguments() -> None:
    row = clean_row()
    assert rules.check_schema(_set_args(row, 2, 0, year="2011")) == [
        "schema_violation: call 0 (work_lookup): <root>: Additional properties are not allowed ('year' was unexpected)"
    ]
    assert rules.check_schema(_set_args(row, 2, 0, work_title=None)) == [
        "schema_violation: call 0 (work_lookup): <root>: 'work_title' is a required property"
    ]
    assert rules.check_schema(_set_args(row, 2, 0, limit="five")) == [
        "schema_violation: call 0 (work_lookup): limit: 'five' is not of type 'integer'"
    ]
    row["messages"][2]["tool_calls"][0]["function"]["name"] = "film_finder"
    assert rules.check_schema(row) == ["unoffered_tool: call 0: tool 'film_finder' was not offered"]


def test_grounding_rejects_an_ungrounded_value_and_accepts_enums() -> None:
    row = clean_row()
    assert rules.check_grounding(_set_args(row, 2, 0, work_title="Silver Lagoon"))[0] == (
        "ungrounded_argument: call 0 (work_lookup): work_title='Silver Lagoon' is not grounded"
    )
    assert not rules.check_grounding(_set_args(row, 2, 0, scope="all time"))  # an optional enum value
    assert rules.check_grounding(_set_args(row, 2, 0, detail="full")) == [
        "unplanned_value: call 0 (work_lookup): detail='full' is not the planned value 'basic'"
    ]
    assert rules.check_grounding(_set_args(row, 2, 0, work_title="film")) == [
        "unplanned_value: call 0 (work_lookup): work_title='film' is not the planned value 'Glass Harbor'"
    ]
    # Mira Castellan is only grounded after the first result shows her name.
    assert rules.check_grounding(_set_args(row, 2, 0, query="Mira Castellan films"))[0] == (
        "ungrounded_argument: call 0 (work_lookup): query='Mira Castellan films' is not grounded"
    )


def test_answer_rejects_another_entity_and_accepts_normalised_variants() -> None:
    row = clean_row()
    row["messages"][-1]["content"] = "the Veltrona."
    assert rules.check_answer(row) == []
    row["messages"][-1]["content"] = "Mira Castellan"
    assert rules.check_answer(row) == ["wrong_final_answer: final answer 'Mira Castellan' is not the seed answer"]


def test_evidence_rejects_a_dropped_gold_sentence() -> None:
    row = clean_row()
    tool = row["messages"][3]
    tool["content"] = "**1**\ntitle: Port Elm\ncontent: Port Elm is a fishing town on the northern coast."
    assert rules.check_evidence(row) == [
        "observation_changed: message 3: tool result differs from the planned observation of call 0",
        "missing_support: supporting facts not shown by a gold call: ['Glass Harbor']",
    ]


def test_plan_rejects_a_distractor_and_an_optional_argument_change() -> None:
    row = clean_row()
    row["messages"][2]["tool_calls"][0]["function"]["name"] = "place_search"
    assert rules.check_plan(row) == [
        "tool_sequence: called tools ['place_search', 'person_profile_finder'] differ from the plan "
        "['work_lookup', 'person_profile_finder']"
    ]
    row = wrong_arguments_row()
    changed = _set_args(row, 4, 0, query="Mira Castellan born")  # the failure no longer differs in `query`
    assert rules.check_plan(changed) == [
        "faulty_unchanged: call 1: the faulty argument 'query' is not a changed required argument"
    ]


def test_leak_rejects_foreknowledge_and_gold_in_failed_results() -> None:
    row = clean_row()
    row["messages"][2]["reasoning"] += " I bet the answer is Veltrona."
    assert rules.check_leak(row) == [
        "answer_foreknown: message 2: names the answer before any user turn or result shows it"
    ]
    row = wrong_arguments_row()
    row["messages"][5]["content"] += (
        "\n**3**\ntitle: Mira Castellan\ncontent: Mira Castellan is a film director born in Veltrona."
    )
    assert rules.check_leak(row) == ["gold_in_failure: message 5: a wrong_arguments result holds a gold sentence"]


@pytest.mark.parametrize(
    "messages",
    [None, "text", [None], [{"role": 3, "tool_calls": "x"}], [{"role": "assistant", "tool_calls": [{"function": 1}]}]],
)
def test_layers_never_raise_on_garbage(messages: Any) -> None:
    row = clean_row()
    row["messages"] = messages
    results = {layer: rules.run_report(report, row).reasons for layer, report in rules.LAYER_REPORTS.items()}
    assert results["structure"] == ["missing_system: message 0: expected the system message"]
    assert not any(r.startswith("unreadable_row") for reasons in results.values() for r in reasons)


def test_an_answer_may_span_two_observed_sentences_of_one_passage() -> None:
    messages = rules.read_messages(
        {
            "messages": [
                {"role": "tool", "content": "**1**\ntitle: Grant Park\ncontent: It was founded when Lemuel P."},
                {"role": "tool", "content": "**1**\ntitle: Grant Park\ncontent: Grant, an engineer, gave land."},
            ]
        }
    )
    texts = rules.observed_texts(messages, (), before=2)
    assert any(rules.appears("Lemuel P. Grant, an engineer", text) for text in texts)
    assert not any(rules.appears("Lemuel P. Grant", text) for text in rules.observed_texts(messages, (), before=1))


def test_grounding_matches_hyphenation_and_inflections() -> None:
    context = rules.content_words("Who co-wrote the film owned by the studio?")
    assert rules.content_words("co wrote owner", joined=False) <= context


def test_every_reason_is_a_stable_code_with_the_detail_after_it() -> None:
    row = clean_row()
    row["messages"][2]["tool_calls"][0]["function"]["name"] = "place_search"
    row["messages"][-1]["content"] = "Mira Castellan"
    reasons = [r for report in rules.LAYER_REPORTS.values() for r in rules.run_report(report, row).reasons]
    codes = {split_reason(r)[0] for r in reasons}
    assert {"tool_sequence", "wrong_final_answer", "result_out_of_order"} <= codes
    assert all(split_reason(r)[1] for r in reasons)  # every reason names where it happened


def test_an_exception_becomes_an_unreadable_row_reason() -> None:
    report = rules.run_report(lambda row: row["missing"], {})
    assert report.reasons == ["unreadable_row: KeyError: 'missing'"] and report.pass_fraction == 0.0
