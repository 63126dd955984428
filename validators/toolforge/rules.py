"""ToolForge's rule layers: pure checks of a dialogue row's untrusted `messages` against its trusted plan and seed.

Every layer is `check_<layer>(row) -> list[str]` (reasons; empty means pass) built on a `Report` that also counts
the units it looked at (messages, calls, turns) and the units that failed, for a per-layer pass fraction. A reason
is a stable code and the detail naming the message, call or value (`unexpected_turn: message 3: expected user turn
1`). Checks read messages through `read_messages`, which turns any corrupted value into empty fields, and
`run_report` turns an unexpected exception into an `unreadable_row` reason, so no layer ever raises.

Text is compared after SQuAD normalisation (lowercase, no punctuation, no articles, single spaces); a phrase
"appears" in a text when its normalised tokens occur contiguously in the text's normalised tokens.
"""

from __future__ import annotations

import json
import re
import string
from collections import Counter
from collections.abc import Callable, Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from synth.core.records import check_reason_code
from synth.validators.toolforge.model import FAILED_KINDS, PlannedCall, parse_observation, render_observation
from synth.validators.toolforge.records import plan_calls_from_rows

SHOWN = 6
YES_NO = frozenset({"yes", "no"})
_STOPWORD_TEXT = (
    "a an the of in on at to for from by with about as and or but is are was were be been being do does did "
    "what which who whom whose when where why how that this these those it its his her their there than then "
    "into onto over under between both either neither same also any each find search look up information "
    "s i me my we our you your he she they them "
    # conversational filler of argument values ("the facts the question asks about"): no entity content
    "question questions ask asks asked say says said fact facts detail details"
)
STOPWORDS = frozenset(_STOPWORD_TEXT.split())
_PUNCT = str.maketrans("", "", string.punctuation + "“”‘’–—")
_ARTICLES = re.compile(r"\b(a|an|the)\b")
_NOT_ALNUM = re.compile(r"[\W_]+")


def normalize(text: str) -> str:
    """SQuAD answer normalisation: lowercase, strip punctuation and articles, collapse spaces."""
    text = _ARTICLES.sub(" ", str(text).lower().translate(_PUNCT))
    return " ".join(text.split())


def appears(phrase: str, text: str) -> bool:
    """Whether the normalised `phrase` occurs as whole tokens in the normalised `text` (never for empty phrases)."""
    needle = normalize(phrase)
    return bool(needle) and f" {needle} " in f" {normalize(text)} "


def content_words(text: str, *, joined: bool = True) -> set[str]:
    """Non-stopword tokens of `text`, split at punctuation ("co-wrote" gives co, wrote) and, when `joined`,
    also with punctuation deleted as SQuAD does (cowrote)."""
    split = normalize(re.sub(r"[^\w\s]", " ", str(text)))
    words = set(split.split()) | (set(normalize(text).split()) if joined else set())
    return {stem(w) for w in words - STOPWORDS}


def stem(word: str) -> str:
    """A light suffix stripper so that inflections ground each other (owner/owned, wedding/wed, pams/pam)."""
    for suffix in ("ings", "ing", "ers", "er", "ed", "es", "s"):
        if word.endswith(suffix) and len(word) - len(suffix) >= 3:
            return word[: -len(suffix)]
    return word


def alnum(text: str) -> str:
    """Lowercased letters and digits only (ToolForge's sentence comparison)."""
    return _NOT_ALNUM.sub("", str(text).lower())


def names(text: str, name: str) -> bool:
    """Whether `text` names the identifier `name` (case-insensitive, not as part of a longer identifier)."""
    return bool(name) and re.search(rf"(?<![\w]){re.escape(name)}(?![\w])", str(text), re.IGNORECASE) is not None


# --- reading untrusted messages ---------------------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class Call:
    """A tool call as written; `arguments` is None when they are not a JSON object."""

    id: str
    name: str
    arguments: dict[str, Any] | None
    raw: str


@dataclass(frozen=True, slots=True)
class Msg:
    """One message with every field coerced to its type (missing or corrupted values become empty)."""

    index: int
    role: str
    content: str
    reasoning: str
    calls: tuple[Call, ...]
    tool_call_id: str
    name: str


