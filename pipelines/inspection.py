"""Describe a dataset directory: schema, counts, verdict rates, rejection reasons, sample rows."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import polars as pl
import pyarrow as pa
import pyarrow.parquet as pq

from synth.core.dataset import SynthDataset, open_dataset
from synth.core.errors import InputError
from synth.core.manifest import MANIFEST_FORMAT
from synth.core.records import FILTER_REASON_FIELD, PROVENANCE_FIELD


def verdict_rates(frame: pl.LazyFrame, columns: list[str]) -> dict[str, dict[str, Any]]:
    """Pass counts per verdict column over the rows of `frame`."""
    rates = {}
    for column in columns:
        counts = frame.select(
            pl.col(column).struct.field("passed").sum().alias("passed"), pl.col(column).count().alias("total")
        ).collect()
        passed, total = int(counts["passed"][0] or 0), int(counts["total"][0])
        rates[column.removeprefix("verdict_")] = {
            "passed": passed,
            "total": total,
            "pass_rate": round(passed / total, 6) if total else None,
        }
    return rates


def _sample_rows(files: list[Path], limit: int, width: int) -> list[dict[str, Any]]:
    if not files or limit <= 0:
        return []
    rows = pl.scan_parquet(files).drop(PROVENANCE_FIELD).head(limit).collect().to_dicts()
    clipped = []
    for row in rows:
        clipped.append({k: (v[:width] + "…" if isinstance(v, str) and len(v) > width else v) for k, v in row.items()})
    return clipped


def _check_readable(root: Path, files: list[Path]) -> None:
    """Read each file's Parquet footer; a missing or truncated shard is a one-line `InputError` naming it."""
    for path in files:
        try:
            pq.read_metadata(path)
        except (OSError, pa.ArrowException) as error:
            first = (str(error).strip().splitlines() or [type(error).__name__])[0]
            msg = f"{path}: unreadable Parquet shard ({first}); `synth verify {root}` checks every shard"
            raise InputError(msg) from None


def describe_dataset(out: str | Path, *, sample_rows: int = 3, width: int = 60) -> dict[str, Any]:
    """Everything `synth inspect` shows, as JSON-ready values, computed from the Parquet files."""
    dataset = open_dataset(out, require_complete=False)
    manifest = dataset.manifest
    if manifest.get("format") != MANIFEST_FORMAT:
        msg = f"{dataset.root}: holds a {manifest.get('format')} manifest, not a dataset's; inspect a dataset directory"
        raise InputError(msg)
    _check_readable(dataset.root, dataset.files("kept") + dataset.files("rejected"))
    try:
        return _describe(dataset, sample_rows=sample_rows, width=width)
    except pl.exceptions.PolarsError as error:
        first = (str(error).strip().splitlines() or [type(error).__name__])[0]
        msg = f"{dataset.root}: unreadable Parquet data ({first}); `synth verify {dataset.root}` checks every shard"
        raise InputError(msg) from None


def _describe(dataset: SynthDataset, *, sample_rows: int, width: int) -> dict[str, Any]:
    manifest = dataset.manifest
    data_files, rejected_files = dataset.files("kept"), dataset.files("rejected")
    schema = dataset.schema() if data_files else None
    kept = pl.scan_parquet(data_files) if data_files else None
    rows = kept.select(pl.len()).collect().item() if kept is not None else 0
    verdict_columns = [name for name in (schema.names if schema else []) if name.startswith("verdict_")]
    reasons: dict[str, int] = {}
    rejected_rows = 0
    if rejected_files:
        counted = (
            pl.scan_parquet(rejected_files)
            .group_by(FILTER_REASON_FIELD)
            .agg(pl.len().alias("rows"))
            .sort(["rows", FILTER_REASON_FIELD], descending=[True, False])
            .collect()
        )
        reasons = dict(zip(counted[FILTER_REASON_FIELD].to_list(), counted["rows"].to_list(), strict=True))
        rejected_rows = sum(reasons.values())
    shards = manifest["shards"]
    return {
        "out": str(dataset.root),
        "domain": manifest["domain"],
        "status": manifest["status"],
        "config_hash": manifest["config_hash"],
        "shards": {"total": len(shards), "complete": sum(s["status"] == "complete" for s in shards)},
        "schema": [{"name": f.name, "type": str(f.type)} for f in schema] if schema else [],
        "rows": rows,
        "rejected_rows": rejected_rows,
        "verdicts": verdict_rates(kept, verdict_columns) if kept is not None else {},
        "rejected": reasons,
        "sample": _sample_rows(data_files, sample_rows, width),
        **_curation(dataset.root),
    }


def _curation(root: Path) -> dict[str, Any]:
    """`curation`: the report of `synth curate` (per operation: rows in, dropped, clusters) when OUT has one."""
    import json

    try:
        report = json.loads((root / "curation.json").read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return {}
    return {"curation": report} if isinstance(report, dict) else {}
