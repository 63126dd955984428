"""Edit operators that corrupt a dialogue row's messages (never its trusted plan) for the validator audit.

Each operator lists the positions where it applies (`applicable`) and returns a corrupted copy (`apply`). Applied
once to a valid row, every operator makes the dialogue invalid with respect to its plan or seed; `why` says which
convention it breaks. Operators read messages through `rules.read_messages` and only write well-formed message
dicts, so any stack of operators stays applicable and never raises.
"""

from __future__ import annotations

import copy
import json
import re
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np

from synth.validators.toolforge.judge import failed_calls_by_turn, judged_calls, states_failure
from synth.validators.toolforge.model import parse_observation
from synth.validators.toolforge.rules import (
    YES_NO,
    Msg,
    alnum,
    appears,
    content_words,
    names,
    normalize,
    offered_tools,
    planned_call_for,
    read_messages,
    read_plan,
    strip_answer,
    supporting_texts,
)

Position = tuple[int, ...]
Row = dict[str, Any]
FABRICATED = ("Quenby Harlowe", "Zarvik Institute", "Ostrella Vane", "Malvorne Keep", "Tessaly Brook", "Iruvan Dolce")
SIBLING_SUFFIXES = ("lookup", "finder", "explorer", "retriever", "query", "search", "index")
UNKNOWN_KEYS = ("source_hint", "extra_filter", "verbose_mode", "region_code")


@dataclass(frozen=True, slots=True)
class CorruptionOperator:
    """A named edit: `applicable(row)` lists positions, `apply(row, position, rng)` returns a corrupted copy."""

    name: str
    why: str
    applicable: Callable[[Mapping[str, Any]], list[Position]]
    apply: Callable[[Mapping[str, Any], Position, np.random.Generator], Row]


def copy_row(row: Mapping[str, Any]) -> Row:
    """A shallow copy of the row with its own deep copy of `messages` (the plan stays shared and untouched)."""
    return {**row, "messages": copy.deepcopy(list(row.get("messages") or ()))}


def _calls(row: Mapping[str, Any]) -> list[tuple[Msg, int, Any]]:
    """(message, call index in it, call) of every assistant call."""
    return [(m, j, c) for m in read_messages(row) if m.role == "assistant" for j, c in enumerate(m.calls)]


def _function(out: Row, m: int, j: int) -> dict[str, Any]:
    return out["messages"][m]["tool_calls"][j]["function"]


def _set_arguments(out: Row, m: int, j: int, arguments: Mapping[str, Any]) -> None:
    _function(out, m, j)["arguments"] = json.dumps(dict(arguments), sort_keys=True, ensure_ascii=False)


def _replace_name(text: str, old: str, new: str) -> str:
    return re.sub(rf"(?<![\w]){re.escape(old)}(?![\w])", lambda _: new, text, flags=re.IGNORECASE)


def _rename_call(row: Mapping[str, Any], m: int, j: int, new: str) -> Row:
    """Rename a call, its paired tool message and its mentions in the turn's reasoning (a consistent-looking swap)."""
    out = copy_row(row)
    message = out["messages"][m]
    call = message["tool_calls"][j]
    old = call["function"]["name"]
    call["function"]["name"] = new
    message["reasoning"] = _replace_name(message.get("reasoning") or "", old, new)
    paired = m + 1 + j
    if paired < len(out["messages"]) and out["messages"][paired].get("tool_call_id") == call.get("id"):
        out["messages"][paired]["name"] = new
    return out


def _pick(rng: np.random.Generator, options: Sequence[Any]) -> Any:
    return options[int(rng.integers(len(options)))]


# --- tools -----------------------------------------------------------------------------------------------


def _flat_index(row: Mapping[str, Any]) -> dict[tuple[int, int], int]:
    return {(m.index, j): k for k, (m, j, _) in enumerate(_calls(row))}


def _distractors(row: Mapping[str, Any], m: int, j: int) -> list[str]:
    plan = read_plan(row)
    k = _flat_index(row)[(m, j)]
    planned = plan[k].tool if k < len(plan) else ""
    current = read_messages(row)[m].calls[j].name
    return sorted(set(offered_tools(row)) - {planned, current})


def _swap_tool_distractor_positions(row: Mapping[str, Any]) -> list[Position]:
    return [(m.index, j) for m, j, _ in _calls(row) if _distractors(row, m.index, j)]


