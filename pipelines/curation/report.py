"""The curation report on the card (rows dropped per operation and reason, cluster sizes) and its PNG."""

from __future__ import annotations

import os
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

from synth.core.sink import temp_path

SUMMARY = (
    "Rows of {inputs} curated by `synth curate`: each operation below saw the rows the ones before it kept. "
    "Dropped rows are in `rejected/` with `filter_reason` (the code below), `filter_step` (the operation) and "
    "`filter_detail` (JSON: the kept row a duplicate points at, the evaluation item a row overlaps, or the values "
    "behind a filter). Kept rows keep their `id`; their provenance names the input row as parent."
)


def _table(header: Sequence[str], rows: Sequence[Sequence[Any]]) -> str:
    lines = ["| " + " | ".join(header) + " |", "|" + "---|" * len(header)]
    lines += ["| " + " | ".join(str(cell) for cell in row) + " |" for row in rows]
    return "\n".join(lines)


def card_summary(report: Mapping[str, Any], inputs: str, *, plot: str | None) -> str:
    """The card's summary: what was done, a table per operation, the cluster sizes (and the PNG's link)."""
    ops = report["operations"]
    parts = [
        SUMMARY.format(inputs=inputs),
        "## Curation\n",
        _table(
            ("step", "kind", "reads", "rows in", "dropped", "reason"),
            [
                (
                    op["name"],
                    op["kind"],
                    ", ".join(op["reads"]) or "-",
                    op["rows_in"],
                    op["dropped"],
                    f"`{op['reason']}`",
                )
                for op in ops
            ],
        ),
        f"\n{report['kept']:,} of {report['rows']:,} input rows kept.",
    ]
    for op in ops:
        if op.get("clusters"):
            parts.append(f"\n### Duplicate clusters: {op['name']}\n")
            parts.append(_table(("cluster size", "clusters"), list(op["clusters"].items())))
        if "verified_pairs" in op:
            parts.append(
                f"\nLSH candidate pairs {op['candidate_pairs']:,}, verified at the threshold {op['verified_pairs']:,}."
            )
        if "eval_items" in op:
            parts.append(
                f"\n{op['name']}: {op['eval_items_indexed']:,} of {op['eval_items']:,} evaluation items indexed."
            )
    if plot:
        parts.append(f"\n![cluster sizes]({plot})")
    return "\n".join(parts)


def write_cluster_plot(operations: Sequence[Mapping[str, Any]], path: Path, *, title: str) -> Path | None:
    """A bar chart of cluster sizes per dedup operation (temp name, then renamed); None without matplotlib or
    clusters."""
    clustered = [op for op in operations if op.get("clusters")]
    if not clustered:
        return None
    try:
        import matplotlib

        matplotlib.use("Agg")
        import matplotlib.pyplot as plt
    except ImportError:
        return None
    figure, axis = plt.subplots(figsize=(6, 3.5))
    width = 0.8 / len(clustered)
    for number, op in enumerate(clustered):
        sizes = [int(size) for size in op["clusters"]]
        axis.bar([s + number * width for s in sizes], list(op["clusters"].values()), width=width, label=op["name"])
    axis.set_yscale("log")
    axis.set_xlabel("cluster size (kept row + its duplicates)")
    axis.set_ylabel("clusters")
    axis.set_title(f"{title}: duplicate clusters")
    axis.legend()
    figure.tight_layout()
    tmp = temp_path(path)
    try:
        figure.savefig(tmp, format="png", dpi=100, metadata={"Software": None})
        os.replace(tmp, path)
    finally:
        tmp.unlink(missing_ok=True)
        plt.close(figure)
    return path
