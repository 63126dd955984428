"""Paradigm selection: how a seed's evidence must be gathered, decided from its question type and evidence.

The four paradigms and when a seed gets each (first rule that applies; the reason is recorded on the row):

1. `single`: one query (the question itself) ranks every supporting sentence within the top-k, so one call
   retrieves all the evidence;
2. `parallel`: a comparison question (or two gold passages whose entities are both named in the question and
   do not lead to each other): one call per entity in one round;
3. `multi_turn`: a two-step decomposition (MuSiQue 2-hop) whose first step is a standalone question: the user
   asks it first, then follows up with the full question, which needs the first answer;
4. `multi_hop`: a bridge chain (HotpotQA bridge, MuSiQue 3–4 hops): each round's query names an entity found in
   the previous round's evidence, so the calls are dependent.

A `Hop` is one gold retrieval of the chosen paradigm: its round, the user turn it serves, its passage and gold
sentences, its query (grounded in the question or in earlier evidence) and the entity it is about.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from synth.generators.toolforge.retrieval import STOPWORDS, SentenceIndex, tokens
from synth.generators.toolforge.seeds import answer_sentences
from synth.validators.toolforge.model import Paradigm, QASeed


@dataclass(frozen=True, slots=True)
class Hop:
    """One gold retrieval of a plan."""

    round: int
    user_turn: int
    passage: int
    gold: tuple[tuple[int, int], ...]
    query: str
    entity: str
    need: str


@dataclass(frozen=True, slots=True)
class ParadigmChoice:
    """The paradigm of a seed, why, its hops, and the user turns with their expected answers."""

    paradigm: Paradigm
    reason: str
    hops: tuple[Hop, ...]
    user_turns: tuple[str, ...]
    turn_answers: tuple[str, ...]


def entity_name(title: str) -> str:
    """A passage title without its disambiguation suffix: `Ed Wood (film)` → `Ed Wood`."""
    return re.sub(r"\s*\([^)]*\)\s*$", "", title).strip() or title


def normalised(text: str) -> str:
    """Lower-cased words joined by single spaces (for containment tests)."""
    return " ".join(re.findall(r"\w+", text.lower()))


def mentions(text: str, phrase: str) -> bool:
    """True when `phrase` occurs in `text` as whole words (case-insensitive)."""
    needle = normalised(phrase)
    return bool(needle) and f" {needle} " in f" {normalised(text)} "


def attribute_words(question: str, *entities: str, limit: int = 5) -> str:
    """The question's content words that are not part of the entities (what is asked about them)."""
    taken = {w for entity in entities for w in tokens(entity)}
    words = [w for w in tokens(question) if w not in taken]
    return " ".join(list(dict.fromkeys(words))[:limit])


def _gold_in(seed: QASeed, passage: int) -> tuple[tuple[int, int], ...]:
    return tuple(ref for ref in seed.supporting if ref[0] == passage)


def _gold_text(seed: QASeed, passage: int) -> str:
    return " ".join(seed.sentence(ref) for ref in _gold_in(seed, passage))


def _bridge_phrase(source_text: str, target: QASeed, passage: int) -> str:
    """A grounded stand-in for the target passage's entity: its title words found in `source_text`, else the
    capitalised words of `source_text` that also occur in the target passage."""
    source_words = set(tokens(source_text))
    title_words = [w for w in tokens(entity_name(target.passages[passage].title)) if w in source_words]
    if title_words:
        return " ".join(dict.fromkeys(title_words))
    target_words = set(tokens(" ".join(target.passages[passage].sentences)))
    capitalised = re.findall(r"\b[A-Z][\w-]+", source_text)
    shared = [w for w in (c.lower() for c in capitalised) if w in target_words and w not in STOPWORDS]
    return " ".join(list(dict.fromkeys(shared))[:3])


def _single(seed: QASeed, index: SentenceIndex, k: int) -> ParadigmChoice | None:
    query = seed.question.rstrip("?").strip()
    worst = index.rank_of(query, seed.supporting)
    if worst > k:
        return None
    reason = f"one query (the question) ranks all {len(seed.supporting)} supporting sentences within the top {worst}"
    return _one_call(seed, query, reason)


def _one_call(seed: QASeed, query: str, reason: str) -> ParadigmChoice:
    """The `single` paradigm: one call retrieves every supporting sentence."""
    passage = seed.gold_passages()[0]
    entity = entity_name(seed.passages[passage].title)
    hop = Hop(0, 0, passage, seed.supporting, query, entity, "the facts the question asks about")
    return ParadigmChoice("single", reason, (hop,), (seed.question,), (seed.answer,))


