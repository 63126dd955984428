"""First-call AST accuracy of models on held-out ToolForge dialogues exported as BFCL entries.

The held-out rows are those `synth train sft` / `synth train grpo` hold out (same seeded split); each is exported
with `to_bfcl` (rows whose first round is not all gold are skipped, as the BFCL export skips them). A model sees
the row's system prompt, tools and first user turn, decodes its first assistant turn greedily, and scores when its
first `<tool_call>` matches one of the entry's possible answers under BFCL's AST rules (`bfcl_ast_match`).
"""

from __future__ import annotations

from collections.abc import Mapping
from pathlib import Path
from typing import Any


def evaluate_bfcl_first_calls(
    models: Mapping[str, Path], dataset: Path, *, eval_rows: int = 8, seed: int = 0, max_new_tokens: int = 96
) -> dict[str, Any]:
    """Per model: parse rate and BFCL AST accuracy of the first call on the held-out entries."""
    from transformers import AutoModelForCausalLM, AutoTokenizer

    from synth.generators.toolforge.export import SkipRow, bfcl_ast_match, read_toolforge_rows, row_id, to_bfcl
    from synth.trainers.sft.data import read_sft_rows, split_examples, to_examples
    from synth.trainers.sft.train import greedy_first_turn, parse_first_tool_call

    rows = {row_id(row, i): row for i, row in enumerate(read_toolforge_rows(dataset))}
    _, held = split_examples(to_examples(read_sft_rows(dataset)), eval_rows=eval_rows, seed=seed)
    entries, skipped = [], 0
    for example in held:
        try:
            category, _, truth = to_bfcl(rows[example.id])
        except SkipRow:
            skipped += 1
            continue
        entries.append((example, category, truth["ground_truth"]))
    report: dict[str, Any] = {
        "dataset": str(dataset),
        "held_out": len(held),
        "entries": len(entries),
        "skipped": skipped,
    }
    report["categories"] = sorted({category for _, category, _ in entries})
    report["models"] = {}
    for name, folder in models.items():
        tokenizer = AutoTokenizer.from_pretrained(folder)
        model = AutoModelForCausalLM.from_pretrained(folder)
        texts = greedy_first_turn(model, tokenizer, [e for e, _, _ in entries], max_new_tokens)
        calls = [parse_first_tool_call(text) for text in texts]
        hits = [
            call is not None and any(bfcl_ast_match(call, possible) for possible in truth)
            for call, (_, _, truth) in zip(calls, entries, strict=True)
        ]
        n = len(entries)
        report["models"][name] = {
            "parse_rate": sum(c is not None for c in calls) / n if n else None,
            "ast_accuracy": sum(hits) / n if n else None,
            "hits": sum(hits),
            "sample": texts[0][:200] if texts else None,
        }
    return report
