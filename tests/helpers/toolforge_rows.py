"""Hand-built ToolForge dialogue rows for tests: a clean multi-hop dialogue and one with a wrong-arguments
failure and its reflection, written with `dialogue_row` by the model's message conventions.

On the test path through `pythonpath = ["tests/helpers"]` (pyproject), so any test imports `toolforge_rows`.
"""

from __future__ import annotations

from typing import Any

from synth.validators.toolforge.model import (
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
from synth.validators.toolforge.records import dialogue_row

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