def _swap_tool_distractor(row: Mapping[str, Any], position: Position, rng: np.random.Generator) -> Row:
    m, j = position
    return _rename_call(row, m, j, _pick(rng, _distractors(row, m, j)))


def _sibling(name: str, offered: set[str], rng: np.random.Generator) -> str:
    stem = name.rsplit("_", 1)[0] if "_" in name else name
    options = [f"{stem}_{suffix}" for suffix in SIBLING_SUFFIXES if f"{stem}_{suffix}" not in offered | {name}]
    return _pick(rng, options) if options else f"{name}_v2"


def _swap_tool_unoffered_positions(row: Mapping[str, Any]) -> list[Position]:
    return [(m.index, j) for m, j, _ in _calls(row)]


def _swap_tool_unoffered(row: Mapping[str, Any], position: Position, rng: np.random.Generator) -> Row:
    m, j = position
    offered = set(offered_tools(row))
    name = _sibling(read_messages(row)[m].calls[j].name, offered, rng)
    while name in offered:
        name += "_v2"
    return _rename_call(row, m, j, name)


# --- arguments -------------------------------------------------------------------------------------------


def _schema_of(row: Mapping[str, Any], name: str) -> Mapping[str, Any]:
    return offered_tools(row).get(name, {})


def _row_words(row: Mapping[str, Any]) -> set[str]:
    words = content_words(str(row.get("question", "")))
    for m in read_messages(row):
        for text in (m.content, m.reasoning, *(c.raw for c in m.calls)):
            words |= content_words(text)
    return words


def _ungrounded_argument_positions(row: Mapping[str, Any]) -> list[Position]:
    out = []
    for m, j, call in _calls(row):
        schema = _schema_of(row, call.name)
        properties = schema.get("properties", {})
        for key in sorted(set(schema.get("required", ())) & set(call.arguments or {})):
            spec = properties.get(key, {})
            if spec.get("type") in ("string", "array") and "enum" not in spec and "enum" not in spec.get("items", {}):
                out.append((m.index, j, sorted(call.arguments).index(key)))
    return out


def _ungrounded_argument(row: Mapping[str, Any], position: Position, rng: np.random.Generator) -> Row:
    """A required string argument becomes a name whose words appear nowhere in the row (ungrounded)."""
    m, j, index = position
    call = read_messages(row)[m].calls[j]
    arguments = dict(call.arguments or {})
    key = sorted(arguments)[index]
    words = _row_words(row)
    fresh = [name for name in FABRICATED if not content_words(name) & words] or ["Zzyqx Vormund"]
    value = _pick(rng, fresh)
    arguments[key] = [value] if isinstance(arguments[key], list) else value
    out = copy_row(row)
    _set_arguments(out, m, j, arguments)
    return out


_ENTITY = re.compile(r"[A-Z][\w'.-]*(?:\s+(?:of\s+|the\s+)?[A-Z][\w'.-]*)*")


def _seen_entities(row: Mapping[str, Any], before: int) -> list[str]:
    """Capitalised names in the question and titles of the results shown before message `before`."""
    names_ = set(_ENTITY.findall(str(row.get("question", ""))))
    for m in read_messages(row)[:before]:
        if m.role == "tool":
            names_ |= {title for title, _ in parse_observation(m.content)}
    return sorted(n for n in names_ if content_words(n))


def _swap_candidates(row: Mapping[str, Any], m: int, j: int, key: str) -> list[str]:
    call = read_messages(row)[m].calls[j]
    k = _flat_index(row)[(m, j)]
    planned = planned_call_for(k, call, read_plan(row))
    taken = {
        normalize(str(v)) for v in (planned.arguments.get(key) if planned else None, (call.arguments or {}).get(key))
    }
    return [e for e in _seen_entities(row, m) if normalize(e) not in taken]


def _swap_argument_entity_positions(row: Mapping[str, Any]) -> list[Position]:
    out = []
    for m, j, call in _calls(row):
        arguments = call.arguments or {}
        for index, key in enumerate(sorted(arguments)):
            if isinstance(arguments[key], str) and _swap_candidates(row, m.index, j, key):
                out.append((m.index, j, index))
    return out


def _swap_argument_entity(row: Mapping[str, Any], position: Position, rng: np.random.Generator) -> Row:
    """A string argument becomes another entity the dialogue has shown: grounded, but not the planned value."""
    m, j, index = position
    arguments = dict(read_messages(row)[m].calls[j].arguments or {})
    key = sorted(arguments)[index]
    arguments[key] = _pick(rng, _swap_candidates(row, m, j, key))
    out = copy_row(row)
    _set_arguments(out, m, j, arguments)
    return out


