"""The judge layer: each assistant turn scored 0/1, the sample passing only if every turn scores 1.

The default judge is a deterministic rule judge, ToolForge's LLM judge made checkable:

- think–action consistency: a tool turn's reasoning names every tool it calls;
- reflection: the assistant turn right after a failed planned call (kind in `FAILED_KINDS`) states the failure
  (a failure word) and names that call's `faulty` (the tool or argument at fault);
- understanding: an answer turn's reasoning cites the title of a gold passage observed in an earlier result and
  concludes the answer the turn gives (think–answer consistency).

As in ToolForge, a turn holding a failed call is wrong but still scores 1 when the next assistant turn reflects on
the failure correctly. The LLM judge sends the same facts through an `LLMBackend` with a JSON schema; its scripted
backend runs the rule judge as its policy, so it is deterministic offline. Invalid judge output fails the row.
"""

from __future__ import annotations

import json
import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np

from synth.core.llm import GenRequest, LLMBackend, Message, SamplingParams, ScriptedBackend, schema_errors
from synth.validators.toolforge.model import FAILED_KINDS, parse_observation
from synth.validators.toolforge.rules import (
    Msg,
    appears,
    names,
    normalize,
    read_messages,
    read_plan,
    reason,
    strip_answer,
)

_FAILURE_TEXT = (
    "fail failed fails failure wrong error erroneous incorrect mistake mistaken insufficient irrelevant misleading "
    "unrelated unhelpful useless vague missing lacks lacked lacking"
)
FAILURE_WORDS = frozenset(_FAILURE_TEXT.split())
NEGATIONS = frozenset(
    [
        "not",
        "no",
        "never",
        "nothing",
        "none",
        "without",
        "isnt",
        "wasnt",
        "werent",
        "arent",
        "doesnt",
        "didnt",
        "dont",
        "hardly",
    ]
)
NEGATION_WINDOW = 3
JUDGE_SCHEMA: dict[str, Any] = {
    "type": "object",
    "properties": {
        "reasoning": {"type": "string"},
        "turn_scores": {"type": "array", "items": {"enum": [0, 1]}},
        "score": {"enum": [0, 1]},
    },
    "required": ["reasoning", "turn_scores", "score"],
    "additionalProperties": False,
}
JUDGE_PROMPT = (
    "You judge a tool-use dialogue. Score every assistant turn 1 or 0: 1 when its reasoning names every tool it "
    "calls, an answer turn's reasoning cites an observed gold passage title and concludes the answer it gives, "
    "and the turn right after a failed call states the failure (not denies it) and names what was at fault. A "
    "turn holding a failed call still scores 1 when the "
    "next assistant turn reflects on it correctly. The sample scores 1 only if every turn does. Reply with JSON "
    '{"reasoning": str, "turn_scores": [0|1, ...], "score": 0|1}. The dialogue and its plan follow as JSON '
    "between <dialogue> tags."
)


@dataclass(frozen=True, slots=True)
class JudgedCall:
    """What the judge needs of a planned call: its kind, what is at fault and the gold titles it returns."""

    kind: str
    faulty: str
    gold_titles: tuple[str, ...]


@dataclass(frozen=True, slots=True)
class Judgement:
    """Per-assistant-turn scores, the sample score and the reasons for every 0."""

    turn_scores: tuple[int, ...]
    reasons: tuple[str, ...]

    @property
    def score(self) -> int:
        """1 only if every turn scores 1 (and there is a turn)."""
        return int(bool(self.turn_scores) and all(self.turn_scores))


def states_failure(text: str) -> bool:
    """Whether `text` states a failure: a failure word not negated by one of the three words before it."""
    words = normalize(text.replace("'", "").replace("’", "")).split()
    return any(
        word in FAILURE_WORDS and not NEGATIONS & set(words[max(i - NEGATION_WINDOW, 0) : i])
        for i, word in enumerate(words)
    )


def judged_calls(row: Mapping[str, Any]) -> list[JudgedCall]:
    """The judge's view of the row's plan."""
    return [
        JudgedCall(c.kind, c.faulty, tuple(dict.fromkeys(e.title for e in c.evidence if e.gold)))
        for c in read_plan(row)
    ]


def _observed_gold_titles(messages: Sequence[Msg], before: int, calls: Sequence[JudgedCall]) -> set[str]:
    gold = {t for c in calls for t in c.gold_titles}
    return {title for m in messages[:before] if m.role == "tool" for title, _ in parse_observation(m.content)} & gold


def failed_calls_by_turn(messages: Sequence[Msg], calls: Sequence[JudgedCall]) -> dict[int, list[JudgedCall]]:
    """Failed planned calls by the index of the assistant message holding them (calls matched by position)."""
    out: dict[int, list[JudgedCall]] = {}
    k = 0
    for m in messages:
        for _ in m.calls if m.role == "assistant" else ():
            if k < len(calls) and calls[k].kind in FAILED_KINDS:
                out.setdefault(m.index, []).append(calls[k])
            k += 1
    return out


def _reflects(m: Msg, failed: JudgedCall) -> bool:
    return states_failure(m.reasoning) and names(m.reasoning, failed.faulty)


Problem = tuple[str, str]
"""A turn's problem: a stable code and the detail."""


def _turn_problems(
    m: Msg, messages: Sequence[Msg], calls: Sequence[JudgedCall], owed: list[JudgedCall]
) -> list[Problem]:
    problems = [
        ("tool_unnamed", f"reasoning does not name the called tool {c.name!r}")
        for c in m.calls
        if not names(m.reasoning, c.name)
    ]
    problems += [
        ("no_reflection", f"does not reflect on the failed {failed.kind} call (at fault: {failed.faulty!r})")
        for failed in owed
        if not _reflects(m, failed)
    ]
    if not m.calls:
        titles = _observed_gold_titles(messages, m.index, calls)
        if not any(appears(title, m.reasoning) for title in titles):
            problems.append(("no_citation", "answer reasoning cites no observed gold passage"))
        if not appears(strip_answer(m.content), m.reasoning):
            problems.append(("unconcluded_answer", "answer reasoning does not conclude the answer it gives"))
    return problems


