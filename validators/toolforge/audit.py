"""The validator audit: false rejects on valid rows, recall on random and on MCTS-mined corruptions.

`run_audit` validates the valid rows, corrupts each with `random_per_row` random operator paths of length 1–3,
mines hard negatives with MCTS against the same layers, and reports recall on both, the operators behind the
misses, each layer's detection rate and the wall time. `negatives_table` turns mined negatives into a preference
dataset (prompt, chosen, rejected) for training.
"""

from __future__ import annotations

import time
from collections import Counter
from collections.abc import Mapping, Sequence
from typing import Any

import numpy as np
import pyarrow as pa

from synth.validators.toolforge.corruptions import OPERATORS, CorruptionOperator, apply_action
from synth.validators.toolforge.mcts import MinedNegative, messages_hash, mine_negatives, row_key
from synth.validators.toolforge.records import MESSAGE_TYPE
from synth.validators.toolforge.verifiers import LAYERS, validate_row

EMPTY_MESSAGE: dict[str, Any] = {
    "role": "",
    "content": "",
    "reasoning": "",
    "tool_calls": [],
    "tool_call_id": "",
    "name": "",
}
NEGATIVES_SCHEMA = pa.schema(
    [
        ("parent_id", pa.string()),
        ("seed_id", pa.string()),
        ("question", pa.string()),
        ("prompt", pa.list_(MESSAGE_TYPE)),
        ("chosen", pa.list_(MESSAGE_TYPE)),
        ("rejected", pa.list_(MESSAGE_TYPE)),
        ("operators", pa.list_(pa.string())),
        ("positions", pa.list_(pa.list_(pa.int32()))),
        ("layers_failed", pa.list_(pa.string())),
        ("accepted", pa.bool_()),
    ]
)


def random_negatives(
    row: Mapping[str, Any],
    *,
    count: int,
    layers: Sequence[str],
    seed: int,
    operators: Sequence[CorruptionOperator] = OPERATORS,
) -> list[MinedNegative]:
    """`count` random operator paths of length 1–3 from `row` (an operator, then one of its positions, uniformly).

    Paths that restore the original messages are skipped (they are not corruptions).
    """
    rng = np.random.Generator(np.random.PCG64([seed, int(messages_hash(row)[:12], 16)]))
    root = messages_hash(row)
    out = []
    for _ in range(count):
        state: dict[str, Any] = dict(row)
        path: list[tuple[str, tuple[int, ...]]] = []
        for _ in range(int(rng.integers(1, 4))):
            usable = [(op, positions) for op in operators if (positions := op.applicable(state))]
            if not usable:
                break
            op, positions = usable[int(rng.integers(len(usable)))]
            action = (op.name, positions[int(rng.integers(len(positions)))])
            state = apply_action(state, action, rng)
            path.append(action)
        if path and messages_hash(state) != root:
            out.append(MinedNegative(row, state, tuple(path), validate_row(state, layers)))
    return out


def mine_all(
    rows: Sequence[Mapping[str, Any]],
    *,
    layers: Sequence[str] = LAYERS,
    iterations: int = 100,
    seed: int = 0,
    top_k: int = 10,
) -> list[MinedNegative]:
    """MCTS-mined negatives of every row, in row order."""
    return [
        n for row in rows for n in mine_negatives(row, layers=layers, iterations=iterations, seed=seed, top_k=top_k)
    ]


def _recall(negatives: Sequence[MinedNegative]) -> float | None:
    return sum(not n.accepted for n in negatives) / len(negatives) if negatives else None


def _operator_counts(negatives: Sequence[MinedNegative]) -> dict[str, dict[str, int]]:
    total: Counter[str] = Counter()
    missed: Counter[str] = Counter()
    for negative in negatives:
        for name in set(negative.operators):
            total[name] += 1
            missed[name] += negative.accepted
    return {name: {"paths": total[name], "missed": missed[name]} for name in sorted(total)}


def spread(rows: Sequence[Mapping[str, Any]], count: int) -> list[Mapping[str, Any]]:
    """`count` rows spread evenly over the dataset (every paradigm and case kind gets audited)."""
    if count >= len(rows):
        return list(rows)
    step = len(rows) / count
    return [rows[int(k * step)] for k in range(count)]


