"""`synth toolforge audit`: mine hard negatives from a ToolForge dataset and write them as a preference dataset.

The audited rows are spread evenly over the dataset's kept rows; MCTS searches corruptions each one against the
full validator. The output folder is a dataset `datasets.load_dataset(OUT)` reads (prompt / chosen / rejected,
operator path, the layers that reject it), plus `audit.json` with the audit figures of the same run.
"""

from __future__ import annotations

import os
import shutil
from pathlib import Path
from typing import Any

import pyarrow.parquet as pq

from synth.core.dataset import read_records
from synth.core.errors import OutputDirError
from synth.core.sink import write_json_atomic

AUDIT_COLUMNS = ("messages", "plan", "tools", "supporting")
CARD = """---
license: {license}
pretty_name: ToolForge hard negatives (MCTS-mined)
tags: [synth, toolforge, preference, hard-negatives, tool-use]
configs:
- config_name: default
  data_files:
  - split: train
    path: data/train-00000-of-00001.parquet
---

# ToolForge hard negatives

Corruptions of valid ToolForge dialogues found by Monte Carlo Tree Search over edit operators (calls, arguments,
results, answers, reasoning, turn order), each with the operator path and the validation layers that reject it.
`chosen` continues the shared `prompt` with the valid messages, `rejected` with the corrupted ones.
Rows with `accepted = true` are corruptions the validator let through (its misses).

Source dataset: `{source}`; audited dialogues: {rows}; MCTS iterations per dialogue: {iterations}; seed: {seed}.
Negatives: {negatives}; accepted by the validator: {accepted}.
"""


def write_negatives(
    dataset: Path,
    out: Path,
    *,
    rows: int = 40,
    iterations: int = 60,
    random_per_row: int = 20,
    seed: int = 0,
    overwrite: bool = False,
) -> dict[str, Any]:
    """Audit `rows` dialogues of `dataset`, write the mined negatives to `out`, and return the audit report."""
    from synth.validators.toolforge.audit import mine_all, negatives_table, run_audit, spread
    from synth.validators.toolforge.verifiers import LAYERS

    if out.exists() and any(out.iterdir()) and not overwrite:
        msg = f"{out}: exists and is not empty (use --overwrite to replace it)"
        raise OutputDirError(msg)
    audited = spread(
        read_records(dataset, columns=AUDIT_COLUMNS, optional=None, domain="toolforge", needs="the audit"), rows
    )
    mined = mine_all(audited, layers=LAYERS, iterations=iterations, seed=seed)
    report = run_audit(
        audited, layers=LAYERS, iterations=iterations, seed=seed, random_per_row=random_per_row, mined=mined
    )
    table = negatives_table(mined)

    tmp = out.with_name(f".{out.name}.tmp-{os.getpid()}")
    shutil.rmtree(tmp, ignore_errors=True)
    (tmp / "data").mkdir(parents=True)
    pq.write_table(table, tmp / "data" / "train-00000-of-00001.parquet", compression="zstd")
    licenses = {row["seed_license"] for row in audited}
    card = CARD.format(
        license="cc-by-sa-4.0" if "cc-by-sa-4.0" in licenses else "cc-by-4.0",
        source=dataset,
        rows=len(audited),
        iterations=iterations,
        seed=seed,
        negatives=table.num_rows,
        accepted=sum(table.column("accepted").to_pylist()),
    )
    (tmp / "README.md").write_text(card, encoding="utf-8")
    write_json_atomic(tmp / "audit.json", report)
    if out.exists():
        shutil.rmtree(out)
    os.replace(tmp, out)
    return report
