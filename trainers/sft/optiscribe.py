"""OptiScribe rows as chat for SFT: the LLM challenger learns the scripted challenger's answers.

Each kept row becomes system = the challenger's `SYSTEM_PROMPT`, user = the row's instruction, assistant = the
row's spec as compact JSON (`compact_spec`: no spaces, null fields left out), which is exactly what
`read_challenger_answer` validates and the `optiscribe_scip` GRPO reward scores. Held-out rows are scored on the
greedy answer: does it parse as a JSON object, is it a valid spec inside the instruction, and is its instance
(built with the row's `instance_seed`) feasible for SCIP under a small node cap.
"""

from __future__ import annotations

import contextlib
import json
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from synth.trainers.sft.data import SftExample

OPTISCRIBE_SFT_COLUMNS = ("instruction", "spec", "instance_seed")
SCORE_TOTAL_NODES = 100  # held-out feasibility needs a solution, not a proof: a small cap keeps scoring fast


def compact_spec(spec_json: str) -> str:
    """A spec's JSON as the challenger should write it: no spaces, no null or empty fields, and the fields in
    `SPEC_SCHEMA`'s order (family and sizes, copied from the instruction, before the knobs it leaves open)."""
    from synth.generators.optiscribe.llm import SPEC_SCHEMA

    data = json.loads(spec_json)
    order = list(SPEC_SCHEMA["properties"])
    kept = {key: data[key] for key in sorted(data, key=order.index) if data[key] is not None and data[key] != {}}
    return json.dumps(kept, separators=(",", ":"))


def optiscribe_messages(instruction: str, answer: str) -> tuple[dict[str, Any], ...]:
    """The chat of one row: the challenger's system prompt, the instruction, the spec."""
    from synth.generators.optiscribe.llm import SYSTEM_PROMPT

    return (
        {"role": "system", "content": SYSTEM_PROMPT},
        {"role": "user", "content": instruction},
        {"role": "assistant", "content": answer},
    )


def optiscribe_examples(dataset_dir: str | Path) -> list[SftExample]:
    """One example per kept row; `context` keeps the instruction and instance seed for scoring."""
    from synth.core.dataset import read_records

    rows = read_records(dataset_dir, columns=OPTISCRIBE_SFT_COLUMNS, optional=("id",), domain="optiscribe", needs="SFT")
    examples = []
    for index, row in enumerate(rows):
        ident = str(row.get("id") or f"optiscribe-{index}")
        context = {"instruction": row["instruction"], "instance_seed": int(row["instance_seed"])}
        messages = optiscribe_messages(row["instruction"], compact_spec(row["spec"]))
        examples.append(SftExample(ident, messages, (), None, None, context))
    return examples


def score_first_specs(
    model: Any, tokenizer: Any, examples: Sequence[SftExample], *, max_new_tokens: int
) -> dict[str, Any]:
    """Greedy-decode each example's answer: parse rate (a JSON object), validity (a spec inside the instruction)
    and success rate (its instance is feasible for SCIP, capped at `SCORE_TOTAL_NODES` nodes)."""
    from synth.generators.optiscribe.build import build_model_text
    from synth.generators.optiscribe.llm import read_challenger_answer
    from synth.trainers.sft.train import greedy_first_turn, held_out_rates
    from synth.validators.optiscribe.scip import ScipSettings, solve_model_text

    scip = ScipSettings(total_nodes=SCORE_TOTAL_NODES, time_limit=30.0)
    parsed = valid = success = 0
    samples = []
    for example, text in zip(examples, greedy_first_turn(model, tokenizer, examples, max_new_tokens), strict=True):
        context = example.context or {}
        with contextlib.suppress(json.JSONDecodeError):
            parsed += isinstance(json.loads(text), dict)
        answer = read_challenger_answer(text, instruction=context["instruction"])
        if answer.reason is None and answer.spec is not None:
            valid += 1
            model_text = build_model_text(answer.spec, seed=context["instance_seed"])
            success += solve_model_text(model_text, settings=scip).feasible
        if len(samples) < 2:
            samples.append({"id": example.id, "generated": text[:300], "refused": answer.code})
    return held_out_rates(len(examples), samples, parse_rate=parsed, validity=valid, success_rate=success)
