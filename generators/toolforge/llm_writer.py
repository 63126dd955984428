"""The LLM writer: a backend writes the dialogue from the same plan, under a structured-output schema.

The request carries the plan (user turns, calls with their tools, arguments and rendered observations, failure
kinds and what was at fault) and the offered tools; the model answers `{"messages": [...]}` in the schema below.
Answers that are not valid JSON under the schema yield no dialogue (the generator rejects the case with the
reason). Offline, the `scripted` backend answers with the scripted composer's dialogue for the plan it reads
back from the request, so the whole path (request, cache key, parsing, validation) runs without a model.
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from typing import Any

import numpy as np

from synth.core.llm import GenRequest, LLMBackend, Message, SamplingParams, ScriptedBackend, schema_errors
from synth.generators.toolforge.compose import compose_scripted
from synth.validators.toolforge.model import ChatMessage, DialoguePlan, QASeed, ToolCall, ToolSpec, render_observation
from synth.validators.toolforge.records import plan_call_to_dict, plan_calls_from_rows

MODEL = "toolforge-writer"
MESSAGES_SCHEMA: dict[str, Any] = {
    "type": "object",
    "required": ["messages"],
    "additionalProperties": False,
    "properties": {
        "messages": {
            "type": "array",
            "minItems": 3,
            "items": {
                "type": "object",
                "required": ["role", "content"],
                "additionalProperties": False,
                "properties": {
                    "role": {"enum": ["system", "user", "assistant", "tool"]},
                    "content": {"type": "string"},
                    "reasoning": {"type": "string"},
                    "tool_calls": {
                        "type": "array",
                        "items": {
                            "type": "object",
                            "required": ["id", "name", "arguments"],
                            "additionalProperties": False,
                            "properties": {
                                "id": {"type": "string"},
                                "name": {"type": "string"},
                                "arguments": {"type": "object"},
                            },
                        },
                    },
                    "tool_call_id": {"type": "string"},
                    "name": {"type": "string"},
                },
            },
        }
    },
}

INSTRUCTIONS = (
    "Write a tool-use dialogue that realises the PLAN exactly. Messages: one system message; the user turns in "
    "order; for each round an assistant message whose `reasoning` names every tool it calls and whose "
    "`tool_calls` are the round's planned calls (same ids, tools and arguments), followed by one `tool` message "
    "per call whose content is the planned observation verbatim; after each user turn's last round, an "
    "assistant message whose content is the planned answer. Copy every argument value from the plan. After a "
    "failed call, the next assistant reasoning must say plainly that the call failed or was wrong, misleading or "
    "insufficient, and name the faulty tool or argument. An answer turn's reasoning cites the title of a gold "
    "passage it read and states the answer it gives. Never mention the answer before a tool result shows it. "
    'Answer with JSON {"messages": [...]} only.'
)


def plan_payload(plan: DialoguePlan, tools: Sequence[ToolSpec], seed: QASeed) -> dict[str, Any]:
    """The plan as the writer sees it (observations rendered as the tool messages must read)."""
    return {
        "question": seed.question,
        "paradigm": plan.paradigm,
        "case": plan.case,
        "reflection": list(plan.reflection),
        "user_turns": list(plan.user_turns),
        "turn_answers": list(plan.turn_answers),
        "calls": [plan_call_to_dict(call) | {"observation": render_observation(call.evidence)} for call in plan.calls],
        "tools": [tool.to_openai() for tool in tools],
    }


def writer_request(
    plan: DialoguePlan, tools: Sequence[ToolSpec], seed: QASeed, *, max_tokens: int = 4096
) -> GenRequest:
    """The structured-output request for one dialogue."""
    payload = json.dumps(plan_payload(plan, tools, seed), sort_keys=True, ensure_ascii=False)
    return GenRequest(
        model=MODEL,
        messages=(Message("system", INSTRUCTIONS), Message("user", f"PLAN:\n{payload}")),
        sampling=SamplingParams(temperature=0.0, max_tokens=max_tokens),
        schema=MESSAGES_SCHEMA,
    )


def messages_from_json(text: str) -> tuple[ChatMessage, ...]:
    """Parse a writer answer (already schema-checked) into messages."""
    value = json.loads(text)
    return tuple(
        ChatMessage(
            role=m["role"],
            content=m.get("content", ""),
            reasoning=m.get("reasoning", ""),
            tool_calls=tuple(ToolCall(c["id"], c["name"], c["arguments"]) for c in m.get("tool_calls", ())),
            tool_call_id=m.get("tool_call_id", ""),
            name=m.get("name", ""),
        )
        for m in value["messages"]
    )


def messages_to_json(messages: Sequence[ChatMessage]) -> str:
    """Serialise messages in the writer schema."""
    return json.dumps(
        {
            "messages": [
                {
                    "role": m.role,
                    "content": m.content,
                    "reasoning": m.reasoning,
                    "tool_calls": [{"id": c.id, "name": c.name, "arguments": dict(c.arguments)} for c in m.tool_calls],
                    "tool_call_id": m.tool_call_id,
                    "name": m.name,
                }
                for m in messages
            ]
        },
        ensure_ascii=False,
    )


def _scripted_policy(request: GenRequest, rng: np.random.Generator) -> str:
    del rng  # the scripted writer is deterministic given the plan
    payload = json.loads(request.messages[-1].content.removeprefix("PLAN:\n"))
    plan = DialoguePlan(
        paradigm=payload["paradigm"],
        paradigm_reason="",
        case=payload["case"],
        reflection=tuple(payload["reflection"]),
        calls=plan_calls_from_rows(payload["calls"]),
        user_turns=tuple(payload["user_turns"]),
        turn_answers=tuple(payload["turn_answers"]),
    )
    return messages_to_json(compose_scripted(plan))


def scripted_writer_backend() -> ScriptedBackend:
    """The offline writer backend (the scripted composer behind the LLM protocol)."""
    return ScriptedBackend(_scripted_policy, name="scripted")


def compose_with_llm(
    plan: DialoguePlan, tools: Sequence[ToolSpec], seed: QASeed, *, backend: LLMBackend, max_tokens: int = 4096
) -> tuple[tuple[ChatMessage, ...], int, str]:
    """(messages, LLM calls, problem): no messages and a one-line problem when the answer is not schema-valid."""
    (result,) = backend.generate([writer_request(plan, tools, seed, max_tokens=max_tokens)])
    text = result.texts[0]
    problem = schema_errors(text, MESSAGES_SCHEMA)
    if problem is not None:
        return (), 1, f"{backend.name}: {problem}"[:200]
    return messages_from_json(text), 1, ""
