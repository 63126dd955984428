"""Write the kept instances of an OptiScribe dataset as `.lp` and `.mps` files beside it."""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path
from typing import Any

from synth.core.dataset import read_rows
from synth.core.errors import OutputDirError
from synth.validators.optiscribe.reading import ModelFormat, convert_model_text

INSTANCES_DIR = "instances"


def export_instances(
    out: str | Path, *, target: str | Path | None = None, formats: Sequence[ModelFormat] = ("lp", "mps")
) -> dict[str, Any]:
    """Write each kept model as `<target>/<id>.<format>` (default `OUT/instances`); refuse a non-empty target."""
    directory = Path(target) if target is not None else Path(out) / INSTANCES_DIR
    if directory.is_dir() and any(directory.iterdir()):
        msg = f"{directory}: not empty; choose another `target` or remove it"
        raise OutputDirError(msg)
    frame = read_rows(out, domain="optiscribe", columns=("id", "model_text", "model_format"), needs="MILP export")
    directory.mkdir(parents=True, exist_ok=True)
    written = 0
    for row in frame.iter_rows(named=True):
        for fmt in formats:
            text = convert_model_text(row["model_text"], source=row["model_format"], target=fmt, name=row["id"])
            (directory / f"{row['id']}.{fmt}").write_text(text, encoding="utf-8")
            written += 1
    return {"out": str(out), "target": str(directory), "instances": frame.height, "files": written}
