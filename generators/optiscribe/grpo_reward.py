"""The OptiScribe GRPO reward: a challenger's completion scored by SCIP (feasibility gate, nodes, post-cut gap).

A completion is a JSON instance spec or LP text answering the row's instruction. It is validated before anything
is solved (`read_challenger_answer`: the spec must build and stay inside the instruction; LP text must parse and
its measured sizes and density must be the asked ones); a refused answer gets `refused` (default −0.5, below
any valid instance, so format errors are pushed down). A valid answer is built with the row's `instance_seed`
(a stable hash of the instruction when the column is absent), solved under fixed SCIP settings with a node cap,
and scored by `request_reward`: the hardness reward (0 when infeasible) for a hard or unbanded request, the band
reward when the instruction asks easy / medium / a node target. Row columns: `instruction` (else the prompt's
last user message) and optionally `instance_seed`. TRL's contract: `reward(prompts, completions, **columns)`.
"""

from __future__ import annotations

import hashlib
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

from synth.generators.optiscribe.build import build_model_text
from synth.generators.optiscribe.llm import read_challenger_answer
from synth.validators.optiscribe.grammar import parse_instruction
from synth.validators.optiscribe.reward import RewardSettings, request_reward
from synth.validators.optiscribe.scip import ScipSettings, solve_model_text
from synth.validators.optiscribe.spec import SpecError


def _text(value: Any) -> str:
    if isinstance(value, str):
        return value
    if isinstance(value, Sequence) and value and isinstance(value[-1], dict):
        return str(value[-1].get("content", ""))
    return ""


def _last_user(prompt: Any) -> str:
    if isinstance(prompt, Sequence) and not isinstance(prompt, str):
        users = [m.get("content", "") for m in prompt if isinstance(m, dict) and m.get("role") == "user"]
        return str(users[-1]) if users else ""
    return str(prompt)


def stable_seed(instruction: str) -> int:
    """A seed from the instruction text (the same on every machine and run)."""
    return int.from_bytes(hashlib.sha256(instruction.encode()).digest()[:8], "big") >> 2


def score_answer(
    text: str,
    *,
    instruction: str,
    seed: int,
    scip: ScipSettings,
    reward: RewardSettings | None = None,
    refused: float = -0.5,
) -> float:
    """The reward of one answer to `instruction` (module docstring); an unparseable instruction is `refused`."""
    try:
        request = parse_instruction(instruction)
        answer = read_challenger_answer(text, instruction=instruction)
    except SpecError:
        return refused
    if answer.reason is not None:
        return refused
    model_text = build_model_text(answer.spec, seed=seed) if answer.spec is not None else answer.model_text or ""
    stats = solve_model_text(model_text, settings=scip)
    return request_reward(stats.to_dict(), request.effort(), reward)


def curriculum_prompts(dataset_dir: str | Path) -> list[dict[str, Any]]:
    """GRPO prompts from an OptiScribe dataset, one per distinct (instruction, instance seed), in a size curriculum:
    ordered by the model's variable count (smallest first), then by instruction and seed. Each is
    `{"key", "messages", "columns": {"instruction", "instance_seed"}}`, the shape a prompt loader wraps."""
    import json

    from synth.core.dataset import read_records
    from synth.generators.optiscribe.llm import SYSTEM_PROMPT

    rows = read_records(
        dataset_dir, columns=("instruction", "instance_seed", "solve_stats"), domain="optiscribe", needs="GRPO"
    )
    seen: dict[tuple[str, int], int] = {}
    for row in rows:
        key = (row["instruction"], int(row["instance_seed"]))
        seen.setdefault(key, int(json.loads(row["solve_stats"])["variables"]))
    ordered = sorted(seen, key=lambda key: (seen[key], key))
    return [
        {
            "key": f"{instruction}#{seed}",
            "messages": ({"role": "system", "content": SYSTEM_PROMPT}, {"role": "user", "content": instruction}),
            "columns": {"instruction": instruction, "instance_seed": seed},
        }
        for instruction, seed in ordered
    ]


def optiscribe_scip_reward(
    *,
    total_nodes: int = 2000,
    time_limit: float = 60.0,
    scip_seed: int = 0,
    refused: float = -0.5,
    node_weight: float = 0.7,
    gap_weight: float = 0.3,
    gap_cap: float = 0.25,
    node_cap: int | None = None,
    hard_margin: float = 0.0,
) -> Callable[..., list[float | None]]:
    """A TRL reward function scoring challenger completions with SCIP (registered as `optiscribe_scip`); the node
    share saturates at `node_cap` (default: the solver's `total_nodes`); `hard_margin` as in `RewardSettings`."""
    scip = ScipSettings(seed=scip_seed, total_nodes=total_nodes, time_limit=time_limit)
    settings = RewardSettings(
        node_weight=node_weight,
        gap_weight=gap_weight,
        node_cap=node_cap or total_nodes,
        gap_cap=gap_cap,
        hard_margin=hard_margin,
    )

    def reward(prompts: Sequence[Any], completions: Sequence[Any], **columns: Any) -> list[float | None]:
        instructions = columns.get("instruction") or [_last_user(p) for p in prompts]
        seeds = columns.get("instance_seed") or [stable_seed(i) for i in instructions]
        return [
            score_answer(_text(c), instruction=i, seed=int(s), scip=scip, reward=settings, refused=refused)
            for c, i, s in zip(completions, instructions, seeds, strict=True)
        ]

    return reward