def _text(value: Any) -> str:
    if value is None:
        return ""
    return value if isinstance(value, str) else str(value)


def _call(value: Any) -> Call:
    value = value if isinstance(value, Mapping) else {}
    function = value.get("function")
    function = function if isinstance(function, Mapping) else {}
    raw = function.get("arguments")
    if isinstance(raw, Mapping):
        arguments: Any = dict(raw)
        raw = json.dumps(arguments, sort_keys=True)
    else:
        raw = _text(raw)
        try:
            arguments = json.loads(raw)
        except (TypeError, ValueError):
            arguments = None
    return Call(
        _text(value.get("id")),
        _text(function.get("name")),
        arguments if isinstance(arguments, dict) else None,
        raw,
    )


def read_messages(row: Mapping[str, Any]) -> list[Msg]:
    """The row's messages with every field coerced; anything unreadable becomes an empty field."""
    values = row.get("messages")
    if not isinstance(values, Sequence) or isinstance(values, str):
        return []
    out = []
    for index, value in enumerate(values):
        value = value if isinstance(value, Mapping) else {}
        calls = value.get("tool_calls")
        calls = calls if isinstance(calls, Sequence) and not isinstance(calls, str) else ()
        out.append(
            Msg(
                index=index,
                role=_text(value.get("role")),
                content=_text(value.get("content")),
                reasoning=_text(value.get("reasoning")),
                calls=tuple(_call(c) for c in calls),
                tool_call_id=_text(value.get("tool_call_id")),
                name=_text(value.get("name")),
            )
        )
    return out


def read_plan(row: Mapping[str, Any]) -> tuple[PlannedCall, ...]:
    """The trusted planned calls."""
    return plan_calls_from_rows(row.get("plan") or ())


def offered_tools(row: Mapping[str, Any]) -> dict[str, Mapping[str, Any]]:
    """The `parameters` schema of every offered tool, by name."""
    tools: dict[str, Mapping[str, Any]] = {}
    for text in row.get("tools") or ():
        value = json.loads(text) if isinstance(text, str) else text
        function = value.get("function", value)
        tools[function["name"]] = function.get("parameters") or {"type": "object", "properties": {}}
    return tools


def flat_calls(messages: Sequence[Msg]) -> list[tuple[Msg, Call]]:
    """Every assistant call in dialogue order, with its message."""
    return [(m, c) for m in messages if m.role == "assistant" for c in m.calls]


def tool_messages(messages: Sequence[Msg]) -> list[Msg]:
    """Every `tool` message in order."""
    return [m for m in messages if m.role == "tool"]


def answer_turns(messages: Sequence[Msg]) -> list[Msg]:
    """Assistant messages without calls (the answer turns), in order."""
    return [m for m in messages if m.role == "assistant" and not m.calls]


def strip_answer(content: str) -> str:
    """An answer turn's content without an optional `<answer>` wrapper."""
    match = re.search(r"<answer>(.*?)</answer>", content, re.DOTALL)
    return (match.group(1) if match else content).strip()


def supporting_texts(row: Mapping[str, Any]) -> list[tuple[str, str]]:
    """(title, alnum text) of every supporting fact."""
    return [(s["title"], alnum(s["text"])) for s in row.get("supporting") or ()]


def string_values(value: Any) -> Iterator[str]:
    """Every string inside an argument value (itself, list items, nested values)."""
    if isinstance(value, str):
        yield value
    elif isinstance(value, Mapping):
        for item in value.values():
            yield from string_values(item)
    elif isinstance(value, list):
        for item in value:
            yield from string_values(item)


# --- reports ---------------------------------------------------------------------------------------------


def reason(code: str, detail: str = "") -> str:
    """A verdict reason: the stable `code`, then `: detail` when there is one (see `synth.core.records.Verdict`)."""
    check_reason_code(code)
    return f"{code}: {detail}" if detail else code


