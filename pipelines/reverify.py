"""Re-run a dataset's verifiers on its stored rows and report where the stored verdicts disagree."""

from __future__ import annotations

from collections import Counter
from pathlib import Path
from typing import Any

import pyarrow.parquet as pq

from synth.core.config import parse_config
from synth.core.dataset import open_dataset
from synth.core.records import ID_FIELD, score_column, verdict_column
from synth.core.sink import sha256_file
from synth.pipelines.runner import build_pipeline


def _same_score(stored: float | None, fresh: float | None) -> bool:
    if stored is None or fresh is None:
        return stored is fresh
    return abs(stored - fresh) <= 1e-9 * max(1.0, abs(fresh))


def reverify_dataset(out: str | Path, *, max_examples: int = 5) -> dict[str, Any]:
    """Check shard checksums against the manifest and recompute every verdict of every kept row."""
    dataset = open_dataset(out, require_complete=False)
    manifest = dataset.manifest
    pipeline = build_pipeline(parse_config(manifest["config"], source=str(dataset.root / "manifest.json")))
    integrity: list[str] = []
    checked: Counter[str] = Counter()
    mismatched: Counter[str] = Counter()
    examples: list[dict[str, Any]] = []
    for shard in manifest["shards"]:
        if shard["status"] != "complete":
            integrity.append(f"shard {shard['index']}: not complete")
            continue
        path = dataset.root / shard["path"]
        if not path.is_file() or sha256_file(path) != shard["sha256"]:
            integrity.append(f"{shard['path']}: missing or sha256 differs from the manifest")
            continue
        table = pq.read_table(path)
        for verifier in pipeline.verifiers:
            fresh = verifier.verify(table)
            stored = table.column(verdict_column(verifier.name)).to_pylist()
            ids = table.column(ID_FIELD).to_pylist()
            for row_id, old, new in zip(ids, stored, fresh, strict=True):
                checked[verifier.name] += 1
                same = (
                    old is not None
                    and old["passed"] == new.passed
                    and tuple(old["reasons"]) == new.reasons
                    and all(_same_score(old["scores"].get(k), new.scores.get(k)) for k in verifier.scores)
                )
                if not same:
                    mismatched[verifier.name] += 1
                    if len(examples) < max_examples:
                        examples.append(
                            {"id": row_id, "verifier": verifier.name, "stored": old, "fresh": new.to_dict()}
                        )
            for score in verifier.scores:
                column = score_column(verifier.name, score)
                if column not in table.column_names:
                    integrity.append(f"{shard['path']}: score column `{column}` missing")
    return {
        "out": str(dataset.root),
        "ok": not integrity and not mismatched,
        "integrity_errors": integrity,
        "verifiers": {name: {"checked": checked[name], "mismatched": mismatched[name]} for name in sorted(checked)},
        "examples": examples,
    }
