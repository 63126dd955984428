"""ToolForge's shared data model: tools, seeds, the dialogue plan (trusted) and the dialogue (untrusted).

A row holds two views of one dialogue:

- the **plan**, authored by the generator: paradigm, case script, which tools were offered and which is gold,
  and for every tool call in order its step kind and the simulated observation (evidence items with gold flags);
- the **messages**, written by a backend (the scripted composer or an LLM) from that plan, in OpenAI style.

Validators check that the messages realise the plan and are grounded in the seed. The plan is never corrupted by
the MCTS audit; the messages are.

Message conventions (what the scripted composer writes and the validators check):

1. one `system` message (role prompt and reflection instructions; the tool list travels in the row's `tools`);
2. `user` messages: `plan.user_turns[k]` (one for every paradigm but `multi_turn`, which has follow-ups);
3. an assistant tool turn per round: `reasoning` (think text naming every tool it calls), empty `content`,
   `tool_calls` = the round's planned calls in order (id = `call_id`, name = `tool`, `arguments`);
4. one `tool` message per call, in call order: `tool_call_id`, `name` = the tool, `content` =
   `render_observation(call.evidence)`;
5. after the last round of a user turn, an assistant answer turn: `reasoning`, `content` = `plan.turn_answers[k]`
   (the last equals the seed answer), no calls;
6. the assistant turn right after a failed call reflects: its reasoning states the failure and names the failed
   call's `faulty` (the tool or argument at fault) before retrying.
"""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any, Literal

Paradigm = Literal["single", "parallel", "multi_hop", "multi_turn"]

StepKind = Literal["gold", "wrong_tool", "wrong_arguments", "misleading", "insufficient"]
"""What a call in the plan is: the right call with gold evidence, or one of the failure kinds that a later call
repairs (wrong tool chosen; right tool with a wrong required argument; right call whose result misses the gold
evidence and must be re-queried; a fallback specialist whose result is insufficient)."""
FAILED_KINDS: frozenset[str] = frozenset({"wrong_tool", "wrong_arguments", "misleading", "insufficient"})

RetrievalMode = Literal["successful", "misleading"]


@dataclass(frozen=True, slots=True)
class ToolSpec:
    """A virtual tool: OpenAI function fields plus its family (the base tool it derives from) and origin."""

    name: str
    description: str
    parameters: Mapping[str, Any]
    family: str
    origin: Literal["base", "variant", "user"] = "base"

    @property
    def required(self) -> tuple[str, ...]:
        """Names of the required parameters."""
        return tuple(self.parameters.get("required", ()))

    @property
    def properties(self) -> Mapping[str, Any]:
        """The parameter schemas by name."""
        return self.parameters.get("properties", {})

    def to_openai(self) -> dict[str, Any]:
        """`{"type": "function", "function": {name, description, parameters}}`."""
        return {
            "type": "function",
            "function": {"name": self.name, "description": self.description, "parameters": dict(self.parameters)},
        }

    def to_json(self) -> str:
        """Canonical JSON of the OpenAI form (what rows store in `tools`)."""
        return json.dumps(self.to_openai(), sort_keys=True, ensure_ascii=False)

    @classmethod
    def from_openai(cls, value: Mapping[str, Any], *, family: str, origin: str = "user") -> ToolSpec:
        """Build from an OpenAI tool dict (with or without the `function` wrapper)."""
        function = value.get("function", value)
        return cls(
            name=function["name"],
            description=function.get("description", ""),
            parameters=function.get("parameters", {"type": "object", "properties": {}}),
            family=family,
            origin=origin,  # type: ignore[arg-type]
        )


@dataclass(frozen=True, slots=True)
class Passage:
    """A titled paragraph of a seed's context, split into sentences."""

    title: str
    sentences: tuple[str, ...]


@dataclass(frozen=True, slots=True)
class SubQuestion:
    """One step of a question decomposition (MuSiQue), `#k` referring to earlier answers."""

    question: str
    answer: str
    passage: int


