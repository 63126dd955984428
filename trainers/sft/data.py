"""Read a synth tool-use dataset (`messages` + `tools` columns) and encode it for supervised fine-tuning.

Rows store messages in OpenAI wire form (`reasoning` apart from `content`, `arguments` a JSON string) and `tools`
as JSON strings. `template_messages` turns them into what chat templates expect (`reasoning_content`, `arguments`
as a dict); `encode_dialogue` renders one dialogue and labels only the assistant tokens (the template's
`{% generation %}` blocks), every other token is -100.
"""

from __future__ import annotations

import json
import random
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

REQUIRED_COLUMNS = ("messages", "tools")
IGNORE = -100


@dataclass(frozen=True)
class SftExample:
    """One dialogue ready for a chat template, with the tool its first assistant turn should call."""

    id: str
    messages: tuple[dict[str, Any], ...]
    tools: tuple[dict[str, Any], ...]
    first_tool: str | None
    first_arguments: dict[str, Any] | None = None
    context: dict[str, Any] | None = None

    def prompt(self) -> list[dict[str, Any]]:
        """The messages up to and including the first user turn (what the first assistant turn answers)."""
        out: list[dict[str, Any]] = []
        for message in self.messages:
            out.append(message)
            if message["role"] == "user":
                break
        return out


@dataclass(frozen=True)
class EncodedDialogue:
    """Token ids and labels (-100 outside assistant turns) of one rendered dialogue."""

    input_ids: list[int]
    labels: list[int]
    truncated: bool


def read_sft_rows(dataset_dir: str | Path) -> list[dict[str, Any]]:
    """The rows of a synth tool-use dataset (only the columns SFT uses), in shard order.

    Raises `InputError` when there are no shards or a required column is missing (naming it).
    """
    from synth.core.dataset import read_records

    return read_records(
        dataset_dir, columns=REQUIRED_COLUMNS, optional=("id", "seed_id", "plan"), domain="toolforge", needs="SFT"
    )


def read_examples(dataset_dir: str | Path) -> tuple[str, list[SftExample]]:
    """(domain, examples) of a ToolForge dialogue dataset, or a MARCO trajectory / OptiScribe dataset (as chat)."""
    from synth.core.dataset import open_dataset

    domain = open_dataset(dataset_dir, domain=("toolforge", "marco", "optiscribe"), needs="SFT").domain
    if domain == "marco":
        from synth.trainers.sft.marco import marco_examples

        return domain, marco_examples(dataset_dir)
    if domain == "optiscribe":
        from synth.trainers.sft.optiscribe import optiscribe_examples

        return domain, optiscribe_examples(dataset_dir)
    return domain, to_examples(read_sft_rows(dataset_dir))


def _arguments(value: Any) -> Any:
    if not isinstance(value, str):
        return value
    try:
        return json.loads(value)
    except json.JSONDecodeError:
        return value


def template_messages(messages: Sequence[Mapping[str, Any]]) -> list[dict[str, Any]]:
    """Wire-form messages as chat templates take them: `reasoning_content`, dict `arguments`, no empty fields."""
    out = []
    for message in messages:
        item: dict[str, Any] = {"role": message["role"], "content": message.get("content") or ""}
        if message["role"] == "assistant":
            if message.get("reasoning"):
                item["reasoning_content"] = message["reasoning"]
            calls = [
                {
                    "id": call.get("id") or "",
                    "type": "function",
                    "function": {
                        "name": call["function"]["name"],
                        "arguments": _arguments(call["function"]["arguments"]),
                    },
                }
                for call in message.get("tool_calls") or ()
            ]
            if calls:
                item["tool_calls"] = calls
        elif message["role"] == "tool":
            item["tool_call_id"] = message.get("tool_call_id") or ""
            item["name"] = message.get("name") or ""
        out.append(item)
    return out


def first_planned_call(row: Mapping[str, Any]) -> tuple[str | None, dict[str, Any] | None]:
    """(tool, arguments) of the plan's first call (lowest round, call order), else of the first call in `messages`."""
    plan = row.get("plan") or []
    if plan:
        call = min(enumerate(plan), key=lambda item: (item[1]["round"], item[0]))[1]
        arguments = _arguments(call["arguments"])
        return str(call["tool"]), arguments if isinstance(arguments, dict) else None
    for message in row["messages"]:
        for wire in message.get("tool_calls") or ():
            arguments = _arguments(wire["function"]["arguments"])
            return str(wire["function"]["name"]), arguments if isinstance(arguments, dict) else None
    return None, None


def to_examples(rows: Sequence[Mapping[str, Any]]) -> list[SftExample]:
    """One `SftExample` per row; ids from `id`, else `seed_id`, else the row index."""
    examples = []
    for index, row in enumerate(rows):
        tools = row["tools"]
        if isinstance(tools, str):
            tools = json.loads(tools)
        parsed = tuple(json.loads(t) if isinstance(t, str) else dict(t) for t in tools or ())
        ident = str(row.get("id") or f"{row.get('seed_id') or 'row'}-{index}")
        tool, arguments = first_planned_call(row)
        examples.append(SftExample(ident, tuple(template_messages(row["messages"])), parsed, tool, arguments))
    return examples


def split_examples(
    examples: Sequence[SftExample], *, eval_rows: int, seed: int
) -> tuple[list[SftExample], list[SftExample]]:
    """(train, held-out): a seeded shuffle of the id-sorted examples, the last `eval_rows` held out.

    At least one example always stays in train; `eval_rows` is cut to fit.
    """
    ordered = sorted(examples, key=lambda e: e.id)
    random.Random(seed).shuffle(ordered)
    held = max(0, min(eval_rows, len(ordered) - 1))
    return ordered[: len(ordered) - held], ordered[len(ordered) - held :]


def assistant_turns_end(labels: Sequence[int], turns: int) -> int:
    """The index just past the `turns`-th run of labelled tokens (the whole sequence when it has fewer)."""
    seen, inside = 0, False
    for index, label in enumerate(labels):
        if label != IGNORE and not inside:
            inside = True
        elif label == IGNORE and inside:
            inside, seen = False, seen + 1
            if seen == turns:
                return index
    return len(labels)


def encode_dialogue(
    tokenizer: Any, example: SftExample, *, max_length: int, assistant_turns: int | None = None
) -> EncodedDialogue:
    """Render `example` with the tokenizer's chat template; labels keep only the assistant tokens.

    With `assistant_turns`, the dialogue ends after its first that many assistant turns (cheaper training on
    what is scored: the first answer or call). Sequences longer than `max_length` keep their start (the system
    and user turns) and are marked truncated.
    """
    encoded = tokenizer.apply_chat_template(
        list(example.messages),
        tools=list(example.tools) or None,
        tokenize=True,
        return_dict=True,
        return_assistant_tokens_mask=True,
    )
    ids = list(encoded["input_ids"])
    mask = list(encoded["assistant_masks"])
    labels = [token if keep else IGNORE for token, keep in zip(ids, mask, strict=True)]
    if assistant_turns is not None:
        end = assistant_turns_end(labels, assistant_turns)
        ids, labels = ids[:end], labels[:end]
    truncated = len(ids) > max_length
    return EncodedDialogue(ids[:max_length], labels[:max_length], truncated)


def encode_prompt(tokenizer: Any, example: SftExample) -> list[int]:
    """Token ids of system + first user turn + the assistant header (what generation continues)."""
    encoded = tokenizer.apply_chat_template(
        example.prompt(), tools=list(example.tools) or None, tokenize=True, add_generation_prompt=True, return_dict=True
    )
    return list(encoded["input_ids"])