def _parallel(seed: QASeed, why: str) -> ParadigmChoice:
    passages = seed.gold_passages()
    entities = [entity_name(seed.passages[p].title) for p in passages]
    attribute = attribute_words(seed.question, *entities)
    hops = tuple(
        Hop(0, 0, p, _gold_in(seed, p), f"{entity} {attribute}".strip(), entity, f"{attribute or 'facts'} of {entity}")
        for p, entity in zip(passages, entities, strict=True)
    )
    reason = f"{why}: independent evidence on {', '.join(entities)}, one call per entity in one round"
    return ParadigmChoice("parallel", reason, hops, (seed.question,), (seed.answer,))


def _hotpot_bridge(seed: QASeed) -> ParadigmChoice:
    passages = seed.gold_passages()
    if len(passages) < 2:
        return _one_call(seed, seed.question.rstrip("?"), "all supporting sentences lie in one passage")
    first, second = passages[0], passages[1]
    ents = {p: entity_name(seed.passages[p].title) for p in passages}
    links = [(a, b) for a, b in ((first, second), (second, first)) if mentions(_gold_text(seed, a), ents[b])]
    if not links and all(mentions(seed.question, ents[p]) for p in (first, second)):
        return _parallel(seed, "both entities are named in the question and neither leads to the other")
    if links:
        links.sort(key=lambda pair: not mentions(seed.question, ents[pair[0]]))
        a, b = links[0]
        bridge, how = ents[b], f"`{ents[b]}` is named in the evidence on {ents[a]}"
    else:
        a, b = (
            (first, second)
            if mentions(seed.question, ents[first]) or not mentions(seed.question, ents[second])
            else (second, first)
        )
        bridge = _bridge_phrase(_gold_text(seed, a), seed, b) or ents[b]
        how = f"the evidence on {ents[a]} shares `{bridge}` with the second passage"
    attribute = attribute_words(seed.question, ents[a], ents[b])
    query_a = f"{ents[a]} {attribute}".strip() if mentions(seed.question, ents[a]) else seed.question.rstrip("?")
    hops = (
        Hop(0, 0, a, _gold_in(seed, a), query_a, ents[a], f"what the question says about {ents[a]}"),
        Hop(1, 0, b, _gold_in(seed, b), f"{bridge} {attribute}".strip(), bridge, f"{attribute or 'facts'} of {bridge}"),
    )
    reason = f"bridge question: the second passage is reached through the first ({how})"
    return ParadigmChoice("multi_hop", reason, hops, (seed.question,), (seed.answer,))


def _resolve(question: str, answers: list[str]) -> str:
    """Replace `#k` references by the earlier steps' answers."""
    return re.sub(
        r"#(\d+)", lambda m: answers[int(m.group(1)) - 1] if int(m.group(1)) <= len(answers) else m.group(0), question
    )


def _as_question(text: str) -> str:
    text = text.strip().rstrip("?").strip()
    return f"{text[:1].upper()}{text[1:]}?"


def _decomposed(seed: QASeed, *, follow_up: bool) -> ParadigmChoice:
    answers: list[str] = []
    hops = []
    for k, step in enumerate(seed.decomposition):
        query = _resolve(step.question, answers)
        gold = tuple((step.passage, s) for s in answer_sentences(seed.passages[step.passage], step.answer))
        entity = answers[-1] if answers else entity_name(seed.passages[step.passage].title)
        user_turn = 1 if follow_up and k > 0 else 0
        hops.append(Hop(k, user_turn, step.passage, gold, query, entity, _as_question(query)))
        answers.append(step.answer)
    steps = len(seed.decomposition)
    if follow_up:
        first = _as_question(seed.decomposition[0].question)
        reason = (
            f"{steps}-step decomposition whose first step is a standalone question: the user asks it first "
            "and follows up with the full question, which builds on its answer"
        )
        return ParadigmChoice(
            "multi_turn", reason, tuple(hops), (first, seed.question), (seed.decomposition[0].answer, seed.answer)
        )
    reason = f"{steps}-step decomposition: each step's query names the previous step's answer (dependent calls)"
    return ParadigmChoice("multi_hop", reason, tuple(hops), (seed.question,), (seed.answer,))


def choose_paradigm(seed: QASeed, index: SentenceIndex, *, single_k: int) -> ParadigmChoice:
    """The paradigm of `seed` with its hops (see the module docstring for the rules)."""
    single = _single(seed, index, single_k)
    if single is not None:
        return single
    if seed.qtype == "comparison":
        return _parallel(seed, "comparison question")
    if seed.decomposition:
        standalone = "#" not in seed.decomposition[0].question
        return _decomposed(seed, follow_up=len(seed.decomposition) == 2 and standalone)
    return _hotpot_bridge(seed)
