"""`synth curate IN... OUT`: check everything, index and resolve, write OUT, report.

    OUT/data/, OUT/rejected/, OUT/manifest.json     a synth dataset (DatasetWriter), domain of the inputs
    OUT/curation.json                               per operation: rows in, dropped, cluster sizes, eval items
    OUT/curation-clusters.png                       cluster-size histogram (with matplotlib installed)
    OUT/README.md                                   card with the same counts
    OUT/.synth/curate/                              the run's decisions (kept for resume) and its spill folder

Every check (inputs, columns, evaluation sets) runs before OUT is touched. A killed run resumes: complete shards
are kept and the saved decisions are reused, so the rerun writes what an uninterrupted run writes.
"""

from __future__ import annotations

import os
import shutil
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import polars as pl

from synth.core.card import CardSubject
from synth.core.errors import InputError
from synth.core.sink import STATE_DIR
from synth.core.writer import DatasetWriter
from synth.pipelines.curation.config import CurateConfig, Decontaminate
from synth.pipelines.curation.eval_sets import read_eval_set
from synth.pipelines.curation.inputs import CurateInputs, open_inputs
from synth.pipelines.curation.operations import check_operations
from synth.pipelines.curation.report import card_summary, write_cluster_plot
from synth.pipelines.curation.resolve import Decisions, index_and_resolve, state_name
from synth.pipelines.curation.write import ShardWriter, output_schema
from synth.validators.curation.decontam import EvalIndex
from synth.validators.curation.text import normalized

REPORT_NAME = "curation.json"
PLOT_NAME = "curation-clusters.png"


@dataclass
class CurateSummary:
    """What a curate run reports: OUT, its manifest, the per-operation report, whether it resumed."""

    out: Path
    manifest: dict[str, Any]
    report: dict[str, Any]
    reused_decisions: bool


def load_eval_indexes(
    config: CurateConfig, *, source: str
) -> tuple[dict[int, EvalIndex], dict[int, list[tuple[str, str]]]]:
    """Each decontamination operation's index over all its evaluation sets, and the (set, item id) of each item."""
    indexes, ids = {}, {}
    for index, op in enumerate(config.operations):
        if not isinstance(op, Decontaminate):
            continue
        texts: list[str] = []
        names: list[tuple[str, str]] = []
        for number, spec in enumerate(op.eval_sets):
            items, item_ids = read_eval_set(spec, field=f"operations.{index}.eval_sets.{number}")
            texts += items
            names += [(spec.name, item) for item in item_ids]
        steps = [step for step in op.text.steps() if step != "milp_canonical"]
        frame = pl.DataFrame({"text": texts}, schema={"text": pl.String})
        normal = frame.select(normalized(pl.col("text"), steps)).to_series().to_list()
        indexes[index] = EvalIndex.build(normal, ngram=op.ngram, min_words=op.min_words, exact=op.match == "exact")
        ids[index] = names
    return indexes, ids


def prepare(
    inputs: Sequence[str | Path], config: CurateConfig, *, source: str
) -> tuple[CurateInputs, dict[int, EvalIndex], dict[int, list[tuple[str, str]]]]:
    """Open and check the inputs, columns and evaluation sets (nothing is written)."""
    opened = open_inputs(inputs)
    check_operations(config, opened.polars_schema, source=source, inputs=opened.describe())
    indexes, ids = load_eval_indexes(config, source=source)
    return opened, indexes, ids


def curate(
    inputs: Sequence[str | Path],
    out: str | Path,
    config: CurateConfig,
    *,
    source: str = "<config>",
    overwrite: bool = False,
) -> CurateSummary:
    """Curate `inputs` (merged in order) into the synth dataset `out` (see the module docstring)."""
    opened, indexes, eval_ids = prepare(inputs, config, source=source)
    out = Path(out)
    for item in opened.datasets:
        if item.root.resolve() == out.resolve():
            msg = f"{out}: OUT is also an input; write the curated dataset to another folder"
            raise InputError(msg)
    if overwrite and (out / "manifest.json").is_file():
        for name in (REPORT_NAME, PLOT_NAME):  # ours: --overwrite clears them with the dataset
            (out / name).unlink(missing_ok=True)
    references = opened.references()
    settings = {"curate": config.hashed(), "inputs": [ref["manifest_sha256"] for ref in references]}
    with DatasetWriter(
        out,
        domain=opened.domain,
        config=settings,
        schema=output_schema(opened.schema),
        num_shards=config.shards,
        inputs=references,
        summary="",
        card=config.card.model_dump(mode="json"),
        overwrite=overwrite,
    ) as writer:
        state = out / STATE_DIR / "curate"
        state.mkdir(parents=True, exist_ok=True)
        path = state / state_name(config, opened)
        for stale in state.glob("work-*"):  # a killed run's spill folder (we hold OUT's lock)
            shutil.rmtree(stale, ignore_errors=True)
        decisions = Decisions.load(path)
        reused = decisions is not None
        if decisions is None:
            work = state / f"work-{os.getpid()}"
            try:
                decisions = index_and_resolve(config, opened, work, indexes)
            finally:
                shutil.rmtree(work, ignore_errors=True)
            decisions.save(path)
        if writer.pending:
            ShardWriter(config, opened, decisions, eval_ids).write(writer)
        report = {
            "rows": len(decisions.drop_op),
            "kept": int((decisions.drop_op == 255).sum()),
            "operations": decisions.report,
        }
        plot = write_cluster_plot(decisions.report, out / PLOT_NAME, title=opened.domain)
        writer.subject = CardSubject(
            name=opened.domain, summary=card_summary(report, opened.describe(), plot=PLOT_NAME if plot else None)
        )
        manifest = writer.finalize(extra_files={REPORT_NAME: report})
    return CurateSummary(out=out, manifest=manifest, report=report, reused_decisions=reused)
