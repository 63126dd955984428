"""The ToolForge Arrow schema and the conversions between rows and the model's plan and messages.

Messages are stored in OpenAI wire form (`tool_calls[].function.arguments` is a JSON string) so that a row's
`messages` and `tools` feed `apply_chat_template(messages, tools=...)` after one `json.loads` per tool.
"""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from typing import Any

import pyarrow as pa

from synth.validators.toolforge.model import (
    ChatMessage,
    DialoguePlan,
    Evidence,
    PlannedCall,
    QASeed,
    ToolCall,
    ToolSpec,
)

EVIDENCE_TYPE = pa.struct(
    [
        ("passage", pa.int32()),
        ("sentence", pa.int32()),
        ("title", pa.string()),
        ("text", pa.string()),
        ("gold", pa.bool_()),
    ]
)
PLANNED_CALL_TYPE = pa.struct(
    [
        ("call_id", pa.string()),
        ("round", pa.int32()),
        ("kind", pa.string()),
        ("tool", pa.string()),
        ("gold_tool", pa.string()),
        ("query", pa.string()),
        ("arguments", pa.string()),
        ("faulty", pa.string()),
        ("user_turn", pa.int32()),
        ("mode", pa.string()),
        ("evidence", pa.list_(EVIDENCE_TYPE)),
    ]
)
TOOL_CALL_TYPE = pa.struct(
    [
        ("id", pa.string()),
        ("type", pa.string()),
        ("function", pa.struct([("name", pa.string()), ("arguments", pa.string())])),
    ]
)
MESSAGE_TYPE = pa.struct(
    [
        ("role", pa.string()),
        ("content", pa.string()),
        ("reasoning", pa.string()),
        ("tool_calls", pa.list_(TOOL_CALL_TYPE)),
        ("tool_call_id", pa.string()),
        ("name", pa.string()),
    ]
)
SUPPORT_TYPE = pa.struct(
    [("passage", pa.int32()), ("sentence", pa.int32()), ("title", pa.string()), ("text", pa.string())]
)

TOOLFORGE_SCHEMA = pa.schema(
    [
        ("seed_id", pa.string()),
        ("seed_source", pa.string()),
        ("seed_license", pa.string()),
        ("question", pa.string()),
        ("answer", pa.string()),
        ("answer_aliases", pa.list_(pa.string())),
        ("qtype", pa.string()),
        ("supporting", pa.list_(SUPPORT_TYPE)),
        ("paradigm", pa.string()),
        ("paradigm_reason", pa.string()),
        ("case", pa.string()),
        ("case_kind", pa.string()),
        ("reflection", pa.list_(pa.string())),
        ("retrieval_modes", pa.list_(pa.string())),
        ("gold_tools", pa.list_(pa.struct([("family", pa.string()), ("name", pa.string())]))),
        ("user_turns", pa.list_(pa.string())),
        ("turn_answers", pa.list_(pa.string())),
        ("plan", pa.list_(PLANNED_CALL_TYPE)),
        ("tools", pa.list_(pa.string())),
        ("messages", pa.list_(MESSAGE_TYPE)),
        ("n_messages", pa.int32()),
        ("n_calls", pa.int32()),
        ("backend", pa.string()),
        ("llm_calls", pa.int32()),
    ]
)


def dumps(value: Any) -> str:
    """Canonical JSON used inside rows (sorted keys, UTF-8)."""
    return json.dumps(value, sort_keys=True, ensure_ascii=False)


def evidence_from_dict(value: Mapping[str, Any]) -> Evidence:
    """An `Evidence` from its row dict."""
    return Evidence(value["passage"], value["sentence"], value["title"], value["text"], value["gold"])


def plan_call_to_dict(call: PlannedCall) -> dict[str, Any]:
    """One planned call as a `PLANNED_CALL_TYPE` dict."""
    return {
        "call_id": call.call_id,
        "round": call.round,
        "kind": call.kind,
        "tool": call.tool,
        "gold_tool": call.gold_tool,
        "query": call.query,
        "arguments": dumps(dict(call.arguments)),
        "faulty": call.faulty,
        "user_turn": call.user_turn,
        "mode": call.mode,
        "evidence": [item.to_dict() for item in call.evidence],
    }