def _add_unknown_argument_positions(row: Mapping[str, Any]) -> list[Position]:
    return [(m.index, j) for m, j, call in _calls(row) if call.arguments is not None]


def _add_unknown_argument(row: Mapping[str, Any], position: Position, rng: np.random.Generator) -> Row:
    """Add a property the tool does not declare, with a grounded value (only the schema can tell)."""
    m, j = position
    call = read_messages(row)[m].calls[j]
    known = set(_schema_of(row, call.name).get("properties", {})) | set(call.arguments or {})
    key = _pick(rng, [k for k in UNKNOWN_KEYS if k not in known] or [f"extra_{len(known)}"])
    words = sorted(content_words(str(row.get("question", "")))) or ["detail"]
    arguments = {**(call.arguments or {}), key: _pick(rng, words)}
    out = copy_row(row)
    _set_arguments(out, m, j, arguments)
    return out


def _drop_required_argument_positions(row: Mapping[str, Any]) -> list[Position]:
    out = []
    for m, j, call in _calls(row):
        required = set(_schema_of(row, call.name).get("required", ()))
        present = sorted(call.arguments or {})
        out += [(m.index, j, present.index(key)) for key in sorted(required & set(present))]
    return out


def _drop_required_argument(row: Mapping[str, Any], position: Position, rng: np.random.Generator) -> Row:
    m, j, index = position
    arguments = dict(read_messages(row)[m].calls[j].arguments or {})
    arguments.pop(sorted(arguments)[index])
    out = copy_row(row)
    _set_arguments(out, m, j, arguments)
    return out


def _duplicate_call_positions(row: Mapping[str, Any]) -> list[Position]:
    return [(m.index, j) for m, j, _ in _calls(row)]


def _duplicate_call(row: Mapping[str, Any], position: Position, rng: np.random.Generator) -> Row:
    """Repeat a call (fresh id) and its result right after the originals: one call more than the plan has."""
    m, j = position
    out = copy_row(row)
    messages = out["messages"]
    call = copy.deepcopy(messages[m]["tool_calls"][j])
    ids = {c.id for _, _, c in _calls(row)}
    call["id"] = next(f"{call.get('id')}_dup{n}" for n in range(len(ids) + 1) if f"{call.get('id')}_dup{n}" not in ids)
    messages[m]["tool_calls"].insert(j + 1, call)
    paired = m + 1 + j
    if paired < len(messages) and messages[paired].get("role") == "tool":
        result = {**copy.deepcopy(messages[paired]), "tool_call_id": call["id"]}
        messages.insert(paired + 1, result)
    return out


def _change_call_id_positions(row: Mapping[str, Any]) -> list[Position]:
    return [(m.index, j) for m, j, _ in _calls(row)]


def _change_call_id(row: Mapping[str, Any], position: Position, rng: np.random.Generator) -> Row:
    """Give a call a fresh id its tool result does not carry (the result becomes an orphan)."""
    m, j = position
    ids = {c.id for _, _, c in _calls(row)} | {x.tool_call_id for x in read_messages(row)}
    fresh = next(f"call_{n}" for n in range(int(rng.integers(50, 100)), 10_000) if f"call_{n}" not in ids)
    out = copy_row(row)
    out["messages"][m]["tool_calls"][j]["id"] = fresh
    return out


# --- results and answers ---------------------------------------------------------------------------------


def _render(items: Sequence[tuple[str, str]]) -> str:
    if not items:
        return "No results found."
    return "\n".join(f"**{k}**\ntitle: {title}\ncontent: {text}" for k, (title, text) in enumerate(items, 1))


def _drop_gold_sentence_positions(row: Mapping[str, Any]) -> list[Position]:
    gold = set(supporting_texts(row))
    return [
        (m.index, i)
        for m in read_messages(row)
        if m.role == "tool"
        for i, (title, text) in enumerate(parse_observation(m.content))
        if (title, alnum(text)) in gold
    ]


def _drop_gold_sentence(row: Mapping[str, Any], position: Position, rng: np.random.Generator) -> Row:
    m, i = position
    out = copy_row(row)
    items = parse_observation(out["messages"][m]["content"])
    out["messages"][m]["content"] = _render(items[:i] + items[i + 1 :])
    return out