def judge_turns(messages: Sequence[Msg], calls: Sequence[JudgedCall]) -> Judgement:
    """Score every assistant turn of `messages` against the judged plan `calls`."""
    turns = [m for m in messages if m.role == "assistant"]
    failures = failed_calls_by_turn(messages, calls)
    problems: list[list[Problem]] = []
    for t, m in enumerate(turns):
        owed = failures.get(turns[t - 1].index, []) if t else []
        problems.append(_turn_problems(m, messages, calls, owed))
        failed = failures.get(m.index, [])
        following = turns[t + 1] if t + 1 < len(turns) else None
        if failed and (following is None or not all(_reflects(following, f) for f in failed)):
            problems[t].append(("unreflected_failure", "its failed call is not reflected on by the next turn"))
    scores = tuple(int(not p) for p in problems)
    reasons = tuple(reason(code, f"turn {t}: {detail}") for t, ps in enumerate(problems) for code, detail in ps)
    return Judgement(scores, reasons)


def judge_row(row: Mapping[str, Any]) -> Judgement:
    """The rule judge's verdict on a row; a row it cannot read scores 0."""
    try:
        return judge_turns(read_messages(row), judged_calls(row))
    except Exception as error:  # corrupted rows must fail, never raise
        return Judgement((0,), (reason("unreadable_row", f"{type(error).__name__}: {error}"[:200]),))


def check_judge(row: Mapping[str, Any]) -> list[str]:
    """Reasons the rule judge scores some assistant turn 0."""
    judgement = judge_row(row)
    if judgement.score:
        return []
    return list(judgement.reasons) or [reason("no_assistant_turn", "no assistant turn to judge")]


# --- LLM judge -------------------------------------------------------------------------------------------


def judge_payload(row: Mapping[str, Any]) -> dict[str, Any]:
    """The facts the judge sees: the question, the messages and the judged plan."""
    return {
        "question": row.get("question", ""),
        "messages": list(row.get("messages") or ()),
        "calls": [{"kind": c.kind, "faulty": c.faulty, "gold_titles": list(c.gold_titles)} for c in judged_calls(row)],
    }


def judge_request(row: Mapping[str, Any], *, model: str = "toolforge-judge") -> GenRequest:
    """One judge request for `row` (temperature 0, JSON-schema output)."""
    payload = json.dumps(judge_payload(row), sort_keys=True, ensure_ascii=False, default=str)
    return GenRequest(
        model=model,
        messages=(Message("system", JUDGE_PROMPT), Message("user", f"<dialogue>{payload}</dialogue>")),
        sampling=SamplingParams(temperature=0.0, max_tokens=100_000),
        schema=JUDGE_SCHEMA,
    )


def scripted_judge_policy(request: GenRequest, rng: np.random.Generator) -> str:
    """The rule judge as an LLM policy: read the dialogue JSON from the prompt and score it."""
    del rng
    match = re.search(r"<dialogue>(.*)</dialogue>", request.messages[-1].content, re.DOTALL)
    payload = json.loads(match.group(1)) if match else {}
    calls = [JudgedCall(c["kind"], c["faulty"], tuple(c["gold_titles"])) for c in payload.get("calls", ())]
    judgement = judge_turns(read_messages(payload), calls)
    reasoning = "; ".join(judgement.reasons) or "every turn is consistent, reflective and grounded"
    return json.dumps({"reasoning": reasoning, "turn_scores": list(judgement.turn_scores), "score": judgement.score})


def scripted_judge_backend() -> ScriptedBackend:
    """A `ScriptedBackend` running `scripted_judge_policy`."""
    return ScriptedBackend(scripted_judge_policy, name="scripted-toolforge-judge")


def parse_judgement(text: str, *, turns: int) -> Judgement:
    """A judge reply as a `Judgement`; invalid JSON, a schema error or a wrong turn count fails with the reason."""
    error = schema_errors(text, JUDGE_SCHEMA)
    if error is not None:
        return Judgement((0,), (reason("invalid_judge_output", error[:200]),))
    value = json.loads(text)
    scores = tuple(value["turn_scores"])
    if len(scores) != turns:
        detail = f"{len(scores)} turn scores for {turns} assistant turns"
        return Judgement((0,), (reason("invalid_judge_output", detail),))
    if value["score"] != int(bool(scores) and all(scores)):
        return Judgement((0,), (reason("invalid_judge_output", "the score disagrees with the turn scores"),))
    reasons = () if value["score"] else (reason("turn_scored_zero", value["reasoning"][:300]),)
    return Judgement(scores, reasons)


class LLMJudge:
    """Judge rows through an LLM backend, one request per row; `calls` counts the requests sent."""

    def __init__(self, backend: LLMBackend, *, model: str = "toolforge-judge") -> None:
        self.backend = backend
        self.model = model
        self.calls = 0

    def judge(self, rows: Sequence[Mapping[str, Any]]) -> list[Judgement]:
        """One judgement per row, in order."""
        if not rows:
            return []
        results = self.backend.generate([judge_request(row, model=self.model) for row in rows])
        self.calls += len(rows)
        out = []
        for row, result in zip(rows, results, strict=True):
            turns = sum(m.role == "assistant" for m in read_messages(row))
            out.append(parse_judgement(result.texts[0] if result.texts else "", turns=turns))
        return out