@dataclass(slots=True)
class Report:
    """Reasons of one layer on one row, with the units checked and the units that failed."""

    units: int = 0
    failed: set[int] = field(default_factory=set)
    reasons: list[str] = field(default_factory=list)

    def fail(self, unit: int, code: str, detail: str = "") -> None:
        """Count `unit` as failed with a stable reason `code` and the `detail` naming the message, call or value."""
        self.failed.add(unit)
        self.reasons.append(reason(code, detail))

    @property
    def pass_fraction(self) -> float:
        """Share of units without a problem (0 when the layer failed without counting units)."""
        if not self.units:
            return 0.0 if self.reasons else 1.0
        return 1.0 - min(len(self.failed), self.units) / self.units


def run_report(check: Callable[[Mapping[str, Any]], Report], row: Mapping[str, Any]) -> Report:
    """Run one layer; an exception on a corrupted row becomes a failing reason instead of propagating."""
    try:
        return check(row)
    except Exception as error:  # corrupted rows must fail, never raise
        return Report(units=1, failed={0}, reasons=[reason("unreadable_row", f"{type(error).__name__}: {error}"[:200])])


# --- structure -------------------------------------------------------------------------------------------


def _rounds_per_turn(plan: Sequence[PlannedCall], turns: int) -> list[int]:
    rounds: list[set[int]] = [set() for _ in range(turns)]
    for call in plan:
        if 0 <= call.user_turn < turns:
            rounds[call.user_turn].add(call.round)
    return [len(r) for r in rounds]


def _structure_turn(messages: Sequence[Msg], i: int, turn: int, user: str, rounds: int, report: Report) -> int:
    """Check one user turn from message `i`; return the index after it, or -1 after the first problem."""
    n = len(messages)
    if i >= n or messages[i].role != "user":
        report.fail(min(i, n), "unexpected_turn", f"message {i}: expected user turn {turn}")
        return -1
    if messages[i].content != user:
        report.fail(i, "user_turn_changed", f"message {i}: user turn {turn} differs from the plan")
    i += 1
    seen = 0
    while i < n and messages[i].role == "assistant" and messages[i].calls:
        head = messages[i]
        if head.content.strip():
            report.fail(i, "tool_turn_content", f"message {i}: a tool turn has content besides its calls")
        if not head.reasoning.strip():
            report.fail(i, "missing_reasoning", f"message {i}: a tool turn has no reasoning")
        for j in range(1, len(head.calls) + 1):
            if i + j >= n or messages[i + j].role != "tool":
                report.fail(
                    min(i + j, n),
                    "missing_tool_result",
                    f"message {i + j}: expected the tool result of call {j - 1} of message {i}",
                )
                return -1
        i += 1 + len(head.calls)
        seen += 1
    if seen != rounds:
        report.fail(i, "round_count", f"user turn {turn}: {seen} tool rounds, the plan has {rounds}")
    if i >= n or messages[i].role != "assistant" or messages[i].calls:
        report.fail(min(i, n), "missing_answer_turn", f"message {i}: expected the answer turn of user turn {turn}")
        return -1
    if not messages[i].content.strip() or not messages[i].reasoning.strip():
        report.fail(i, "empty_answer_turn", f"message {i}: the answer turn lacks content or reasoning")
    return i + 1


def structure_report(row: Mapping[str, Any]) -> Report:
    """Role sequence: system, then per user turn its planned rounds (calls, then their results) and an answer."""
    messages = read_messages(row)
    users = list(row.get("user_turns") or ())
    rounds = _rounds_per_turn(read_plan(row), len(users))
    report = Report(units=max(len(messages), 1))
    if not messages or messages[0].role != "system":
        report.fail(0, "missing_system", "message 0: expected the system message")
        return report
    i = 1
    for turn, user in enumerate(users):
        i = _structure_turn(messages, i, turn, user, rounds[turn], report)
        if i < 0:
            return report
    if i < len(messages):
        report.fail(i, "trailing_messages", f"message {i}: {len(messages) - i} message(s) after the last answer")
    return report


# --- pairing ---------------------------------------------------------------------------------------------