def _other_entities(row: Mapping[str, Any]) -> list[str]:
    golds = {normalize(a) for a in [row.get("answer", ""), *(row.get("answer_aliases") or ())]}
    titles = {e.title for call in read_plan(row) for e in call.evidence}
    return sorted(t for t in titles if normalize(t) and normalize(t) not in golds)


def _swap_answer_entity_positions(row: Mapping[str, Any]) -> list[Position]:
    messages = read_messages(row)
    last = messages[-1] if messages else None
    if last is None or last.role != "assistant" or last.calls or not _other_entities(row):
        return []
    return [(last.index,)]


def _swap_answer_entity(row: Mapping[str, Any], position: Position, rng: np.random.Generator) -> Row:
    """The final answer becomes another entity of the context (a passage title that is not the answer)."""
    out = copy_row(row)
    out["messages"][position[0]]["content"] = _pick(rng, _other_entities(row))
    return out


def _answer_swapped(row: Mapping[str, Any], m: Msg) -> list[str]:
    """The final turn's reasoning with its answer replaced by each other entity (only where none still states it)."""
    answer = strip_answer(m.content)
    if not normalize(answer):
        return []
    pattern = re.compile(re.escape(answer), re.IGNORECASE)
    out = []
    for entity in _other_entities(row):
        text = pattern.sub(lambda _, entity=entity: entity, m.reasoning)
        if text != m.reasoning and not appears(answer, text):
            out.append(text)
    return out


def _reasoning_other_answer_positions(row: Mapping[str, Any]) -> list[Position]:
    positions = _swap_answer_entity_positions(row)
    return [p for p in positions if _answer_swapped(row, read_messages(row)[p[0]])]


def _reasoning_other_answer(row: Mapping[str, Any], position: Position, rng: np.random.Generator) -> Row:
    """The final turn's reasoning concludes another context entity while its content keeps the answer."""
    out = copy_row(row)
    out["messages"][position[0]]["reasoning"] = _pick(rng, _answer_swapped(row, read_messages(row)[position[0]]))
    return out


def _leak_answer_positions(row: Mapping[str, Any]) -> list[Position]:
    answer = str(row.get("answer", ""))
    if normalize(answer) in YES_NO or not normalize(answer):
        return []
    for m in read_messages(row):
        if m.role in ("user", "tool") and appears(answer, m.content):
            return []
        if m.role == "assistant":
            return [(m.index,)]
    return []


def _leak_answer(row: Mapping[str, Any], position: Position, rng: np.random.Generator) -> Row:
    """The first reasoning guesses the answer before any result shows it (foreknowledge)."""
    out = copy_row(row)
    message = out["messages"][position[0]]
    message["reasoning"] = f"{message.get('reasoning') or ''} I expect the answer to be {row['answer']}.".strip()
    return out


# --- reasoning -------------------------------------------------------------------------------------------


def _reasoning_other_tool_positions(row: Mapping[str, Any]) -> list[Position]:
    offered = set(offered_tools(row))
    return [
        (m.index,)
        for m in read_messages(row)
        if m.role == "assistant"
        and any(names(m.reasoning, c.name) for c in m.calls)
        and offered - {c.name for c in m.calls}
    ]


def _reasoning_other_tool(row: Mapping[str, Any], position: Position, rng: np.random.Generator) -> Row:
    """The tool turn's reasoning names another offered tool instead of every tool it calls."""
    message = read_messages(row)[position[0]]
    called = {c.name for c in message.calls}
    other = _pick(rng, sorted(set(offered_tools(row)) - called))
    text = message.reasoning
    for name in sorted(called, key=len, reverse=True):
        text = _replace_name(text, name, other)
    out = copy_row(row)
    out["messages"][position[0]]["reasoning"] = text
    return out


def _owed(row: Mapping[str, Any]) -> dict[int, list[str]]:
    """Faulty names each assistant turn must reflect on (the turn after one holding failed calls)."""
    messages = read_messages(row)
    failures = failed_calls_by_turn(messages, judged_calls(row))
    turns = [m.index for m in messages if m.role == "assistant"]
    return {
        turns[t + 1]: [f.faulty for f in failures[index]] for t, index in enumerate(turns[:-1]) if failures.get(index)
    }


