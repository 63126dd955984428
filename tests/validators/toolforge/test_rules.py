"""Rule layers: each accepts the hand-built valid dialogues and rejects its target corruption.

The fixture rows (`fixture_rows`) are built by hand with `dialogue_row` following the model's message conventions;
the other ToolForge validator tests load them from this module.
"""

from __future__ import annotations

import copy
import json
from typing import Any

import pytest

from synth.generators.toolforge.model import (
    ChatMessage,
    DialoguePlan,
    Evidence,
    Passage,
    PlannedCall,
    QASeed,
    ToolCall,
    ToolSpec,
    render_observation,
)
from synth.generators.toolforge.records import dialogue_row
from synth.validators.toolforge import rules

SEED = QASeed(
    seed_id="fx-1",
    source="user",
    question="In which city was the director of the film Glass Harbor born?",
    answer="Veltrona",
    qtype="bridge",
    passages=(
        Passage("Glass Harbor", ("Glass Harbor is a 2011 drama film directed by Mira Castellan.", "It won prizes.")),
        Passage("Mira Castellan", ("Mira Castellan is a film director born in Veltrona.", "She studied in Orlin.")),
        Passage("Port Elm", ("Port Elm is a fishing town on the northern coast.", "Its harbor is old.")),
    ),
    supporting=((0, 0), (1, 0)),
)


def _tool(name: str, family: str, entity: str) -> ToolSpec:
    return ToolSpec(
        name=name,
        description=f"Search {family.replace('_', ' ')}.",
        parameters={
            "type": "object",
            "properties": {
                "query": {"type": "string", "description": "The search query."},
                entity: {"type": "string", "description": "The entity."},
                "detail": {"type": "string", "enum": ["basic", "full"]},
                "scope": {"type": "string", "enum": ["recent", "all time"]},
                "limit": {"type": "integer"},
            },
            "required": ["query", entity, "detail"],
        },
        family=family,
    )


TOOLS = (
    _tool("work_lookup", "creation_information", "work_title"),
    _tool("person_profile_finder", "person_information", "person_name"),
    _tool("place_search", "geographic_information", "place_name"),
)


def _evidence(*refs: tuple[int, int]) -> tuple[Evidence, ...]:
    return tuple(
        Evidence(p, s, SEED.passages[p].title, SEED.sentence((p, s)), (p, s) in SEED.supporting) for p, s in refs
    )


def _call(k: int, rnd: int, kind: str, tool: str, query: str, entity: tuple[str, str], refs: Any, faulty: str = ""):
    return PlannedCall(
        call_id=f"call_{k}",
        round=rnd,
        kind=kind,  # type: ignore[arg-type]
        tool=tool,
        gold_tool=tool,
        query=query,
        arguments={"query": query, entity[0]: entity[1], "detail": "basic"},
        evidence=_evidence(*refs),
        faulty=faulty,
    )


def _compose(plan: DialoguePlan, thoughts: list[str], final_thought: str) -> list[ChatMessage]:
    """Messages per the conventions: one tool turn per round with the given thoughts, then the answer turn."""
    messages = [
        ChatMessage("system", "You answer with tools and reflect on failures."),
        ChatMessage("user", SEED.question),
    ]
    for rnd in range(plan.rounds):
        calls = [c for c in plan.calls if c.round == rnd]
        messages.append(
            ChatMessage(
                "assistant",
                reasoning=thoughts[rnd],
                tool_calls=tuple(ToolCall(c.call_id, c.tool, c.arguments) for c in calls),
            )
        )
        messages += [
            ChatMessage("tool", render_observation(c.evidence), tool_call_id=c.call_id, name=c.tool) for c in calls
        ]
    messages.append(ChatMessage("assistant", plan.turn_answers[-1], reasoning=final_thought))
    return messages


def _row(plan: DialoguePlan, thoughts: list[str], final_thought: str) -> dict[str, Any]:
    return dialogue_row(SEED, plan, TOOLS, _compose(plan, thoughts, final_thought), backend="scripted", llm_calls=0)


def clean_row() -> dict[str, Any]:
    """A clean two-hop dialogue: the film's director, then the director's birthplace."""
    calls = (
        _call(
            0, 0, "gold", "work_lookup", "director of Glass Harbor", ("work_title", "Glass Harbor"), [(0, 0), (2, 0)]
        ),
        _call(
            1, 1, "gold", "person_profile_finder", "Mira Castellan born", ("person_name", "Mira Castellan"), [(1, 0)]
        ),
    )
    plan = DialoguePlan("multi_hop", "bridge question", "clean", (), calls, (SEED.question,), (SEED.answer,))
    thoughts = [
        "First find who directed Glass Harbor with work_lookup.",
        "Glass Harbor was directed by Mira Castellan; now use person_profile_finder for where she was born.",
    ]
    return _row(plan, thoughts, "The Mira Castellan passage says she was born in Veltrona.")


