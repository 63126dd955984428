"""Build a `DialoguePlan` from a seed, its paradigm choice and a case script: tools, calls and observations.

The plan fixes everything a writer needs and a validator checks: the offered tools (one variant of every gold
family, the tool of a wrong-tool script, distractors from other families, a general-search variant; shuffled),
every call in order with its arguments (grounded in the question or earlier evidence; enum values from the
schema) and its simulated observation.
"""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np

from synth.generators.toolforge.cases import Case
from synth.generators.toolforge.paradigms import Hop, ParadigmChoice, attribute_words, mentions
from synth.generators.toolforge.retrieval import SentenceIndex
from synth.generators.toolforge.toolspace import ToolSpace
from synth.validators.toolforge.model import (
    DialoguePlan,
    PlannedCall,
    QASeed,
    StepKind,
    ToolSpec,
    render_observation,
)
from synth.validators.toolforge.rules import appears, content_words

GENERAL = "general_information"
ENTITY_HINTS = (
    "name",
    "entity",
    "title",
    "subject",
    "person",
    "people",
    "place",
    "location",
    "topic",
    "keyword",
    "term",
    "target",
    "work",
    "event",
    "organization",
    "organisation",
    "team",
    "item",
)


@dataclass(frozen=True, slots=True)
class PlanSettings:
    """Retrieval depth and the size of the tool offer."""

    top_k: tuple[int, int] = (3, 5)
    distractors: tuple[int, int] = (3, 6)


def grounded(text: str, context: set[str]) -> str:
    """The words of `text` whose content is in `context` (what the dialogue has shown so far), in order."""
    kept = []
    for word in re.findall(r"[\w'’.-]+", text):
        content = content_words(word, joined=False)
        if content and content <= context:
            kept.append(word)
    return " ".join(kept)


def _string_value(name: str, schema: Mapping[str, Any], entity: str, topic: str) -> Any:
    if "enum" in schema:
        return schema["enum"][0]
    if "default" in schema:
        return schema["default"]
    return entity if any(hint in name.lower() for hint in ENTITY_HINTS) else topic


def fill_arguments(tool: ToolSpec, *, query: str, entity: str, topic: str) -> dict[str, Any]:
    """Arguments for every required parameter of `tool`: the query, the entity, schema enums or defaults."""
    arguments: dict[str, Any] = {}
    for name in tool.required:
        schema = tool.properties.get(name, {})
        kind = schema.get("type", "string")
        if name == "query":
            arguments[name] = query
        elif kind == "string":
            arguments[name] = _string_value(name, schema, entity, topic)
        elif kind == "array":
            items = schema.get("items", {})
            arguments[name] = [items["enum"][0]] if "enum" in items else [entity]
        elif kind in ("integer", "number"):
            arguments[name] = schema.get("default", schema.get("minimum", 5))
        elif kind == "boolean":
            arguments[name] = schema.get("default", False)
        else:
            arguments[name] = schema.get("default", {})
    return arguments


def gold_families(seed: QASeed, choice: ParadigmChoice, space: ToolSpace) -> tuple[str, ...]:
    """The tool family of every hop, routed from its gold passage with the space's lexicon."""
    return tuple(
        space.route(seed.passages[hop.passage].title, " ".join(seed.passages[hop.passage].sentences))[0]
        for hop in choice.hops
    )


def _pick(tools: Sequence[ToolSpec], rng: np.random.Generator) -> ToolSpec:
    return tools[int(rng.integers(len(tools)))]


def _wrong_query(seed: QASeed, choice: ParadigmChoice, hop: Hop) -> str:
    """A grounded but mistaken query: about another entity named in the question, else without the entity."""
    others = [h.entity for h in choice.hops if h.entity != hop.entity and mentions(seed.question, h.entity)]
    attribute = attribute_words(seed.question, *(h.entity for h in choice.hops))
    if others:
        return f"{others[0]} {attribute}".strip()
    return attribute or seed.question.rstrip("?")


class _CallWriter:
    """Accumulates planned calls with sequential ids and retrieval results.

    Every argument is grounded: its words are restricted to what the dialogue has shown before the call (the
    question, the user turns so far, earlier tool results), so no call carries knowledge the model could not have.
    """

    def __init__(
        self,
        seed: QASeed,
        turns: Sequence[str],
        index: SentenceIndex,
        settings: PlanSettings,
        rng: np.random.Generator,
    ) -> None:
        self.seed, self.turns, self.index, self.settings, self.rng = seed, turns, index, settings, rng
        self.calls: list[PlannedCall] = []

    def _k(self) -> int:
        low, high = self.settings.top_k
        return int(self.rng.integers(low, high + 1))

    def context(self, round_: int, user_turn: int) -> tuple[set[str], str]:
        """Content words and text shown before a call of `round_` serving `user_turn`."""
        texts = [self.seed.question, *self.turns[: user_turn + 1]]
        texts += [render_observation(c.evidence) for c in self.calls if c.round < round_]
        return set().union(*(content_words(text, joined=False) for text in texts)), "\n".join(texts)

    def add(
        self,
        *,
        kind: StepKind,
        tool: ToolSpec,
        gold_tool: ToolSpec,
        hop: Hop,
        round_: int,
        query: str,
        faulty: str = "",
    ) -> None:
        words, text = self.context(round_, hop.user_turn)
        query = grounded(query, words) or grounded(self.seed.question, words)
        entity = hop.entity if appears(hop.entity, text) else query
        topic = grounded(hop.need, words) or query
        k = self._k()
        if kind == "gold":
            evidence = self.index.successful(query, hop.gold, k, self.rng)
        elif kind == "insufficient":
            evidence = self.index.insufficient(query, k)
        else:
            evidence = self.index.misleading(query, k)
        self.calls.append(
            PlannedCall(
                call_id=f"call_{len(self.calls)}",
                round=round_,
                kind=kind,
                tool=tool.name,
                gold_tool=gold_tool.name,
                query=query,
                arguments=fill_arguments(tool, query=query, entity=entity, topic=topic),
                evidence=evidence,
                faulty=faulty,
                user_turn=hop.user_turn,
            )
        )


