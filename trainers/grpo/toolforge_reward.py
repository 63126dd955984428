"""ToolForge's GRPO reward: the first tool call of a completion scored by the validator's rule layers.

The completion's first `<tool_call>` JSON block is checked as the schema and grounding layers check a written
call: a call that does not parse gets `unparsed` (−1); one that parses earns a quarter for each of
naming an offered tool, naming the planned first tool, arguments valid under that tool's strict parameter
schema (`rules.strict_parameters`), and arguments equal to the planned ones (normalised as the grounding layer
compares values; each planned key a share of the quarter). Row columns: `tools` (JSON strings or dicts),
`first_tool` and `first_arguments` (a JSON object string or dict).
"""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from typing import Any

from synth.trainers.grpo.rewards import RewardFunction, column, completion_text


def _tool_parameters(tools: Any) -> dict[str, Mapping[str, Any]]:
    from synth.validators.toolforge.rules import offered_tools

    values = json.loads(tools) if isinstance(tools, str) else tools
    return offered_tools({"tools": list(values or ())})


def _as_dict(value: Any) -> dict[str, Any] | None:
    if isinstance(value, str):
        try:
            value = json.loads(value)
        except json.JSONDecodeError:
            return None
    return dict(value) if isinstance(value, Mapping) else None


def score_first_call(
    text: str, *, tools: Any, first_tool: str | None, first_arguments: Any, unparsed: float = -1.0
) -> float:
    """The reward of one completion (module docstring)."""
    import jsonschema

    from synth.trainers.sft.train import parse_first_tool_call
    from synth.validators.toolforge.rules import _same_value, strict_parameters

    call = parse_first_tool_call(text)
    if call is None or not isinstance(call["arguments"], dict):
        return unparsed
    offered = _tool_parameters(tools)
    score = 0.0
    if call["name"] in offered:
        score += 0.25
        validator = jsonschema.Draft202012Validator(strict_parameters(offered[call["name"]]))
        score += 0.25 * validator.is_valid(call["arguments"])
    if call["name"] == first_tool:
        score += 0.25
        planned = _as_dict(first_arguments) or {}
        if planned:
            matched = sum(
                key in call["arguments"] and _same_value(call["arguments"][key], v) for key, v in planned.items()
            )
            score += 0.25 * matched / len(planned)
        else:
            score += 0.25 * (not call["arguments"])
    return score


def toolforge_first_call_reward(*, unparsed: float = -1.0) -> RewardFunction:
    """The reward factory registered as `toolforge_first_call`."""

    def reward(prompts: Sequence[Any], completions: Sequence[Any], **columns: Any) -> list[float | None]:
        count = len(completions)
        rows = zip(
            completions,
            column(columns, "tools", count),
            column(columns, "first_tool", count),
            column(columns, "first_arguments", count),
            strict=True,
        )
        return [
            None
            if tools is None
            else score_first_call(
                completion_text(c), tools=tools, first_tool=tool, first_arguments=args, unparsed=unparsed
            )
            for c, tools, tool, args in rows
        ]

    return reward  # type: ignore[return-value]
