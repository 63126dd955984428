"""The run manifest: config, config hash, input facts, per-shard status and merged statistics."""

from __future__ import annotations

import datetime as dt
from collections import Counter
from collections.abc import Mapping, Sequence
from typing import Any

import synth

MANIFEST_FORMAT = "synth-manifest/1"


def utc_now() -> str:
    """Current UTC time in ISO format (manifest only; never inside data files)."""
    return dt.datetime.now(dt.UTC).replace(microsecond=0).isoformat()


def merge_totals(records: Mapping[int, Mapping[str, Any]]) -> dict[str, Any]:
    """Sum rows, rejections and verifier counts over complete shard records."""
    rejected: Counter[str] = Counter()
    passed: Counter[str] = Counter()
    total: Counter[str] = Counter()
    categories: dict[str, Counter[str]] = {}
    generated = rows = 0
    for record in records.values():
        stats = record["stats"]
        for column, counts in stats.get("categories", {}).items():
            categories.setdefault(column, Counter()).update(counts)
        generated += stats["generated"]
        rows += record["rows"]
        rejected.update(stats["rejected"])
        for name, counts in stats["verifiers"].items():
            passed[name] += counts["passed"]
            total[name] += counts["total"]
    extra = {"categories": {c: dict(sorted(n.items())) for c, n in sorted(categories.items())}} if categories else {}
    return extra | {
        "generated": generated,
        "rows": rows,
        "rejected_rows": sum(rejected.values()),
        "rejected": dict(sorted(rejected.items(), key=lambda item: (-item[1], item[0]))),
        "verifiers": {
            name: {
                "passed": passed[name],
                "total": total[name],
                "pass_rate": round(passed[name] / total[name], 6),
            }
            for name in sorted(total)
            if total[name]
        },
    }


def build_manifest(
    *,
    domain: str,
    config_hash: str,
    config: Mapping[str, Any],
    num_shards: int,
    columns: list[str],
    input_info: Mapping[str, Any],
    records: Mapping[int, Mapping[str, Any]],
    previous: Mapping[str, Any] | None,
    inputs: Sequence[Mapping[str, Any]] | None = None,
) -> dict[str, Any]:
    """Assemble the manifest for the current state of a run.

    `inputs` (derived datasets and stages only) names the datasets read, each by path and manifest sha256.
    """
    shards = []
    for index in range(num_shards):
        record = records.get(index)
        if record is None:
            shards.append({"index": index, "status": "pending"})
        else:
            shards.append({k: v for k, v in record.items() if k != "stats"} | {"seconds": record["stats"]["seconds"]})
    complete = len(records) == num_shards
    linked = {"inputs": [dict(item) for item in inputs]} if inputs is not None else {}
    return {
        "format": MANIFEST_FORMAT,
        "synth_version": synth.__version__,
        "domain": domain,
        "config_hash": config_hash,
        "config": dict(config),
        "status": "complete" if complete else "partial",
        "num_shards": num_shards,
        "columns": columns,
        "input": dict(input_info),
        **linked,
        "totals": merge_totals(records),
        "shards": shards,
        "created_at": (previous or {}).get("created_at") or utc_now(),
        "updated_at": utc_now(),
    }
