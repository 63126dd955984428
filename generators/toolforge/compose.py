"""Write the messages of a dialogue from its plan (the message conventions are in `model.py`).

`compose_scripted` is the deterministic writer: templated reasoning that names every tool it calls, reflects on
each failed call by naming what was at fault, refuses to stop early in multi-round chains, and cites the gold
titles it read before answering. It is the `scripted` backend of ToolForge and a real baseline: every fact
and argument comes from the seed, the plan and the simulated observations.
"""

from __future__ import annotations

from collections.abc import Sequence

from synth.validators.toolforge.model import (
    FAILED_KINDS,
    ChatMessage,
    DialoguePlan,
    PlannedCall,
    ToolCall,
    render_observation,
)

SYSTEM_PROMPT = (
    "You are a careful research assistant with access to search tools. Think before each step. Either call one "
    "or more tools (several at once when the lookups are independent), or give the final answer. Before you "
    "answer, run a reflection check: are the tool calls consistent with your plan, is the reasoning coherent, and "
    "does the answer follow from the retrieved evidence? If a tool result is wrong, irrelevant or insufficient, "
    "say what went wrong and retry with a corrected call instead of answering."
)


def _titles(call: PlannedCall) -> str:
    titles = list(dict.fromkeys(item.title for item in call.evidence))
    return ", ".join(titles[:3]) if titles else "nothing relevant"


def reflect(failed: PlannedCall) -> str:
    """The reflection on one failed call: what went wrong, naming `failed.faulty`, and the fix."""
    if failed.kind == "wrong_tool":
        return (
            f"The results of `{failed.tool}` are about {_titles(failed)}, not what I need: `{failed.faulty}` was "
            f"the wrong tool for this lookup. I will use `{failed.gold_tool}` instead."
        )
    if failed.kind == "wrong_arguments":
        return (
            f"The results concern {_titles(failed)}, not the target of the question: the `{failed.faulty}` "
            f'argument "{failed.arguments.get(failed.faulty, failed.query)}" was wrong. I will correct '
            f"`{failed.faulty}` and call `{failed.tool}` again."
        )
    if failed.kind == "insufficient":
        return (
            f"`{failed.faulty}` returned related but insufficient information ({_titles(failed)}). I will fall back "
            f"to the general search tool `{failed.gold_tool}`."
        )
    return (
        f"The results ({_titles(failed)}) do not contain the fact I need; they are misleading. The "
        f'`{failed.faulty}` "{failed.query}" was too vague, so I will search `{failed.tool}` again with a more '
        "specific query."
    )


def _action(calls: Sequence[PlannedCall]) -> str:
    parts = [f'call `{c.tool}` with the query "{c.query}"' for c in calls]
    if len(calls) > 1:
        return "These lookups are independent, so I will run them in parallel: " + "; ".join(parts) + "."
    return f"I will {parts[0]}."


def _round_reasoning(
    plan: DialoguePlan,
    calls: Sequence[PlannedCall],
    previous: Sequence[PlannedCall],
    question: str,
    first_of_turn: bool,
) -> str:
    lines = []
    if first_of_turn:
        lines.append(f'The user asks: "{question}" I need to look this up before answering.')
    lines += [reflect(call) for call in previous if call.kind in FAILED_KINDS]
    if "early_stop_avoided" in plan.reflection and previous and not any(c.kind in FAILED_KINDS for c in previous):
        lines.append(
            f"The results so far ({_titles(previous[-1])}) give only part of the chain. It is tempting to answer "
            "now, but that would stop early: the question needs one more lookup that builds on them."
        )
    elif previous and not first_of_turn and not any(c.kind in FAILED_KINDS for c in previous):
        lines.append(f"From {_titles(previous[-1])} I have the intermediate fact; next I follow it up.")
    lines.append(_action(calls))
    return "\n".join(lines)


def _answer_reasoning(calls: Sequence[PlannedCall], answer: str) -> str:
    gold = [item for call in calls if call.kind == "gold" for item in call.evidence if item.gold]
    titles = ", ".join(dict.fromkeys(item.title for item in gold)) or "the results"
    facts = " ".join(item.text for item in gold[:2])
    return f"According to {titles}: {facts} The evidence is consistent with the question, so the answer is {answer}."


def compose_scripted(plan: DialoguePlan) -> tuple[ChatMessage, ...]:
    """The dialogue of `plan`, written deterministically."""
    messages = [ChatMessage("system", SYSTEM_PROMPT)]
    for turn, question in enumerate(plan.user_turns):
        messages.append(ChatMessage("user", question))
        calls = [c for c in plan.calls if c.user_turn == turn]
        rounds = sorted({c.round for c in calls})
        previous: list[PlannedCall] = []
        for number, round_ in enumerate(rounds):
            batch = [c for c in calls if c.round == round_]
            reasoning = _round_reasoning(plan, batch, previous, question, number == 0)
            tool_calls = tuple(ToolCall(c.call_id, c.tool, dict(c.arguments)) for c in batch)
            messages.append(ChatMessage("assistant", "", reasoning=reasoning, tool_calls=tool_calls))
            messages += [
                ChatMessage("tool", render_observation(c.evidence), tool_call_id=c.call_id, name=c.tool) for c in batch
            ]
            previous = batch
        answer = plan.turn_answers[turn]
        messages.append(ChatMessage("assistant", answer, reasoning=_answer_reasoning(calls, answer)))
    return tuple(messages)