@dataclass(frozen=True, slots=True)
class QASeed:
    """A multi-hop QA record normalised from HotpotQA, 2WikiMultihopQA or MuSiQue.

    `supporting` lists gold sentences as (passage index, sentence index) pairs into `passages`.
    """

    seed_id: str
    source: str
    question: str
    answer: str
    qtype: str
    passages: tuple[Passage, ...]
    supporting: tuple[tuple[int, int], ...]
    aliases: tuple[str, ...] = ()
    decomposition: tuple[SubQuestion, ...] = ()
    level: str = ""

    def sentence(self, ref: tuple[int, int]) -> str:
        """The text of one sentence reference."""
        passage, index = ref
        return self.passages[passage].sentences[index]

    def gold_passages(self) -> tuple[int, ...]:
        """Indices of the passages holding gold sentences, in first-mention order."""
        return tuple(dict.fromkeys(p for p, _ in self.supporting))


@dataclass(frozen=True, slots=True)
class Evidence:
    """One retrieved sentence as a tool result item."""

    passage: int
    sentence: int
    title: str
    text: str
    gold: bool

    def to_dict(self) -> dict[str, Any]:
        return {
            "passage": self.passage,
            "sentence": self.sentence,
            "title": self.title,
            "text": self.text,
            "gold": self.gold,
        }


@dataclass(frozen=True, slots=True)
class PlannedCall:
    """One tool call of the plan, in dialogue order.

    `round` counts assistant tool-calling turns from 0; calls with the same round run in parallel. `tool` is
    the tool the call must name; `gold_tool` the tool that would have been right (differs for `wrong_tool`);
    `faulty` names what is wrong in a failed call (the tool name or the argument name), empty for gold calls;
    `evidence` is the simulated observation the call returns; `user_turn` is the user message it answers.
    """

    call_id: str
    round: int
    kind: StepKind
    tool: str
    gold_tool: str
    query: str
    arguments: Mapping[str, Any]
    evidence: tuple[Evidence, ...]
    faulty: str = ""
    user_turn: int = 0

    @property
    def mode(self) -> RetrievalMode:
        """`successful` when the observation holds gold evidence, else `misleading`."""
        return "successful" if any(item.gold for item in self.evidence) else "misleading"


@dataclass(frozen=True, slots=True)
class DialoguePlan:
    """Everything the generator decided before any message is written."""

    paradigm: Paradigm
    paradigm_reason: str
    case: str
    reflection: tuple[str, ...]
    calls: tuple[PlannedCall, ...]
    user_turns: tuple[str, ...]
    turn_answers: tuple[str, ...]
    gold_tools: Mapping[str, str] = field(default_factory=dict)

    @property
    def rounds(self) -> int:
        """Number of assistant tool-calling rounds."""
        return 1 + max((c.round for c in self.calls), default=-1)


@dataclass(frozen=True, slots=True)
class ToolCall:
    """An assistant's tool call; `arguments` is a dict here and a JSON string in rows (OpenAI wire form)."""

    id: str
    name: str
    arguments: Mapping[str, Any]


@dataclass(frozen=True, slots=True)
class ChatMessage:
    """One OpenAI-style message; `reasoning` holds the assistant's think text, kept apart from `content`."""

    role: Literal["system", "user", "assistant", "tool"]
    content: str = ""
    reasoning: str = ""
    tool_calls: tuple[ToolCall, ...] = ()
    tool_call_id: str = ""
    name: str = ""


def render_observation(items: Sequence[Evidence]) -> str:
    """The text of a tool message: `**k**` blocks with `title:` and `content:` lines (ToolForge's format)."""
    if not items:
        return "No results found."
    return "\n".join(f"**{k}**\ntitle: {item.title}\ncontent: {item.text.strip()}" for k, item in enumerate(items, 1))


def parse_observation(text: str) -> list[tuple[str, str]]:
    """(title, content) pairs of a tool message written by `render_observation`; [] for other text."""
    items: list[tuple[str, str]] = []
    title: str | None = None
    for line in text.splitlines():
        if line.startswith("title: "):
            title = line[len("title: ") :]
        elif line.startswith("content: ") and title is not None:
            items.append((title, line[len("content: ") :]))
            title = None
    return items