def pairing_report(row: Mapping[str, Any]) -> Report:
    """Every call answered by exactly one tool message (same id and name) right after its turn, in call order."""
    messages = read_messages(row)
    calls = flat_calls(messages)
    report = Report(units=max(len(calls), 1))
    ids = Counter(c.id for _, c in calls)
    answered = Counter(m.tool_call_id for m in tool_messages(messages))
    expected: dict[int, tuple[int, Call]] = {}  # tool message index -> (call number, call)
    number = 0
    for m in messages:
        for j, call in enumerate(m.calls if m.role == "assistant" else ()):
            expected[m.index + 1 + j] = (number, call)
            if not call.id or ids[call.id] > 1:
                report.fail(number, "bad_call_id", f"call {number}: id {call.id!r} is empty or not unique")
            if answered[call.id] != 1:
                report.fail(
                    number,
                    "result_count",
                    f"call {number}: id {call.id!r} answered by {answered[call.id]} tool messages",
                )
            number += 1
    for m in tool_messages(messages):
        slot = expected.get(m.index)
        if slot is None:
            report.fail(
                number, "orphan_result", f"message {m.index}: tool message not answering a call of the turn before it"
            )
            continue
        k, call = slot
        if m.tool_call_id != call.id or m.name != call.name:
            where = f"message {m.index}: tool result ({m.tool_call_id!r}, {m.name!r}) out of order for call {k}"
            report.fail(k, "result_out_of_order", where)
    for index in expected:
        if index >= len(messages) or messages[index].role != "tool":
            k = expected[index][0]
            report.fail(k, "missing_tool_result", f"call {k}: no tool result right after its turn")
    return report


# --- schema ----------------------------------------------------------------------------------------------


def strict_parameters(parameters: Mapping[str, Any]) -> dict[str, Any]:
    """A tool's parameter schema with `additionalProperties: false` at the top level."""
    return {**parameters, "type": "object", "additionalProperties": False}


def schema_report(row: Mapping[str, Any]) -> Report:
    """Every call names an offered tool and its arguments validate against that tool's strict parameter schema."""
    import jsonschema

    tools = offered_tools(row)
    validators = {name: jsonschema.Draft202012Validator(strict_parameters(p)) for name, p in tools.items()}
    calls = flat_calls(read_messages(row))
    report = Report(units=max(len(calls), 1))
    for k, (_, call) in enumerate(calls):
        if call.name not in validators:
            report.fail(k, "unoffered_tool", f"call {k}: tool {call.name!r} was not offered")
            continue
        if call.arguments is None:
            report.fail(k, "arguments_not_object", f"call {k}: arguments are not a JSON object")
            continue
        errors = sorted(validators[call.name].iter_errors(call.arguments), key=lambda e: list(e.absolute_path))
        for error in errors[:2]:
            where = "/".join(str(p) for p in error.absolute_path) or "<root>"
            report.fail(k, "schema_violation", f"call {k} ({call.name}): {where}: {error.message}"[:200])
    return report


# --- grounding -------------------------------------------------------------------------------------------


def planned_call_for(k: int, call: Call, plan: Sequence[PlannedCall]) -> PlannedCall | None:
    """The planned call a written call realises: by id when it names one, else by position."""
    for planned in plan:
        if planned.call_id == call.id:
            return planned
    return plan[k] if k < len(plan) else None


def _options(schema: Any) -> set[str]:
    """Normalised enum/const values and the description of a property schema (documented options)."""
    if not isinstance(schema, Mapping):
        return set()
    values = [*schema.get("enum", ()), schema.get("const", "")]
    items = schema.get("items")
    if isinstance(items, Mapping):
        values += list(items.get("enum", ()))
    return {normalize(v) for v in values if isinstance(v, str) and v}


def _grounded(value: str, context: set[str], options: set[str]) -> bool:
    return normalize(value) in options or content_words(value, joined=False) <= context


def _exempt(planned: PlannedCall | None, key: str, value: Any) -> bool:
    """The plan's own faulty value of a failed call (the plan authored the mistake, so it needs no grounding)."""
    return (
        planned is not None
        and planned.kind in FAILED_KINDS
        and planned.faulty == key
        and planned.arguments.get(key) == value
    )