def wrong_arguments_row() -> dict[str, Any]:
    """The second hop first asks about the wrong target (faulty `query`), then reflects and retries."""
    calls = (
        _call(0, 0, "gold", "work_lookup", "director of Glass Harbor", ("work_title", "Glass Harbor"), [(0, 0)]),
        _call(
            1,
            1,
            "wrong_arguments",
            "person_profile_finder",
            "Glass Harbor born",
            ("person_name", "Mira Castellan"),
            [(2, 0), (0, 1)],
            faulty="query",
        ),
        _call(
            2, 2, "gold", "person_profile_finder", "Mira Castellan born", ("person_name", "Mira Castellan"), [(1, 0)]
        ),
    )
    plan = DialoguePlan(
        "multi_hop", "bridge question", "wrong_arguments@hop1", ("query",), calls, (SEED.question,), (SEED.answer,)
    )
    thoughts = [
        "First find who directed Glass Harbor with work_lookup.",
        "The director is Mira Castellan; call person_profile_finder about her birth city.",
        "That result was wrong: the query asked about Glass Harbor instead of Mira Castellan. "
        "I fix the query argument and call person_profile_finder again.",
    ]
    return _row(plan, thoughts, "The Mira Castellan passage says she was born in Veltrona.")


def fixture_rows() -> list[dict[str, Any]]:
    """The valid hand-built rows."""
    return [clean_row(), wrong_arguments_row()]


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
    assert rules.check_structure(row)


def test_pairing_rejects_a_changed_id() -> None:
    row = clean_row()
    row["messages"][2]["tool_calls"][0]["id"] = "call_x"
    assert any("call 0" in r for r in rules.check_pairing(row))


def test_schema_rejects_unknown_missing_and_mistyped_arguments() -> None:
    row = clean_row()
    assert rules.check_schema(_set_args(row, 2, 0, year="2011"))
    assert rules.check_schema(_set_args(row, 2, 0, work_title=None))
    assert rules.check_schema(_set_args(row, 2, 0, limit="five"))
    row["messages"][2]["tool_calls"][0]["function"]["name"] = "film_finder"
    assert any("not offered" in r for r in rules.check_schema(row))


def test_grounding_rejects_an_ungrounded_value_and_accepts_enums() -> None:
    row = clean_row()
    assert rules.check_grounding(_set_args(row, 2, 0, work_title="Silver Lagoon"))
    assert not rules.check_grounding(_set_args(row, 2, 0, scope="all time"))  # an optional enum value
    assert any("planned value" in r for r in rules.check_grounding(_set_args(row, 2, 0, detail="full")))
    assert any("planned value" in r for r in rules.check_grounding(_set_args(row, 2, 0, work_title="film")))
    # Mira Castellan is only grounded after the first result shows her name.
    assert rules.check_grounding(_set_args(row, 2, 0, query="Mira Castellan films"))


def test_answer_rejects_another_entity_and_accepts_normalised_variants() -> None:
    row = clean_row()
    row["messages"][-1]["content"] = "the Veltrona."
    assert rules.check_answer(row) == []
    row["messages"][-1]["content"] = "Mira Castellan"
    assert rules.check_answer(row)


def test_evidence_rejects_a_dropped_gold_sentence() -> None:
    row = clean_row()
    tool = row["messages"][3]
    tool["content"] = "**1**\ntitle: Port Elm\ncontent: Port Elm is a fishing town on the northern coast."
    assert any("supporting" in r for r in rules.check_evidence(row))


def test_plan_rejects_a_distractor_and_an_optional_argument_change() -> None:
    row = clean_row()
    row["messages"][2]["tool_calls"][0]["function"]["name"] = "place_search"
    assert rules.check_plan(row)
    row = wrong_arguments_row()
    changed = _set_args(row, 4, 0, query="Mira Castellan born")  # the failure no longer differs in `query`
    assert any("faulty argument" in r for r in rules.check_plan(changed))


def test_leak_rejects_foreknowledge_and_gold_in_failed_results() -> None:
    row = clean_row()
    row["messages"][2]["reasoning"] += " I bet the answer is Veltrona."
    assert rules.check_leak(row)
    row = wrong_arguments_row()
    row["messages"][5]["content"] += (
        "\n**3**\ntitle: Mira Castellan\ncontent: Mira Castellan is a film director born in Veltrona."
    )
    assert any("gold sentence" in r for r in rules.check_leak(row))


@pytest.mark.parametrize(
    "messages",
    [None, "text", [None], [{"role": 3, "tool_calls": "x"}], [{"role": "assistant", "tool_calls": [{"function": 1}]}]],
)
def test_layers_never_raise_on_garbage(messages: Any) -> None:
    row = clean_row()
    row["messages"] = messages
    results = {layer: rules.run_report(report, row).reasons for layer, report in rules.LAYER_REPORTS.items()}
    assert results["structure"]
    assert not any("unreadable" in r for reasons in results.values() for r in reasons)


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
