"""Describe a multi-stage OUT: each stage, its inputs, status, and rows or files."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from synth.core.errors import InputError
from synth.pipelines.stage_engine import PIPELINE_FILE, read_json_or_none


def is_pipeline_dir(out: str | Path) -> bool:
    """Whether `out` was written by a multi-stage run (it has pipeline.json)."""
    return (Path(out) / PIPELINE_FILE).is_file()


def describe_pipeline(out: str | Path) -> dict[str, Any]:
    """Everything `synth inspect` shows for a multi-stage OUT, as JSON-ready values."""
    root = Path(out)
    try:
        pipeline = json.loads((root / PIPELINE_FILE).read_text(encoding="utf-8"))
    except (OSError, UnicodeDecodeError, json.JSONDecodeError) as error:
        msg = f"{root / PIPELINE_FILE}: unreadable ({error}); rerun the pipeline to rewrite it"
        raise InputError(msg) from None
    stages = []
    for entry in pipeline.get("stages", []):
        manifest = read_json_or_none(root / entry["path"] / "manifest.json") or {}
        totals = manifest.get("totals", {})
        stages.append(
            {
                **{key: entry.get(key) for key in ("name", "kind", "inputs", "fingerprint", "status")},
                "domain": manifest.get("domain"),
                "rows": totals.get("rows"),
                "rejected_rows": totals.get("rejected_rows"),
                "files": len(manifest.get("files", [])) if "files" in manifest else None,
                "input_manifests": [
                    {"name": item["name"], "path": item["path"], "manifest_sha256": item["manifest_sha256"]}
                    for item in manifest.get("inputs", [])
                ],
                "summary": manifest.get("summary"),
            }
        )
    return {"out": str(root), "status": pipeline.get("status"), "source": pipeline.get("source"), "stages": stages}
