"""Paradigm selection, simulated retrieval, plans and the scripted composer on real and crafted seeds."""

from __future__ import annotations

import jsonschema
import numpy as np
import pytest

from synth.generators.toolforge.cases import Case
from synth.generators.toolforge.compose import compose_scripted
from synth.generators.toolforge.paradigms import choose_paradigm, mentions
from synth.generators.toolforge.planner import build_plan
from synth.generators.toolforge.retrieval import SentenceIndex
from synth.generators.toolforge.seeds import read_seed_file, seed_files
from synth.generators.toolforge.toolspace import ToolSpace
from synth.validators.toolforge.model import FAILED_KINDS, Passage, QASeed, SubQuestion, parse_observation

FILLER = tuple(Passage(f"Filler {i}", (f"Filler {i} is a village.", f"It has {i} farms.")) for i in range(6))


def _bridge() -> QASeed:
    passages = (
        Passage("Film X", ("Film X is a 1999 drama directed by Jane Doe.", "It won two awards.")),
        Passage("Jane Doe", ("Jane Doe is a director.", "She was born in Springfield in 1950.")),
        *FILLER,
    )
    return QASeed(
        "b1", "hotpotqa", "Where was the director of Film X born?", "Springfield", "bridge", passages, ((0, 0), (1, 1))
    )


def _musique(steps: int) -> QASeed:
    passages = (
        Passage("Film X", ("Film X is a drama.", "It was directed by Jane Doe.")),
        Passage("Jane Doe", ("Jane Doe is a director.", "She was born in Springfield.")),
        Passage("Springfield", ("Springfield is a city.", "Its mayor is Bob Roe.")),
        *FILLER,
    )
    decomposition = (
        SubQuestion("who directed Film X", "Jane Doe", 0),
        SubQuestion("where was #1 born", "Springfield", 1),
        SubQuestion("who is the mayor of #2", "Bob Roe", 2),
    )[:steps]
    support = ((0, 1), (1, 1), (2, 1))[:steps]
    return QASeed(
        f"m{steps}",
        "musique",
        "q?",
        decomposition[-1].answer,
        f"{steps}hop",
        passages,
        support,
        decomposition=decomposition,
    )


@pytest.fixture(scope="module")
def space() -> ToolSpace:
    return ToolSpace.build(variants_per_family=2, seed=0)


def test_bridge_is_multi_hop_with_a_grounded_second_query() -> None:
    seed = _bridge()
    choice = choose_paradigm(seed, SentenceIndex(seed), single_k=1)
    assert choice.paradigm == "multi_hop" and "Jane Doe" in choice.reason
    first, second = choice.hops
    assert (first.round, second.round) == (0, 1)
    assert mentions(seed.sentence((0, 0)), second.entity) and second.entity in second.query


def test_musique_two_hops_follow_up_and_three_hops_chain() -> None:
    two = choose_paradigm(_musique(2), SentenceIndex(_musique(2)), single_k=1)
    assert two.paradigm == "multi_turn"
    assert two.user_turns == ("Who directed Film X?", "q?") and two.turn_answers == ("Jane Doe", "Springfield")
    assert [h.user_turn for h in two.hops] == [0, 1]
    three = choose_paradigm(_musique(3), SentenceIndex(_musique(3)), single_k=1)
    assert three.paradigm == "multi_hop" and [h.round for h in three.hops] == [0, 1, 2]
    assert three.hops[2].query == "who is the mayor of Springfield"  # `#2` resolved from the previous answer


def test_shipped_seeds_cover_all_four_paradigms() -> None:
    paradigms = set()
    for path in seed_files(None):
        for seed in read_seed_file(path):
            paradigms.add(choose_paradigm(seed, SentenceIndex(seed), single_k=3).paradigm)
    assert paradigms == {"single", "parallel", "multi_hop", "multi_turn"}


def test_misleading_results_hold_no_gold_and_successful_ones_hold_the_call_gold() -> None:
    seed = _bridge()
    index = SentenceIndex(seed)
    rng = np.random.default_rng(0)
    good = index.successful("Jane Doe born", ((1, 1),), 3, rng)
    assert sum(item.gold for item in good) == 1 and len(good) == 4
    bad = index.misleading("Jane Doe born", 3)
    assert len(bad) == 3 and not any(item.gold for item in bad)
    assert index.ranking("Jane Doe born")[0] == (1, 1)  # gold ranks first before being removed


@pytest.mark.parametrize("kind", ["clean", "wrong_tool", "wrong_arguments", "misleading", "fallback"])
def test_plans_add_a_retry_round_and_offer_every_called_tool(space: ToolSpace, kind: str) -> None:
    seed = _bridge()
    index = SentenceIndex(seed)
    choice = choose_paradigm(seed, index, single_k=1)
    plan, tools = build_plan(
        seed, choice, Case(kind, -1 if kind == "clean" else 1), space, index, np.random.default_rng(3)
    )
    offered = {tool.name: tool for tool in tools}
    for call in plan.calls:
        jsonschema.validate(dict(call.arguments), offered[call.tool].parameters)
    failed = [c for c in plan.calls if c.kind in FAILED_KINDS]
    if kind == "clean":
        assert not failed and plan.rounds == 2
        return
    (bad,) = failed
    retry = plan.calls[-1]
    assert plan.rounds == 3 and bad.round == 1 and retry.round == 2 and retry.kind == "gold"
    assert bad.mode == "misleading" and retry.mode == "successful"
    assert bad.faulty in (bad.tool, "query")
    if kind == "wrong_tool":
        assert bad.tool != retry.tool and bad.gold_tool == retry.tool
    if kind in ("wrong_arguments", "misleading"):
        assert bad.tool == retry.tool and bad.arguments["query"] != retry.arguments["query"]


def test_scripted_dialogue_follows_the_conventions(space: ToolSpace) -> None:
    seed = _bridge()
    index = SentenceIndex(seed)
    choice = choose_paradigm(seed, index, single_k=1)
    plan, _ = build_plan(seed, choice, Case("wrong_tool", 0), space, index, np.random.default_rng(1))
    messages = compose_scripted(plan)
    roles = [m.role for m in messages]
    assert roles == ["system", "user", "assistant", "tool", "assistant", "tool", "assistant", "tool", "assistant"]
    failed = plan.calls[0]
    assert failed.kind == "wrong_tool" and f"`{failed.faulty}`" in messages[4].reasoning
    for message in messages:
        for call in message.tool_calls:
            assert f"`{call.name}`" in message.reasoning
    for message, call in zip([m for m in messages if m.role == "tool"], plan.calls, strict=True):
        assert message.tool_call_id == call.call_id
        assert [t for t, _ in parse_observation(message.content)] == [e.title for e in call.evidence]
    assert messages[-1].content == "Springfield"
    first_seen = next(i for i, m in enumerate(messages) if m.role == "tool" and "Springfield" in m.content)
    assert all("Springfield" not in m.reasoning for m in messages[:first_seen])