def plan_calls_from_rows(values: Sequence[Mapping[str, Any]]) -> tuple[PlannedCall, ...]:
    """The planned calls of a row's `plan` column."""
    return tuple(
        PlannedCall(
            call_id=v["call_id"],
            round=v["round"],
            kind=v["kind"],
            tool=v["tool"],
            gold_tool=v["gold_tool"],
            query=v["query"],
            arguments=json.loads(v["arguments"]),
            evidence=tuple(evidence_from_dict(e) for e in v["evidence"]),
            faulty=v["faulty"],
            user_turn=v["user_turn"],
        )
        for v in values
    )


def message_to_dict(message: ChatMessage) -> dict[str, Any]:
    """One message in OpenAI wire form (arguments as a JSON string)."""
    return {
        "role": message.role,
        "content": message.content,
        "reasoning": message.reasoning,
        "tool_calls": [
            {"id": c.id, "type": "function", "function": {"name": c.name, "arguments": dumps(dict(c.arguments))}}
            for c in message.tool_calls
        ],
        "tool_call_id": message.tool_call_id,
        "name": message.name,
    }


def parse_arguments(text: str) -> Mapping[str, Any] | None:
    """Arguments of a stored tool call, or None when they are not a JSON object."""
    try:
        value = json.loads(text)
    except (TypeError, json.JSONDecodeError):
        return None
    return value if isinstance(value, dict) else None


def messages_from_rows(values: Sequence[Mapping[str, Any]]) -> tuple[ChatMessage, ...]:
    """Messages of a row's `messages` column; unparsable arguments become `{"__raw__": text}`."""
    messages = []
    for v in values:
        calls = []
        for c in v.get("tool_calls") or ():
            raw = c["function"]["arguments"]
            arguments = parse_arguments(raw)
            calls.append(
                ToolCall(c["id"], c["function"]["name"], arguments if arguments is not None else {"__raw__": raw})
            )
        messages.append(
            ChatMessage(
                role=v["role"],
                content=v.get("content") or "",
                reasoning=v.get("reasoning") or "",
                tool_calls=tuple(calls),
                tool_call_id=v.get("tool_call_id") or "",
                name=v.get("name") or "",
            )
        )
    return tuple(messages)


SEED_LICENSES = {"hotpotqa": "cc-by-sa-4.0", "musique": "cc-by-4.0", "2wiki": "apache-2.0", "user": "other"}


def dialogue_row(
    seed: QASeed,
    plan: DialoguePlan,
    tools: Sequence[ToolSpec],
    messages: Sequence[ChatMessage],
    *,
    backend: str,
    llm_calls: int,
) -> dict[str, Any]:
    """One dataset row (the `TOOLFORGE_SCHEMA` columns) for a composed dialogue."""
    modes = sorted({call.mode for call in plan.calls})
    return {
        "seed_id": seed.seed_id,
        "seed_source": seed.source,
        "seed_license": SEED_LICENSES.get(seed.source, "other"),
        "question": seed.question,
        "answer": seed.answer,
        "answer_aliases": list(seed.aliases),
        "qtype": seed.qtype,
        "supporting": [
            {"passage": p, "sentence": s, "title": seed.passages[p].title, "text": seed.sentence((p, s))}
            for p, s in seed.supporting
        ],
        "paradigm": plan.paradigm,
        "paradigm_reason": plan.paradigm_reason,
        "case": plan.case,
        "case_kind": plan.case.split("@")[0],
        "reflection": list(plan.reflection),
        "retrieval_modes": modes,
        "gold_tools": [{"family": family, "name": name} for family, name in sorted(plan.gold_tools.items())],
        "user_turns": list(plan.user_turns),
        "turn_answers": list(plan.turn_answers),
        "plan": [plan_call_to_dict(call) for call in plan.calls],
        "tools": [tool.to_json() for tool in tools],
        "messages": [message_to_dict(m) for m in messages],
        "n_messages": len(messages),
        "n_calls": sum(len(m.tool_calls) for m in messages),
        "backend": backend,
        "llm_calls": llm_calls,
    }
