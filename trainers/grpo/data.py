"""GRPO prompt datasets from synth datasets: MARCO instructions, ToolForge first user turns, OptiScribe requests.

Prompts are rendered to text by the policy's own chat template (tools included), so TRL tokenises exactly what
the model will see when it is served. Each row keeps the columns its reward reads: MARCO `source_smiles`, `task`
(and `source_id`, `setting`); ToolForge `tools`, `first_tool`, `first_arguments` (JSON); OptiScribe `instruction`,
`instance_seed` (in a size curriculum, smallest first).
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Literal

from synth.core.errors import InputError

Domain = Literal["marco", "toolforge", "optiscribe"]
DOMAINS: tuple[Domain, ...] = ("marco", "toolforge", "optiscribe")
MARCO_COLUMNS = ("source_id", "setting", "task", "source_smiles", "instruction")


@dataclass(frozen=True)
class PromptRow:
    """One prompt: the messages, the text the template renders, and the reward's columns."""

    key: str
    messages: tuple[dict[str, Any], ...]
    tools: tuple[dict[str, Any], ...]
    columns: dict[str, Any]


def dataset_domain(dataset_dir: str | Path) -> Domain:
    """The domain of a synth dataset, refused with one line unless GRPO supports it."""
    from synth.core.dataset import open_dataset

    domain = open_dataset(dataset_dir, needs="GRPO").domain
    if domain not in DOMAINS:
        names = f"{', '.join(DOMAINS[:-1])} or {DOMAINS[-1]}"
        msg = f"{dataset_dir}: a {domain} dataset; synth train grpo takes {names} datasets"
        raise InputError(msg)
    return domain  # type: ignore[return-value]


def marco_prompts(dataset_dir: str | Path) -> list[PromptRow]:
    """One prompt per (source, setting) of a MARCO dataset (its K trajectories share the instruction)."""
    from synth.core.dataset import read_records
    from synth.generators.marco.prompts import SYSTEM_PROMPT

    rows = read_records(dataset_dir, columns=MARCO_COLUMNS, domain="marco", needs="GRPO")
    seen: dict[str, PromptRow] = {}
    for row in rows:
        key = f"{row['task']}:{row['source_id']}:{row['setting']}"
        if key not in seen:
            messages = ({"role": "system", "content": SYSTEM_PROMPT}, {"role": "user", "content": row["instruction"]})
            columns = {k: row[k] for k in ("source_id", "setting", "task", "source_smiles")}
            seen[key] = PromptRow(key, messages, (), columns)
    return [seen[key] for key in sorted(seen)]


def toolforge_prompts(dataset_dir: str | Path, *, eval_rows: int, seed: int) -> tuple[list[PromptRow], list[Any]]:
    """(train prompts, held-out `SftExample`s): the same seeded split as `synth train sft`, so held-out stays out."""
    from synth.trainers.sft.data import read_sft_rows, split_examples, to_examples

    train, held = split_examples(to_examples(read_sft_rows(dataset_dir)), eval_rows=eval_rows, seed=seed)
    prompts = [
        PromptRow(
            example.id,
            tuple(example.prompt()),
            example.tools,
            {
                "tools": [json.dumps(t, sort_keys=True) for t in example.tools],
                "first_tool": example.first_tool,
                "first_arguments": json.dumps(example.first_arguments, sort_keys=True),
            },
        )
        for example in train
        if example.first_tool is not None
    ]
    return prompts, held


def optiscribe_prompts(dataset_dir: str | Path) -> list[PromptRow]:
    """One prompt per (instruction, instance seed) of an OptiScribe dataset, smallest model first (the curriculum)."""
    from synth.generators.optiscribe.grpo_reward import curriculum_prompts

    return [PromptRow(p["key"], tuple(p["messages"]), (), dict(p["columns"])) for p in curriculum_prompts(dataset_dir)]


def optiscribe_scip_defaults(dataset_dir: str | Path) -> dict[str, Any]:
    """The `optiscribe_scip` reward settings of a dataset: the SCIP node cap, time limit and seed its rows record."""
    from synth.core.dataset import read_records

    rows = read_records(dataset_dir, columns=("scip_settings",), domain="optiscribe", needs="GRPO")
    recorded = json.loads(rows[0]["scip_settings"]) if rows else {}
    settings: dict[str, Any] = {"name": "optiscribe_scip"}
    for key, name in (("total_nodes", "total_nodes"), ("time_limit", "time_limit"), ("seed", "scip_seed")):
        if key in recorded:
            settings[name] = recorded[key]
    return settings


def render_prompt(tokenizer: Any, row: PromptRow) -> str:
    """The prompt text of `row` under the tokenizer's chat template, ending with the assistant header."""
    return tokenizer.apply_chat_template(
        list(row.messages), tools=list(row.tools) or None, tokenize=False, add_generation_prompt=True
    )


def to_hf_dataset(tokenizer: Any, rows: Sequence[PromptRow]) -> Any:
    """A `datasets.Dataset` with a text `prompt` column and the reward columns."""
    from datasets import Dataset

    if not rows:
        raise InputError("no GRPO prompts: the dataset has no usable rows")
    data: dict[str, list[Any]] = {"prompt": [render_prompt(tokenizer, r) for r in rows]}
    for name in rows[0].columns:
        data[name] = [r.columns[name] for r in rows]
    return Dataset.from_dict(data)
