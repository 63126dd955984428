"""`synth toolforge audit`: mine hard negatives from a ToolForge dataset and write them as a preference dataset.

The audited rows are spread evenly over the dataset's kept rows; MCTS searches corruptions each one against the
full validator. The output folder is a dataset `datasets.load_dataset(OUT)` reads (prompt / chosen / rejected,
operator path, the layers that reject it), plus `audit.json` with the audit figures of the same run.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from synth.core.dataset import read_records
from synth.core.errors import read_json_file
from synth.core.writer import DatasetWriter, input_reference
from synth.validators.toolforge.audit import NEGATIVES_SCHEMA

REPORT_NAME = "audit.json"
PRETTY_NAME = "ToolForge hard negatives (MCTS-mined)"
AUDIT_COLUMNS = ("messages", "plan", "tools", "supporting")
SUMMARY = """Corruptions of valid ToolForge dialogues found by Monte Carlo Tree Search over edit operators (calls,
arguments, results, answers, reasoning, turn order), each with the operator path and the validation layers that
reject it. `chosen` continues the shared `prompt` with the valid messages, `rejected` with the corrupted ones.
Rows with `accepted = true` are corruptions the validator let through (its misses). Audit figures of the same run
are in `audit.json`."""


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
    """Audit `rows` dialogues of `dataset`, write the mined negatives to `out`, and return the audit report.

    `out` is a synth dataset (manifest naming the audited dataset, card, `data/` shard) plus `audit.json`; a
    rerun with the same settings returns the stored report.
    """
    from synth.validators.toolforge.audit import mine_all, negatives_table, run_audit, spread
    from synth.validators.toolforge.verifiers import LAYERS

    source = input_reference("toolforge", dataset)
    records = read_records(dataset, columns=AUDIT_COLUMNS, optional=None, domain="toolforge", needs="the audit")
    audited = spread(records, rows)
    licenses = {row["seed_license"] for row in audited}
    settings = {
        "source": source,
        "rows": rows,
        "iterations": iterations,
        "random_per_row": random_per_row,
        "seed": seed,
    }
    card = {"license": "cc-by-sa-4.0" if "cc-by-sa-4.0" in licenses else "cc-by-4.0", "pretty_name": PRETTY_NAME}
    with DatasetWriter(
        out,
        domain="toolforge-negatives",
        config=settings,
        schema=NEGATIVES_SCHEMA,
        inputs=[source],
        summary=SUMMARY,
        card=card,
        overwrite=overwrite,
    ) as writer:
        if not writer.pending:
            return read_json_file(out / REPORT_NAME)
        mined = mine_all(audited, layers=LAYERS, iterations=iterations, seed=seed)
        report = run_audit(
            audited, layers=LAYERS, iterations=iterations, seed=seed, random_per_row=random_per_row, mined=mined
        )
        writer.write_table(0, negatives_table(mined))
        writer.finalize(extra_files={REPORT_NAME: report})
    return report