def _delete_reflection_positions(row: Mapping[str, Any]) -> list[Position]:
    messages = read_messages(row)
    return [
        (index,)
        for index, faulty in sorted(_owed(row).items())
        if states_failure(messages[index].reasoning) and any(names(messages[index].reasoning, f) for f in faulty)
    ]


def _delete_reflection(row: Mapping[str, Any], position: Position, rng: np.random.Generator) -> Row:
    """Drop every sentence stating a failure or naming what was at fault; the turn keeps only its plan."""
    message = read_messages(row)[position[0]]
    faulty = _owed(row).get(position[0], [])
    sentences = re.split(r"(?<=[.!?:;])\s+", message.reasoning)
    kept = [s for s in sentences if not states_failure(s) and not any(names(s, f) for f in faulty)]
    if not kept:
        kept = [f"Next I call {' and '.join(c.name for c in message.calls) or 'the search'}."]
    out = copy_row(row)
    out["messages"][position[0]]["reasoning"] = " ".join(kept)
    return out


def _fake_reflection_positions(row: Mapping[str, Any]) -> list[Position]:
    return _delete_reflection_positions(row)


def _fake_reflection(row: Mapping[str, Any], position: Position, rng: np.random.Generator) -> Row:
    """The turn after a failure names what was at fault only to deny the failure, then calls its tools."""
    message = read_messages(row)[position[0]]
    faulty = ", ".join(f"`{f}`" for f in _owed(row).get(position[0], []))
    tools = " and ".join(f"`{c.name}`" for c in message.calls) or "the search"
    out = copy_row(row)
    out["messages"][position[0]]["reasoning"] = (
        f"There was no problem with {faulty}; the results were not wrong. Next I call {tools}."
    )
    return out


# --- turns -----------------------------------------------------------------------------------------------


def _drop_tool_message_positions(row: Mapping[str, Any]) -> list[Position]:
    return [(m.index,) for m in read_messages(row) if m.role == "tool"]


def _drop_tool_message(row: Mapping[str, Any], position: Position, rng: np.random.Generator) -> Row:
    out = copy_row(row)
    del out["messages"][position[0]]
    return out


def _rounds(row: Mapping[str, Any]) -> list[tuple[int, int]]:
    """[start, stop) of every round: an assistant turn with calls and the tool messages right after it."""
    messages = read_messages(row)
    spans = []
    for m in messages:
        if m.role == "assistant" and m.calls:
            stop = m.index + 1
            while stop < len(messages) and messages[stop].role == "tool":
                stop += 1
            spans.append((m.index, stop))
    return spans


def _round_key(messages: Sequence[Msg], span: tuple[int, int]) -> tuple[Any, ...]:
    head = messages[span[0]]
    return tuple(c.name for c in head.calls), tuple(m.content for m in messages[span[0] + 1 : span[1]])


def _swap_rounds_positions(row: Mapping[str, Any]) -> list[Position]:
    messages = read_messages(row)
    spans = _rounds(row)
    return [
        (a, b)
        for a in range(len(spans))
        for b in range(a + 1, len(spans))
        if _round_key(messages, spans[a]) != _round_key(messages, spans[b])
    ]


def _swap_rounds(row: Mapping[str, Any], position: Position, rng: np.random.Generator) -> Row:
    """Two rounds (a tool turn with its results) trade places: the calls or results leave the planned order."""
    spans = _rounds(row)
    (s1, e1), (s2, e2) = spans[position[0]], spans[position[1]]
    out = copy_row(row)
    m = out["messages"]
    out["messages"] = m[:s1] + m[s2:e2] + m[e1:s2] + m[s1:e1] + m[e2:]
    return out


def _kind(m: Msg) -> str:
    return f"{m.role}:{'call' if m.calls else 'text'}"


def _swap_adjacent_positions(row: Mapping[str, Any]) -> list[Position]:
    messages = read_messages(row)
    return [
        (i,)
        for i in range(1, len(messages) - 1)
        if _kind(messages[i]) != _kind(messages[i + 1])
        or (messages[i].role == "tool" and messages[i].tool_call_id != messages[i + 1].tool_call_id)
    ]


def _swap_adjacent(row: Mapping[str, Any], position: Position, rng: np.random.Generator) -> Row:
    """Two neighbouring messages of different kinds (or two results of different calls) trade places."""
    i = position[0]
    out = copy_row(row)
    m = out["messages"]
    m[i], m[i + 1] = m[i + 1], m[i]
    return out


