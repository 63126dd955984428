"""Run a pipeline into an output directory: open (lock, resume check), execute shards, finalise.

The local engine and the Prefect flow share `open_run`, `execute_shard` and `finalize_run`; only the way
shards are dispatched differs, so both produce byte-identical shards.
"""

from __future__ import annotations

import contextlib
import functools
import json
from collections.abc import Callable, Iterator
from concurrent.futures import ProcessPoolExecutor, as_completed
from dataclasses import dataclass, field
from multiprocessing import get_context
from pathlib import Path
from typing import Any

from synth.core.card import render_card
from synth.core.config import PipelineConfig, parse_config
from synth.core.manifest import build_manifest
from synth.core.records import canonical_json
from synth.core.shard import ShardStats
from synth.core.sink import DatasetDir, write_json_atomic
from synth.pipelines.runner import Pipeline, build_pipeline

ShardCallback = Callable[[dict[str, Any]], None]
RowCallback = Callable[[int], None]


@dataclass
class RunPlan:
    """An opened run: the locked output directory, the pipeline, and which shards are still to do."""

    out: DatasetDir
    config: PipelineConfig
    pipeline: Pipeline
    records: dict[int, dict[str, Any]]
    pending: list[int] = field(default_factory=list)

    @property
    def config_payload(self) -> dict[str, Any]:
        """The config as plain JSON, for shipping to worker processes and Prefect tasks."""
        return self.config.model_dump(mode="json")

    def write_manifest(self) -> dict[str, Any]:
        """Write manifest.json for the current state and return it."""
        manifest = build_manifest(
            domain=self.config.domain,
            config_hash=self.pipeline.config_hash,
            config=self.config.model_dump(mode="json", exclude={"execution"}),
            num_shards=self.config.shards,
            columns=self.pipeline.schema.names,
            input_info=self.pipeline.generator.describe_input(),
            records=self.records,
            previous=self.out.read_manifest(),
        )
        write_json_atomic(self.out.manifest_path, manifest)
        return manifest


@dataclass(frozen=True)
class RunSummary:
    """What a finished run reports."""

    out: Path
    manifest: dict[str, Any]
    skipped: list[int]
    executed: list[int]


@contextlib.contextmanager
def open_run(config: PipelineConfig, out: str | Path, *, overwrite: bool = False) -> Iterator[RunPlan]:
    """Lock OUT, check it belongs to this config, find complete shards and clean the partial ones.

    With shards to do, the placeholder card goes in before the first manifest, so `load_dataset(OUT)` refuses
    OUT until `finalize_run` writes the real card.
    """
    pipeline = build_pipeline(config)
    dataset = DatasetDir(Path(out))
    with dataset.lock():
        records = dataset.prepare(pipeline.config_hash, config.shards, overwrite=overwrite)
        pending = [index for index in range(config.shards) if index not in records]
        plan = RunPlan(out=dataset, config=config, pipeline=pipeline, records=records, pending=pending)
        plan.write_manifest()
        yield plan


@functools.lru_cache(maxsize=4)
def _cached_pipeline(config_json: str) -> Pipeline:
    return build_pipeline(parse_config(json.loads(config_json), source="<worker>"))


def execute_shard(
    config_payload: dict[str, Any],
    out: str,
    index: int,
    *,
    on_batch: RowCallback | None = None,
    pipeline: Pipeline | None = None,
) -> dict[str, Any]:
    """Write shard `index` of the run described by `config_payload` into `out`; return its record.

    In a worker process the pipeline is rebuilt from the payload (once per process); the driver passes its own.
    """
    pipeline = pipeline or _cached_pipeline(canonical_json(config_payload))
    stats = ShardStats()
    return DatasetDir(Path(out)).write_shard(
        index,
        pipeline.config.shards,
        schema=pipeline.schema,
        rejected_schema=pipeline.rejected_schema,
        outputs=pipeline.run_shard(index, stats),
        stats=stats,
        on_batch=on_batch,
    )


def finalize_run(plan: RunPlan) -> dict[str, Any]:
    """Write the final manifest, then the dataset card when every shard is complete (else the placeholder)."""
    manifest = plan.write_manifest()
    if manifest["status"] == "complete":
        plan.out.write_card(render_card(manifest, plan.pipeline.domain))
    else:
        plan.out.mark_incomplete()
    return manifest


def run_local(
    config: PipelineConfig,
    out: str | Path,
    *,
    overwrite: bool = False,
    workers: int | None = None,
    on_start: Callable[[RunPlan], None] | None = None,
    on_shard: ShardCallback | None = None,
    on_batch: RowCallback | None = None,
) -> RunSummary:
    """Run the pipeline in this process (or a local process pool when `workers` > 1)."""
    with open_run(config, out, overwrite=overwrite) as plan:
        skipped = sorted(plan.records)
        if on_start is not None:
            on_start(plan)
        workers = workers or config.execution.workers or 1
        if workers > 1 and len(plan.pending) > 1:
            _run_pool(plan, workers, on_shard)
        else:
            for index in plan.pending:
                record = execute_shard(
                    plan.config_payload, str(plan.out.root), index, on_batch=on_batch, pipeline=plan.pipeline
                )
                _record_done(plan, record, on_shard)
        manifest = finalize_run(plan)
    return RunSummary(out=plan.out.root, manifest=manifest, skipped=skipped, executed=plan.pending)


def _record_done(plan: RunPlan, record: dict[str, Any], on_shard: ShardCallback | None) -> None:
    plan.records[record["index"]] = record
    plan.write_manifest()
    if on_shard is not None:
        on_shard(record)


def _run_pool(plan: RunPlan, workers: int, on_shard: ShardCallback | None) -> None:
    with ProcessPoolExecutor(max_workers=workers, mp_context=get_context("spawn")) as pool:
        futures = [pool.submit(execute_shard, plan.config_payload, str(plan.out.root), index) for index in plan.pending]
        for future in as_completed(futures):
            _record_done(plan, future.result(), on_shard)