def observed_texts(messages: Sequence[Msg], plan: Sequence[PlannedCall], *, before: int) -> list[str]:
    """What the results before message `before` showed: each result's text, plus every passage's observed
    sentences joined in passage order (an answer may span two sentences of one passage)."""
    order = {alnum(e.text): e.sentence for call in plan for e in call.evidence}
    texts: list[str] = []
    by_title: dict[str, dict[str, str]] = {}
    for m in messages[:before]:
        if m.role == "tool":
            texts.append(m.content)
            for title, text in parse_observation(m.content):
                by_title.setdefault(title, {})[alnum(text)] = text
    for items in by_title.values():
        texts.append(" ".join(items[key] for key in sorted(items, key=lambda key: order.get(key, 1 << 30))))
    return texts


def final_answer_supported(row: Mapping[str, Any], messages: Sequence[Msg], plan: Sequence[PlannedCall]) -> bool:
    """The final answer appears in an observed tool result, or is yes/no for a comparison question."""
    answers = answer_turns(messages)
    if not answers:
        return False
    final = strip_answer(answers[-1].content)
    if normalize(final) in YES_NO:
        return str(row.get("qtype", "")) == "comparison"
    return any(appears(final, text) for text in observed_texts(messages, plan, before=answers[-1].index))


def _same_value(value: Any, planned: Any) -> bool:
    if isinstance(planned, str):
        return isinstance(value, str) and normalize(value) == normalize(planned)
    if isinstance(planned, list) and isinstance(value, list) and len(value) == len(planned):
        return all(_same_value(v, p) for v, p in zip(value, planned, strict=True))
    return value == planned


def _unplanned_values(k: int, call: Call, planned: PlannedCall | None) -> list[str]:
    """Reasons the call's values differ from those its planned call sets (the plan's grounded choices)."""
    if planned is None or planned.tool != call.name:
        return []
    arguments = call.arguments or {}
    return [
        f"call {k} ({call.name}): {key}={arguments.get(key)!r} is not the planned value {value!r}"[:200]
        for key, value in planned.arguments.items()
        if key in arguments and not _same_value(arguments[key], value)
    ]


def grounding_report(row: Mapping[str, Any]) -> Report:
    """Every string argument is grounded in the user turns or earlier results (or a documented option), the
    values the plan sets are realised (SQuAD-normalised), and the final answer was observed."""
    messages = read_messages(row)
    plan = read_plan(row)
    tools = offered_tools(row)
    context = content_words(_text(row.get("question")))
    report = Report(units=1)
    k = 0
    for m in messages:
        if m.role in ("user", "tool"):
            context |= content_words(m.content)
        for call in m.calls if m.role == "assistant" else ():
            planned = planned_call_for(k, call, plan)
            properties = tools.get(call.name, {}).get("properties", {})
            for key, value in (call.arguments or {}).items():
                options = _options(properties.get(key) if isinstance(properties, Mapping) else None)
                for text in string_values(value):
                    report.units += 1
                    if not _exempt(planned, key, value) and not _grounded(text, context, options):
                        detail = f"call {k} ({call.name}): {key}={text!r} is not grounded"[:200]
                        report.fail(report.units, "ungrounded_argument", detail)
            for reason in _unplanned_values(k, call, planned):
                report.units += 1
                report.fail(report.units, "unplanned_value", reason)
            k += 1
    if not final_answer_supported(row, messages, plan):
        report.fail(
            0, "answer_unobserved", "the final answer is in no observed tool result (nor a yes/no comparison answer)"
        )
    return report


# --- answer ----------------------------------------------------------------------------------------------


def answer_report(row: Mapping[str, Any]) -> Report:
    """The last answer turn equals the seed answer or an alias; earlier answer turns equal `turn_answers`."""
    messages = read_messages(row)
    answers = answer_turns(messages)
    expected = list(row.get("turn_answers") or ())
    report = Report(units=max(len(expected), 1))
    if not messages or messages[-1].role != "assistant" or messages[-1].calls:
        report.fail(0, "no_final_answer", "the dialogue does not end with an answer turn")
        return report
    if len(answers) != len(expected):
        report.fail(0, "answer_turn_count", f"{len(answers)} answer turns, the plan has {len(expected)}")
    for k, (turn, gold) in enumerate(zip(answers[:-1], expected[:-1], strict=False)):
        if normalize(strip_answer(turn.content)) != normalize(gold):
            report.fail(k, "wrong_turn_answer", f"answer turn {k}: {turn.content[:60]!r} is not {gold!r}")
    final = normalize(strip_answer(answers[-1].content))
    golds = {normalize(a) for a in [row.get("answer", ""), *(row.get("answer_aliases") or ())] if a}
    if final not in golds:
        detail = f"final answer {answers[-1].content[:60]!r} is not the seed answer"
        report.fail(len(expected) - 1, "wrong_final_answer", detail)
    return report