OPERATORS: tuple[CorruptionOperator, ...] = (
    CorruptionOperator(
        "swap_tool_distractor",
        "a call names an offered tool other than the planned one (plan: tool consistency)",
        _swap_tool_distractor_positions,
        _swap_tool_distractor,
    ),
    CorruptionOperator(
        "swap_tool_unoffered",
        "a call names a sibling tool that was not offered (schema: tool bank)",
        _swap_tool_unoffered_positions,
        _swap_tool_unoffered,
    ),
    CorruptionOperator(
        "ungrounded_argument",
        "a required argument holds words seen nowhere in the dialogue (grounding)",
        _ungrounded_argument_positions,
        _ungrounded_argument,
    ),
    CorruptionOperator(
        "swap_argument_entity",
        "a string argument names another entity the dialogue has shown instead of the planned value (grounding)",
        _swap_argument_entity_positions,
        _swap_argument_entity,
    ),
    CorruptionOperator(
        "add_unknown_argument",
        "a call passes a property its tool does not declare (schema: additionalProperties false)",
        _add_unknown_argument_positions,
        _add_unknown_argument,
    ),
    CorruptionOperator(
        "drop_required_argument",
        "a call omits a required argument (schema)",
        _drop_required_argument_positions,
        _drop_required_argument,
    ),
    CorruptionOperator(
        "drop_gold_sentence",
        "a result loses a gold sentence: it no longer equals the planned observation (evidence)",
        _drop_gold_sentence_positions,
        _drop_gold_sentence,
    ),
    CorruptionOperator(
        "swap_answer_entity",
        "the final answer is another context entity, not the seed answer or an alias (answer)",
        _swap_answer_entity_positions,
        _swap_answer_entity,
    ),
    CorruptionOperator(
        "reasoning_other_tool",
        "a tool turn's reasoning names another tool than the ones it calls (judge: think-action)",
        _reasoning_other_tool_positions,
        _reasoning_other_tool,
    ),
    CorruptionOperator(
        "delete_reflection",
        "the turn after a failed call no longer states the failure or names what was at fault (judge: reflection)",
        _delete_reflection_positions,
        _delete_reflection,
    ),
    CorruptionOperator(
        "fake_reflection",
        "the turn after a failure names what was at fault but denies the failure (judge: reflection)",
        _fake_reflection_positions,
        _fake_reflection,
    ),
    CorruptionOperator(
        "drop_tool_message",
        "a call is left without its result (pairing)",
        _drop_tool_message_positions,
        _drop_tool_message,
    ),
    CorruptionOperator(
        "swap_rounds",
        "two rounds with different calls or results trade places (plan order or evidence)",
        _swap_rounds_positions,
        _swap_rounds,
    ),
    CorruptionOperator(
        "swap_adjacent",
        "two neighbouring messages of different kinds trade places (structure or pairing)",
        _swap_adjacent_positions,
        _swap_adjacent,
    ),
    CorruptionOperator(
        "change_call_id",
        "a call's id no longer matches its result's tool_call_id (pairing)",
        _change_call_id_positions,
        _change_call_id,
    ),
    CorruptionOperator(
        "reasoning_other_answer",
        "the answer turn's reasoning concludes another entity than the answer it gives (judge: think-answer)",
        _reasoning_other_answer_positions,
        _reasoning_other_answer,
    ),
    CorruptionOperator(
        "leak_answer",
        "the first reasoning names the answer before any result or user turn shows it (leak: foreknowledge)",
        _leak_answer_positions,
        _leak_answer,
    ),
    CorruptionOperator(
        "duplicate_call",
        "a call and its result are repeated: one call more than the plan (plan)",
        _duplicate_call_positions,
        _duplicate_call,
    ),
)
OPERATORS_BY_NAME: dict[str, CorruptionOperator] = {op.name: op for op in OPERATORS}


def applicable_actions(
    row: Mapping[str, Any], operators: Sequence[CorruptionOperator] = OPERATORS
) -> list[tuple[str, Position]]:
    """Every (operator name, position) applicable to `row`, in a fixed order."""
    return [(op.name, position) for op in operators for position in op.applicable(row)]


def apply_action(row: Mapping[str, Any], action: tuple[str, Position], rng: np.random.Generator) -> Row:
    """Apply one (operator name, position) action."""
    name, position = action
    return OPERATORS_BY_NAME[name].apply(row, position, rng)