def run_audit(
    rows: Sequence[Mapping[str, Any]],
    *,
    layers: Sequence[str] = LAYERS,
    iterations: int = 100,
    seed: int = 0,
    random_per_row: int = 20,
    top_k: int = 10,
    mined: Sequence[MinedNegative] | None = None,
) -> dict[str, Any]:
    """Audit the validator made of `layers` on valid `rows` (pass `mined` to reuse negatives mined already)."""
    start = time.perf_counter()
    valid = [validate_row(row, layers) for row in rows]
    rejected_valid = [(row_key(row), r) for row, r in zip(rows, valid, strict=True) if any(r.values())]
    randoms = [n for row in rows for n in random_negatives(row, count=random_per_row, layers=layers, seed=seed)]
    if mined is None:
        mined = mine_all(rows, layers=layers, iterations=iterations, seed=seed, top_k=top_k)
    negatives = [*randoms, *mined]
    missed = [n for n in negatives if n.accepted]
    return {
        "layers": list(layers),
        "rows": len(rows),
        "valid_accepted": len(rows) - len(rejected_valid),
        "false_reject_rate": len(rejected_valid) / len(rows) if rows else None,
        "false_rejects": [
            {"row": key, "reasons": {layer: reasons[:2] for layer, reasons in r.items() if reasons}}
            for key, r in rejected_valid[:10]
        ],
        "random": {"negatives": len(randoms), "recall": _recall(randoms)},
        "mined": {"negatives": len(mined), "recall": _recall(mined), "iterations_per_row": iterations},
        "operators": _operator_counts(negatives),
        "operators_missed": sorted({name for n in missed for name in n.operators}),
        "operators_missed_alone": sorted({n.operators[0] for n in missed if len(n.operators) == 1}),
        "missed_paths": sorted({" > ".join(n.operators) for n in missed})[:20],
        "layer_detection": {
            layer: sum(bool(n.results.get(layer)) for n in negatives) / len(negatives) if negatives else None
            for layer in layers
        },
        "wall_seconds": round(time.perf_counter() - start, 3),
    }


def _first_difference(valid: Sequence[Any], corrupted: Sequence[Any]) -> int:
    for i, (a, b) in enumerate(zip(valid, corrupted, strict=False)):
        if a != b:
            return i
    return min(len(valid), len(corrupted))


def _split(negative: MinedNegative) -> tuple[list[Any], list[Any], list[Any]]:
    """(prompt, chosen, rejected): the shared messages before the first corrupted one, then each continuation;
    when the corruption starts at the system or user turn, the prompt is the seed question alone."""
    valid = list(negative.parent.get("messages") or ())
    corrupted = list(negative.row.get("messages") or ())
    cut = _first_difference(valid, corrupted)
    if cut >= 2:
        return valid[:cut], valid[cut:], corrupted[cut:]
    question = {"role": "user", "content": str(negative.parent.get("question", ""))}
    return [{**EMPTY_MESSAGE, **question}], valid, corrupted


def negatives_table(negatives: Sequence[MinedNegative]) -> pa.Table:
    """Mined negatives as a preference dataset.

    `prompt` is the messages both dialogues share up to the first corrupted message (or the seed question when
    the system or user turn is corrupted); `chosen` continues with the valid messages, `rejected` with the
    corrupted ones. `operators`/`positions` give the path, `layers_failed` the layers that reject it.
    """
    records = []
    for negative in negatives:
        prompt, chosen, rejected = _split(negative)
        records.append(
            {
                "parent_id": row_key(negative.parent),
                "seed_id": str(negative.parent.get("seed_id", "")),
                "question": str(negative.parent.get("question", "")),
                "prompt": prompt,
                "chosen": chosen,
                "rejected": rejected,
                "operators": list(negative.operators),
                "positions": [list(position) for _, position in negative.path],
                "layers_failed": list(negative.failed_layers),
                "accepted": negative.accepted,
            }
        )
    return pa.Table.from_pylist(records, schema=NEGATIVES_SCHEMA)