# --- evidence --------------------------------------------------------------------------------------------


def evidence_report(row: Mapping[str, Any]) -> Report:
    """Tool results equal the planned observations, and the gold calls' results cover every supporting fact."""
    results = tool_messages(read_messages(row))
    plan = read_plan(row)
    report = Report(units=max(len(plan), 1) + 1)
    if len(results) != len(plan):
        report.fail(0, "observation_count", f"{len(results)} tool results, the plan has {len(plan)} calls")
    shown: set[tuple[str, str]] = set()
    for k, (message, planned) in enumerate(zip(results, plan, strict=False)):
        if message.content.strip() != render_observation(planned.evidence).strip():
            detail = f"message {message.index}: tool result differs from the planned observation of call {k}"
            report.fail(k, "observation_changed", detail)
        if planned.kind == "gold":
            shown |= {(title, alnum(text)) for title, text in parse_observation(message.content)}
    missing = [title for title, text in supporting_texts(row) if (title, text) not in shown]
    if missing:
        report.fail(len(plan), "missing_support", f"supporting facts not shown by a gold call: {missing[:3]}")
    return report


# --- plan realisation ------------------------------------------------------------------------------------


def _retry(plan: Sequence[PlannedCall], k: int, tool: str) -> int | None:
    """Position of the first later-round call with `tool` after failed call `k`."""
    failed = plan[k]
    for j in range(k + 1, len(plan)):
        if (plan[j].user_turn, plan[j].round) > (failed.user_turn, failed.round) and plan[j].tool == tool:
            return j
    return None


def _check_wrong_arguments(k: int, failed: Call, retry: Call, required: set[str], faulty: str, report: Report) -> None:
    if failed.name != retry.name:
        report.fail(k, "retry_tool", f"call {k}: wrong-arguments failure and retry use different tools")
    first, second = failed.arguments or {}, retry.arguments or {}
    if set(first) != set(second):
        report.fail(k, "retry_arguments", f"call {k}: failure and retry pass different argument names")
    changed = {key for key in set(first) | set(second) if first.get(key) != second.get(key)}
    if faulty not in changed or faulty not in required:
        report.fail(
            k, "faulty_unchanged", f"call {k}: the faulty argument {faulty!r} is not a changed required argument"
        )
    if changed - required:
        report.fail(
            k, "retry_optional_change", f"call {k}: the retry changes optional arguments {sorted(changed - required)}"
        )


def plan_report(row: Mapping[str, Any]) -> Report:
    """Calls name the planned tools in order and per round; failures are repaired as the case script says."""
    messages = read_messages(row)
    plan = read_plan(row)
    tools = offered_tools(row)
    calls = [c for _, c in flat_calls(messages)]
    report = Report(units=max(len(plan), 1))
    if [c.name for c in calls] != [p.tool for p in plan]:
        detail = f"called tools {[c.name for c in calls][:8]} differ from the plan {[p.tool for p in plan][:8]}"
        report.fail(0, "tool_sequence", detail)
    sizes = [len(m.calls) for m in messages if m.role == "assistant" and m.calls]
    planned_sizes = list(Counter((p.user_turn, p.round) for p in plan).values())
    if sizes != planned_sizes:
        report.fail(0, "round_sizes", f"calls per round {sizes} differ from the plan {planned_sizes}")
    for k, failed in enumerate(plan):
        if failed.kind not in ("wrong_arguments", "wrong_tool"):
            continue
        j = _retry(plan, k, failed.tool if failed.kind == "wrong_arguments" else failed.gold_tool)
        if j is None or j >= len(calls) or k >= len(calls):
            report.fail(k, "missing_retry", f"call {k}: the {failed.kind} failure has no written retry")
        elif failed.kind == "wrong_tool" and (calls[j].name != failed.gold_tool or calls[k].name == failed.gold_tool):
            report.fail(k, "retry_tool", f"call {k}: the wrong-tool failure is not retried with {failed.gold_tool}")
        elif failed.kind == "wrong_arguments":
            required = set(tools.get(calls[k].name, {}).get("required", ()))
            _check_wrong_arguments(k, calls[k], calls[j], required, failed.faulty, report)
    return report


