"""MARCO trajectories as chat for SFT: system prompt, instruction, then each answer and its feedback as the next
user turn (the `llm` proposer's conversation), so a model learns GeLLMO's `<SMILES> … </SMILES>` answer format and
the revision turns before GRPO. Held-out rows are scored on their first answer: does it parse, is it a valid
molecule, does it succeed (the RDKit evaluator of the row's task).
"""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path
from typing import Any

from synth.trainers.sft.data import SftExample

MARCO_SFT_COLUMNS = ("task", "setting", "source_id", "source_smiles", "instruction", "turns")


def marco_messages(row: dict[str, Any]) -> tuple[dict[str, Any], ...]:
    """The chat of one trajectory row (the last turn's feedback is not part of it)."""
    from synth.generators.marco.prompts import REVISION_PROMPT, SYSTEM_PROMPT

    messages = [{"role": "system", "content": SYSTEM_PROMPT}, {"role": "user", "content": row["instruction"]}]
    turns = row["turns"] or []
    for index, turn in enumerate(turns):
        messages.append({"role": "assistant", "content": turn["response"]})
        if index + 1 < len(turns):
            messages.append({"role": "user", "content": REVISION_PROMPT.format(feedback=turn["feedback"])})
    return tuple(messages)


def marco_examples(dataset_dir: str | Path) -> list[SftExample]:
    """One example per trajectory row with at least one turn; `context` keeps the source and task for scoring."""
    from synth.core.dataset import read_records

    rows = read_records(dataset_dir, columns=MARCO_SFT_COLUMNS, optional=("id",), domain="marco", needs="SFT")
    examples = []
    for index, row in enumerate(rows):
        if not row["turns"]:
            continue
        ident = str(row.get("id") or f"{row['source_id']}-{row['setting']}-{index}")
        context = {"source_smiles": row["source_smiles"], "task": row["task"]}
        examples.append(SftExample(ident, marco_messages(row), (), None, None, context))
    return examples


def score_first_answers(
    model: Any, tokenizer: Any, examples: Sequence[SftExample], *, max_new_tokens: int
) -> dict[str, Any]:
    """Greedy-decode each example's first answer: parse rate (a `<SMILES>` answer), validity and success rates."""
    from synth.trainers.grpo.marco_reward import grade_answer
    from synth.trainers.sft.train import greedy_first_turn, held_out_rates
    from synth.validators.marco.answers import SMILES_PATTERN

    parsed = valid = success = 0
    samples = []
    for example, text in zip(examples, greedy_first_turn(model, tokenizer, examples, max_new_tokens), strict=True):
        context = example.context or {}
        graded, _ = grade_answer(text, source_smiles=context["source_smiles"], task=context["task"])
        parsed += SMILES_PATTERN.search(text) is not None
        valid += graded.valid
        success += graded.success
        if len(samples) < 2:
            samples.append({"id": example.id, "generated": text[:300]})
    return held_out_rates(len(examples), samples, parse_rate=parsed, validity=valid, success_rate=success)
