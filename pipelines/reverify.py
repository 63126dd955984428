"""Re-check a dataset: shard checksums (kept and rejected), stray files, and every stored verdict recomputed."""

from __future__ import annotations

from collections import Counter
from pathlib import Path
from typing import Any

import pyarrow as pa
import pyarrow.parquet as pq

from synth.core.config import parse_config
from synth.core.dataset import SynthDataset, open_dataset
from synth.core.errors import InputError
from synth.core.manifest import MANIFEST_FORMAT
from synth.core.records import ID_FIELD, score_column, verdict_column
from synth.core.sink import DATA_DIR, REJECTED_DIR, SPLIT, sha256_file, shard_data_files, shard_file_name
from synth.core.steps import Verifier
from synth.pipelines.runner import build_pipeline


def _same_score(stored: float | None, fresh: float | None) -> bool:
    if stored is None or fresh is None:
        return stored is fresh
    return abs(stored - fresh) <= 1e-9 * max(1.0, abs(fresh))


def _intact(dataset: SynthDataset, shard: dict[str, Any], relative: str, digest: str) -> str | None:
    """The integrity problem of one of a complete shard's files, or None."""
    path = dataset.root / relative
    if not path.is_file():
        return f"{relative}: missing (shard {shard['index']} is complete in the manifest)"
    if sha256_file(path) != digest:
        return f"{relative}: sha256 differs from the manifest (shard {shard['index']})"
    return None


def _stray_files(dataset: SynthDataset) -> list[str]:
    """Visible files in data/ and rejected/ that the manifest does not list (`load_dataset` would read them)."""
    num_shards = dataset.manifest["num_shards"]
    pending_suffixes = tuple(
        shard_file_name(s["index"], num_shards).removeprefix(SPLIT)
        for s in dataset.manifest["shards"]
        if s["status"] != "complete"
    )
    complete = [s for s in dataset.manifest["shards"] if s["status"] == "complete"]
    listed = {s["rejected_path"] for s in complete} | {f["path"] for s in complete for f in shard_data_files(s)}
    problems = []
    for folder in (DATA_DIR, REJECTED_DIR):
        directory = dataset.root / folder
        if not directory.is_dir():
            continue
        for path in sorted(directory.rglob("*")):
            relative = path.relative_to(dataset.root).as_posix()
            hidden = any(part.startswith(".") for part in path.relative_to(directory).parts)
            pending = bool(pending_suffixes) and path.name.endswith(pending_suffixes)
            if path.is_file() and not hidden and relative not in listed and not pending:
                problems.append(f"{relative}: not listed in the manifest (load_dataset would read it); remove it")
    return problems


def _compare_verdicts(
    verifier: Verifier, table: pa.Table, shard_path: str, examples: list[dict[str, Any]], max_examples: int
) -> tuple[int, int]:
    """Recompute `verifier` on `table`; return (rows checked, rows mismatched) and add up to `max_examples`."""
    fresh = verifier.verify(table)
    stored = table.column(verdict_column(verifier.name)).to_pylist()
    ids = table.column(ID_FIELD).to_pylist()
    mismatched = 0
    for row, (row_id, old, new) in enumerate(zip(ids, stored, fresh, strict=True)):
        same = (
            old is not None
            and old["passed"] == new.passed
            and tuple(old["reasons"]) == new.reasons
            and all(_same_score(old["scores"].get(k), new.scores.get(k)) for k in verifier.scores)
        )
        if not same:
            mismatched += 1
            if len(examples) < max_examples:
                examples.append(
                    {
                        "shard": shard_path,
                        "row": row,
                        "id": row_id,
                        "verifier": verifier.name,
                        "stored": old,
                        "fresh": new.to_dict(),
                    }
                )
    return len(ids), mismatched


def _missing_columns(verifier: Verifier, table: pa.Table) -> list[str]:
    """The verdict and score columns of `verifier` that `table` lacks."""
    wanted = (verdict_column(verifier.name), *(score_column(verifier.name, s) for s in verifier.scores))
    return [column for column in wanted if column not in table.column_names]


def reverify_dataset(out: str | Path, *, max_examples: int = 5) -> dict[str, Any]:
    """Check every complete shard's files against the manifest, look for unlisted files, and recompute every
    verdict of every kept row.

    `ok` is True only for a complete dataset with no integrity error and no mismatch; `complete` says whether
    every shard is done (an incomplete dataset is checked as far as it goes).
    """
    dataset = open_dataset(out, require_complete=False)
    manifest = dataset.manifest
    if manifest.get("format") != MANIFEST_FORMAT:
        msg = f"{dataset.root}: holds a {manifest.get('format')} manifest, not a dataset's; verify a dataset directory"
        raise InputError(msg)
    pipeline = build_pipeline(parse_config(manifest["config"], source=str(dataset.root / "manifest.json")))
    integrity: list[str] = []
    checked: Counter[str] = Counter()
    mismatched: Counter[str] = Counter()
    examples: list[dict[str, Any]] = []
    done = [shard for shard in manifest["shards"] if shard["status"] == "complete"]
    for shard in done:
        files = [(f["path"], f["sha256"]) for f in shard_data_files(shard)]
        problems = {relative: _intact(dataset, shard, relative, digest) for relative, digest in files}
        rejected = _intact(dataset, shard, shard["rejected_path"], shard["rejected_sha256"])
        integrity += [p for p in [*problems.values(), rejected] if p]
        for relative, problem in problems.items():
            if problem is None:
                table = pq.read_table(dataset.root / relative)
                for verifier in pipeline.verifiers:
                    missing = _missing_columns(verifier, table)
                    if missing:
                        integrity.append(f"{relative}: column `{missing[0]}` missing")
                        continue
                    rows, bad = _compare_verdicts(verifier, table, relative, examples, max_examples)
                    checked[verifier.name] += rows
                    mismatched[verifier.name] += bad
    integrity += _stray_files(dataset)
    complete = len(done) == manifest["num_shards"]
    return {
        "out": str(dataset.root),
        "ok": complete and not integrity and not any(mismatched.values()),
        "complete": complete,
        "shards": {"complete": len(done), "total": manifest["num_shards"]},
        "integrity_errors": integrity,
        "verifiers": {name: {"checked": checked[name], "mismatched": mismatched[name]} for name in sorted(checked)},
        "examples": examples,
    }