# --- leak ------------------------------------------------------------------------------------------------


def _assistant_texts(m: Msg) -> Iterator[str]:
    yield m.reasoning
    yield m.content
    for call in m.calls:
        if call.arguments is None:
            yield call.raw
        else:
            yield from string_values(call.arguments)


def leak_report(row: Mapping[str, Any]) -> Report:
    """Failed or misleading results hold no gold sentence; no assistant text names the answer before it is seen."""
    messages = read_messages(row)
    plan = read_plan(row)
    gold = [text for _, text in supporting_texts(row) if text]
    report = Report(units=max(len(messages), 1))
    for message, planned in zip(tool_messages(messages), plan, strict=False):
        if planned.kind in FAILED_KINDS or planned.mode == "misleading":
            body = alnum(message.content)
            if any(text in body for text in gold):
                detail = f"message {message.index}: a {planned.kind} result holds a gold sentence"
                report.fail(message.index, "gold_in_failure", detail)
    answer = _text(row.get("answer"))
    if normalize(answer) in YES_NO or not normalize(answer):
        return report
    final = answer_turns(messages)[-1].index if answer_turns(messages) else -1
    for m in messages:
        if m.role == "user" and appears(answer, m.content):
            break
        if m.role == "tool" and any(appears(answer, t) for t in observed_texts(messages, plan, before=m.index + 1)):
            break
        if m.role == "assistant" and m.index != final and any(appears(answer, t) for t in _assistant_texts(m)):
            detail = f"message {m.index}: names the answer before any user turn or result shows it"
            report.fail(m.index, "answer_foreknown", detail)
    return report


LAYER_REPORTS: dict[str, Callable[[Mapping[str, Any]], Report]] = {
    "structure": structure_report,
    "pairing": pairing_report,
    "schema": schema_report,
    "grounding": grounding_report,
    "answer": answer_report,
    "evidence": evidence_report,
    "plan": plan_report,
    "leak": leak_report,
}
"""The rule layers in the order they run."""


def check_structure(row: Mapping[str, Any]) -> list[str]:
    """Reasons the role sequence breaks the conventions or the plan's turn and round counts."""
    return run_report(structure_report, row).reasons


def check_pairing(row: Mapping[str, Any]) -> list[str]:
    """Reasons a call and its tool result are not paired one to one, in order."""
    return run_report(pairing_report, row).reasons


def check_schema(row: Mapping[str, Any]) -> list[str]:
    """Reasons a call names an unoffered tool or passes arguments its schema rejects."""
    return run_report(schema_report, row).reasons


def check_grounding(row: Mapping[str, Any]) -> list[str]:
    """Reasons an argument is not grounded in what the dialogue has shown or differs from the value the plan
    sets, or the final answer was never observed."""
    return run_report(grounding_report, row).reasons


def check_answer(row: Mapping[str, Any]) -> list[str]:
    """Reasons an answer turn differs from the seed answer or the planned turn answers."""
    return run_report(answer_report, row).reasons


def check_evidence(row: Mapping[str, Any]) -> list[str]:
    """Reasons the tool results differ from the plan or miss a supporting fact."""
    return run_report(evidence_report, row).reasons


def check_plan(row: Mapping[str, Any]) -> list[str]:
    """Reasons the calls do not realise the plan's tools, rounds and repairs."""
    return run_report(plan_report, row).reasons


def check_leak(row: Mapping[str, Any]) -> list[str]:
    """Reasons gold leaks into failed results or the answer is named before it is observed."""
    return run_report(leak_report, row).reasons
