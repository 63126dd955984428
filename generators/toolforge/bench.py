"""`synth bench toolforge`: generation cost, validation acceptance, and the MCTS audit before/after.

One run measures, on the same seeds and rows:

- generation: dialogues per second and seconds per accepted dialogue for the scripted writer, and for the LLM
  writer on the scripted backend (which also counts LLM calls per accepted dialogue);
- validation: the share of generated dialogues every layer accepts (acceptance of valid dialogues) and the
  validation seconds per dialogue;
- the audit of two validators on the same valid rows: ToolForge's original checks (`TOOLFORGE_BASELINE_LAYERS`)
  and all of synth's layers: false-reject rate, recall on random corruptions and on MCTS-mined hard negatives,
  and the operators each validator misses.
"""

from __future__ import annotations

import time
from collections import Counter
from collections.abc import Mapping, Sequence
from typing import Any

from synth.core.steps import ShardContext
from synth.generators.toolforge.generator import ToolForgeGenerator


def _generate(writer: str, *, seeds: Sequence[str], limit: int | None, seed: int) -> tuple[list[dict], list, float]:
    generator = ToolForgeGenerator(name=f"toolforge-{writer}", seeds=tuple(seeds), limit=limit, writer=writer)  # type: ignore[arg-type]
    ctx = ShardContext(seed=seed, shard_index=0, num_shards=1, config_hash="bench")
    start = time.perf_counter()
    rows: list[dict] = []
    rejections: list = []
    for batch in generator.generate(ctx):
        rows += batch.rows
        rejections += batch.rejections
    return rows, rejections, time.perf_counter() - start


def _validate(rows: Sequence[Mapping[str, Any]]) -> tuple[list[bool], Counter[str], float]:
    from synth.validators.toolforge.verifiers import LAYERS, validate_row

    start = time.perf_counter()
    passed, failing = [], Counter()
    for row in rows:
        results = validate_row(row, LAYERS)
        passed.append(not any(results.values()))
        failing.update(layer for layer, reasons in results.items() if reasons)
    return passed, failing, time.perf_counter() - start


def bench_toolforge(
    *,
    seeds: Sequence[str] = (),
    limit: int | None = None,
    seed: int = 0,
    audit_rows: int = 40,
    iterations: int = 60,
    random_per_row: int = 20,
) -> dict[str, Any]:
    """The whole report (see the module docstring)."""
    from synth.validators.toolforge.audit import run_audit, spread
    from synth.validators.toolforge.verifiers import LAYERS, TOOLFORGE_BASELINE_LAYERS

    rows, rejections, seconds = _generate("scripted", seeds=seeds, limit=limit, seed=seed)
    passed, failing, validation_seconds = _validate(rows)
    accepted = [row for row, ok in zip(rows, passed, strict=True) if ok]
    llm_rows, _, llm_seconds = _generate("llm", seeds=seeds, limit=limit, seed=seed)
    llm_passed, _, llm_validation = _validate(llm_rows)
    llm_calls = sum(row["llm_calls"] for row in llm_rows)

    audited = spread(accepted, audit_rows)
    before = run_audit(
        audited, layers=TOOLFORGE_BASELINE_LAYERS, iterations=iterations, seed=seed, random_per_row=random_per_row
    )
    after = run_audit(audited, layers=LAYERS, iterations=iterations, seed=seed, random_per_row=random_per_row)
    return {
        "settings": {
            "seeds": list(seeds) or "shipped",
            "limit": limit,
            "seed": seed,
            "audit_rows": len(audited),
            "mcts_iterations_per_row": iterations,
            "random_per_row": random_per_row,
        },
        "generation": {
            "dialogues": len(rows),
            "generator_rejections": dict(Counter(r.reason for r in rejections)),
            "paradigm": dict(Counter(row["paradigm"] for row in rows)),
            "case_kind": dict(Counter(row["case_kind"] for row in rows)),
            "retrieval_modes": dict(Counter(mode for row in rows for mode in row["retrieval_modes"])),
            "scripted": {
                "seconds": round(seconds, 3),
                "validation_seconds": round(validation_seconds, 3),
                "seconds_per_accepted": round((seconds + validation_seconds) / max(len(accepted), 1), 5),
                "llm_calls_per_accepted": 0.0,
            },
            "llm_writer_scripted_backend": {
                "seconds": round(llm_seconds, 3),
                "validation_seconds": round(llm_validation, 3),
                "accepted": sum(llm_passed),
                "seconds_per_accepted": round((llm_seconds + llm_validation) / max(sum(llm_passed), 1), 5),
                "llm_calls_per_accepted": round(llm_calls / max(sum(llm_passed), 1), 4),
            },
        },
        "validation": {
            "acceptance": round(len(accepted) / max(len(rows), 1), 6),
            "accepted": len(accepted),
            "rejected_by_layer": dict(failing),
        },
        "audit": {"before_toolforge_checks": before, "after_all_layers": after},
    }