def _failure(
    case: Case,
    seed: QASeed,
    choice: ParadigmChoice,
    hop: Hop,
    gold: ToolSpec,
    wrong: ToolSpec | None,
    general: ToolSpec,
) -> tuple[StepKind, ToolSpec, str, str, ToolSpec]:
    """(failed kind, failed tool, failed query, faulty, retry tool) of an error script; retries use the hop query."""
    if case.kind == "wrong_tool" and wrong is not None:
        return "wrong_tool", wrong, hop.query, wrong.name, gold
    if case.kind == "wrong_arguments":
        return "wrong_arguments", gold, _wrong_query(seed, choice, hop), "query", gold
    if case.kind == "fallback":
        return "insufficient", gold, hop.query, gold.name, general
    words = hop.query.split()
    vague = " ".join(words[: max(1, len(words) // 2)])
    return "misleading", gold, vague, "query", gold


class CaseNotRealisableError(ValueError):
    """A case script that cannot be realised on a seed; the generator rejects it with `code` and the message."""

    def __init__(self, code: str, message: str) -> None:
        super().__init__(message)
        self.code = code


def _check_realisable(case: Case, failed: PlannedCall, retry: PlannedCall) -> None:
    """The faulty argument of a failed call must differ from its correction once both are grounded."""
    if failed.faulty in failed.arguments and failed.arguments[failed.faulty] == retry.arguments.get(failed.faulty):
        msg = f"case {case.name}: the faulty `{failed.faulty}` equals its correction once grounded"
        raise CaseNotRealisableError("fault_equals_correction", msg)


def build_plan(
    seed: QASeed,
    choice: ParadigmChoice,
    case: Case,
    space: ToolSpace,
    index: SentenceIndex,
    rng: np.random.Generator,
    settings: PlanSettings = PlanSettings(),
) -> tuple[DialoguePlan, tuple[ToolSpec, ...]]:
    """The plan of one dialogue and the tools it offers (shuffled)."""
    families = gold_families(seed, choice, space)
    gold_by_family = {family: _pick(space.by_family(family), rng) for family in dict.fromkeys(families)}
    general = gold_by_family.get(GENERAL) or _pick(space.by_family(GENERAL), rng)
    other_families = [f for f in space.families if f not in gold_by_family and f != GENERAL]
    low, high = settings.distractors
    count = min(len(other_families), int(rng.integers(low, high + 1)))
    distractor_families = [other_families[i] for i in sorted(rng.choice(len(other_families), count, replace=False))]
    distractors = [_pick(space.by_family(f), rng) for f in distractor_families]
    wrong = distractors[0] if distractors else None

    writer = _CallWriter(seed, choice.user_turns, index, settings, rng)
    shift = 0
    for round_ in range(1 + max(h.round for h in choice.hops)):
        hops = [(i, h) for i, h in enumerate(choice.hops) if h.round == round_]
        retries = []
        for i, hop in hops:
            gold = gold_by_family[families[i]]
            if i == case.hop:
                kind, tool, query, faulty, retry_tool = _failure(case, seed, choice, hop, gold, wrong, general)
                writer.add(
                    kind=kind,
                    tool=tool,
                    gold_tool=retry_tool,
                    hop=hop,
                    round_=round_ + shift,
                    query=query,
                    faulty=faulty,
                )
                retries.append((hop, retry_tool, writer.calls[-1]))
            else:
                writer.add(
                    kind="gold",
                    tool=gold,
                    gold_tool=gold,
                    hop=hop,
                    round_=round_ + shift,
                    query=hop.query,
                )
        if retries:
            shift += 1
            for hop, tool, failed in retries:
                writer.add(kind="gold", tool=tool, gold_tool=tool, hop=hop, round_=round_ + shift, query=hop.query)
                _check_realisable(case, failed, writer.calls[-1])

    offered = [*gold_by_family.values(), *distractors]
    if general.name not in {t.name for t in offered}:
        offered.append(general)
    offered = [offered[i] for i in rng.permutation(len(offered))]
    reflection = () if case.kind == "clean" else (case.kind,)
    used = {call.tool for call in writer.calls if call.kind == "gold"}
    plan = DialoguePlan(
        paradigm=choice.paradigm,
        paradigm_reason=choice.reason,
        case=case.name,
        reflection=reflection,
        calls=tuple(writer.calls),
        user_turns=choice.user_turns,
        turn_answers=choice.turn_answers,
        gold_tools={family: tool.name for family, tool in gold_by_family.items() if tool.name in used}
        | ({GENERAL: general.name} if general.name in used else {}),
    )
    return plan, tuple(offered)
