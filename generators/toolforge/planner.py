"""Build a `DialoguePlan` from a seed, its paradigm choice and a case script: tools, calls and observations.

The plan fixes everything a writer needs and a validator checks: the offered tools (one variant of every gold
family, the tool of a wrong-tool script, distractors from other families, a general-search variant; shuffled),
every call in order with its arguments (grounded in the question or earlier evidence; enum values from the
schema) and its simulated observation.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np

from synth.generators.toolforge.cases import Case
from synth.generators.toolforge.model import DialoguePlan, PlannedCall, QASeed, StepKind, ToolSpec
from synth.generators.toolforge.paradigms import Hop, ParadigmChoice, attribute_words, entity_name, mentions
from synth.generators.toolforge.retrieval import SentenceIndex
from synth.generators.toolforge.tools import route_family
from synth.generators.toolforge.toolspace import ToolSpace

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


def _string_value(name: str, schema: Mapping[str, Any], entity: str, need: str) -> Any:
    if "enum" in schema:
        return schema["enum"][0]
    if "default" in schema:
        return schema["default"]
    return entity if any(hint in name.lower() for hint in ENTITY_HINTS) else need


def fill_arguments(tool: ToolSpec, *, query: str, entity: str, need: str) -> dict[str, Any]:
    """Arguments for every required parameter of `tool`: the query, the entity, schema enums or defaults."""
    arguments: dict[str, Any] = {}
    for name in tool.required:
        schema = tool.properties.get(name, {})
        kind = schema.get("type", "string")
        if name == "query":
            arguments[name] = query
        elif kind == "string":
            arguments[name] = _string_value(name, schema, entity, need)
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


def _family_of(seed: QASeed, hop: Hop) -> tuple[str, str]:
    passage = seed.passages[hop.passage]
    return route_family(passage.title, " ".join(passage.sentences))


def gold_families(seed: QASeed, choice: ParadigmChoice) -> tuple[str, ...]:
    """The routed tool family of every hop."""
    return tuple(_family_of(seed, hop)[0] for hop in choice.hops)


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
    """Accumulates planned calls with sequential ids and retrieval results."""

    def __init__(self, index: SentenceIndex, settings: PlanSettings, rng: np.random.Generator) -> None:
        self.index, self.settings, self.rng = index, settings, rng
        self.calls: list[PlannedCall] = []

    def _k(self) -> int:
        low, high = self.settings.top_k
        return int(self.rng.integers(low, high + 1))

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
                arguments=fill_arguments(tool, query=query, entity=hop.entity, need=hop.need),
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
) -> tuple[StepKind, ToolSpec, str, str, ToolSpec, str]:
    """(failed kind, failed tool, failed query, faulty, retry tool, retry query) of an error script."""
    if case.kind == "wrong_tool" and wrong is not None:
        return "wrong_tool", wrong, hop.query, wrong.name, gold, hop.query
    if case.kind == "wrong_arguments":
        return "wrong_arguments", gold, _wrong_query(seed, choice, hop), "query", gold, hop.query
    if case.kind == "fallback":
        return "insufficient", gold, hop.query, gold.name, general, hop.query
    vague = entity_name(hop.entity)
    retry = hop.query if hop.query != vague else f"{vague} {attribute_words(seed.question, vague)}".strip()
    return "misleading", gold, vague, "query", gold, retry


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
    families = gold_families(seed, choice)
    gold_by_family = {family: _pick(space.by_family(family), rng) for family in dict.fromkeys(families)}
    general = gold_by_family.get(GENERAL) or _pick(space.by_family(GENERAL), rng)
    other_families = [f for f in space.families if f not in gold_by_family and f != GENERAL]
    low, high = settings.distractors
    count = min(len(other_families), int(rng.integers(low, high + 1)))
    distractor_families = [other_families[i] for i in sorted(rng.choice(len(other_families), count, replace=False))]
    distractors = [_pick(space.by_family(f), rng) for f in distractor_families]
    wrong = distractors[0] if distractors else None

    writer = _CallWriter(index, settings, rng)
    shift = 0
    for round_ in range(1 + max(h.round for h in choice.hops)):
        hops = [(i, h) for i, h in enumerate(choice.hops) if h.round == round_]
        retries = []
        for i, hop in hops:
            gold = gold_by_family[families[i]]
            if i == case.hop:
                kind, tool, query, faulty, retry_tool, retry_query = _failure(
                    case, seed, choice, hop, gold, wrong, general
                )
                writer.add(
                    kind=kind,
                    tool=tool,
                    gold_tool=retry_tool,
                    hop=hop,
                    round_=round_ + shift,
                    query=query,
                    faulty=faulty,
                )
                retries.append((hop, retry_tool, retry_query))
            else:
                writer.add(kind="gold", tool=gold, gold_tool=gold, hop=hop, round_=round_ + shift, query=hop.query)
        if retries:
            shift += 1
            for hop, tool, query in retries:
                writer.add(kind="gold", tool=tool, gold_tool=tool, hop=hop, round_=round_ + shift, query=query)

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
