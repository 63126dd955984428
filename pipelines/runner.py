"""Build a pipeline from a config and run one shard of it, batch by batch, without any engine."""

from __future__ import annotations

import itertools
import time
from collections.abc import Iterator, Sequence
from typing import Any

import polars as pl
import pyarrow as pa
import pyarrow.compute as pc

import synth
from synth.core.config import PipelineConfig, RangeFilterSpec, VerdictFilterSpec
from synth.core.errors import ConfigError
from synth.core.records import (
    FILTER_DETAIL_FIELD,
    FILTER_REASON_FIELD,
    FILTER_STEP_FIELD,
    ID_FIELD,
    PROVENANCE_FIELD,
    PROVENANCE_TYPE,
    make_row_id,
    output_schema,
    rejected_schema,
    score_column,
    verdict_column,
    verdict_type,
)
from synth.core.registry import DomainSpec, get_domain
from synth.core.shard import BatchOutput, ShardStats
from synth.core.steps import Filter, GeneratedBatch, Generator, Rejection, ShardContext, Verifier
from synth.validators.filters import RangeFilter, VerdictFilter

GENERATOR_STEP = "generator"


def build_filter(spec: VerdictFilterSpec | RangeFilterSpec, verifier_names: Sequence[str]) -> Filter:
    """Turn a filter spec from the config into a filter step."""
    if isinstance(spec, VerdictFilterSpec):
        return VerdictFilter(name="verdict", verifiers=tuple(spec.verifiers or verifier_names))
    return RangeFilter(name=f"range_{spec.column}", column=spec.column, min=spec.min, max=spec.max)


class Pipeline:
    """A generator, its verifiers and filters, with the output schema and checked column contracts."""

    def __init__(self, config: PipelineConfig, domain: DomainSpec) -> None:
        self.config = config
        self.domain = domain
        generator_config = domain.config_model.model_validate(config.generator)
        self.generator: Generator = domain.build_generator(generator_config)
        available = domain.build_verifiers(generator_config)
        names = config.verifiers if config.verifiers is not None else list(available)
        self.verifiers: tuple[Verifier, ...] = tuple(available[name] for name in names)
        self.filters: tuple[Filter, ...] = tuple(build_filter(spec, names) for spec in config.filters)
        self.config_hash = config.config_hash()
        self.schema = output_schema(self.generator.schema, [(v.name, v.scores) for v in self.verifiers])
        self.rejected_schema = rejected_schema(self.schema)
        self.check_contracts()

    def check_contracts(self) -> None:
        """Fail before the first row if a step reads a column that no earlier step provides."""
        available = {ID_FIELD, *self.generator.schema.names}
        for verifier in self.verifiers:
            self._require(verifier.name, verifier.reads, available)
            available |= {score_column(verifier.name, s) for s in verifier.scores}
            available.add(verdict_column(verifier.name))
        for step in self.filters:
            self._require(step.name, step.reads, available)

    @staticmethod
    def _require(step: str, reads: Sequence[str], available: set[str]) -> None:
        missing = [column for column in reads if column not in available]
        if missing:
            msg = f"step `{step}` reads column `{missing[0]}`, which no earlier step provides"
            raise ConfigError(msg)

    def shard_context(self, shard_index: int) -> ShardContext:
        """The context of shard `shard_index` of this run."""
        return ShardContext(
            seed=self.config.seed,
            shard_index=shard_index,
            num_shards=self.config.shards,
            config_hash=self.config_hash,
        )

    def run_shard(self, shard_index: int, stats: ShardStats) -> Iterator[BatchOutput]:
        """Generate, verify and filter shard `shard_index`, yielding one output per generated batch."""
        ctx = self.shard_context(shard_index)
        batches = iter(self.generator.generate(ctx))
        while True:
            start = time.perf_counter()
            batch = next(batches, None)
            stats.seconds[GENERATOR_STEP] += time.perf_counter() - start
            if batch is None:
                return
            yield self.process_batch(batch, ctx, stats)

    def process_batch(self, batch: GeneratedBatch, ctx: ShardContext, stats: ShardStats) -> BatchOutput:
        """Cast a generated batch, add ids, verdicts and provenance, then apply the filters."""
        table = self._rows_table(batch, ctx)
        stats.generated += table.num_rows
        for verifier in self.verifiers:
            start = time.perf_counter()
            table = self._apply_verifier(verifier, table, stats)
            stats.seconds[f"verifier:{verifier.name}"] += time.perf_counter() - start
        table = table.select(self.schema.names).cast(self.schema)
        rejected_parts = [self._rejections_table(batch.rejections, ctx, stats)]
        for step in self.filters:
            start = time.perf_counter()
            table, dropped = self._apply_filter(step, table, stats)
            rejected_parts.append(dropped)
            stats.seconds[f"filter:{step.name}"] += time.perf_counter() - start
        stats.kept += table.num_rows
        stats.count_categories(table, self.generator.categories)
        return BatchOutput(kept=table, rejected=pa.concat_tables(rejected_parts))

    def _provenance(self, ctx: ShardContext, parents: Sequence[tuple[str, ...]]) -> list[dict[str, Any]]:
        return [
            {
                "generator": self.generator.name,
                "generator_version": self.generator.version,
                "seed": ctx.seed,
                "shard_index": ctx.shard_index,
                "config_hash": ctx.config_hash,
                "parent_ids": list(p),
                "code_version": synth.__version__,
            }
            for p in parents
        ]

    def _rows_table(self, batch: GeneratedBatch, ctx: ShardContext) -> pa.Table:
        if len(batch.parent_ids) != len(batch.rows):
            msg = f"generator `{self.generator.name}` gave {len(batch.rows)} rows but {len(batch.parent_ids)} parents"
            raise ValueError(msg)
        table = pa.Table.from_pylist(batch.rows, schema=self.generator.schema)
        ids = pa.array([make_row_id(self.generator.name, row) for row in batch.rows], type=pa.string())
        table = table.add_column(0, ID_FIELD, ids)
        return table.append_column(PROVENANCE_FIELD, self._provenance_column(ctx, batch.parent_ids))

    def _provenance_column(self, ctx: ShardContext, parents: Sequence[tuple[str, ...]]) -> pa.StructArray:
        """The provenance struct column of a batch, built column-wise (the same values as `_provenance`)."""
        count = len(parents)
        constants = {
            "generator": self.generator.name,
            "generator_version": self.generator.version,
            "seed": ctx.seed,
            "shard_index": ctx.shard_index,
            "config_hash": ctx.config_hash,
            "code_version": synth.__version__,
        }
        offsets = pa.array(itertools.accumulate((len(p) for p in parents), initial=0), pa.int32())
        parent_ids = pa.ListArray.from_arrays(offsets, pa.array([i for p in parents for i in p], pa.string()))
        children = [
            parent_ids if field.name == "parent_ids" else pa.repeat(pa.scalar(constants[field.name], field.type), count)
            for field in PROVENANCE_TYPE
        ]
        return pa.StructArray.from_arrays(children, fields=list(PROVENANCE_TYPE))

    def _apply_verifier(self, verifier: Verifier, table: pa.Table, stats: ShardStats) -> pa.Table:
        verdicts = verifier.verify(table)
        if len(verdicts) != table.num_rows:
            msg = f"verifier `{verifier.name}` returned {len(verdicts)} verdicts for {table.num_rows} rows"
            raise ValueError(msg)
        for score in verifier.scores:
            values = [v.scores.get(score) for v in verdicts]
            table = table.append_column(score_column(verifier.name, score), pa.array(values, pa.float64()))
        column = pa.array([v.to_dict() for v in verdicts], type=verdict_type(verifier.scores))
        stats.verifier_total[verifier.name] += len(verdicts)
        stats.verifier_passed[verifier.name] += sum(v.passed for v in verdicts)
        return table.append_column(verdict_column(verifier.name), column)

    def _apply_filter(self, step: Filter, table: pa.Table, stats: ShardStats) -> tuple[pa.Table, pa.Table]:
        if table.num_rows == 0:
            return table, self.rejected_schema.empty_table()
        decisions = step.keep_frame(pl.from_arrow(table.select(list(step.reads) or table.column_names)))
        drop = decisions["reason"].is_not_null()
        dropped = table.filter(drop.to_arrow())
        chosen = decisions.filter(drop)
        stats.rejected.update(chosen["reason"].to_list())
        dropped = dropped.append_column(FILTER_REASON_FIELD, chosen["reason"].to_arrow().cast(pa.string()))
        dropped = dropped.append_column(FILTER_STEP_FIELD, pa.array([step.name] * dropped.num_rows, pa.string()))
        dropped = dropped.append_column(FILTER_DETAIL_FIELD, chosen["detail"].to_arrow().cast(pa.string()))
        return table.filter(pc.invert(drop.to_arrow())), dropped.cast(self.rejected_schema)

    def _rejections_table(self, rejections: Sequence[Rejection], ctx: ShardContext, stats: ShardStats) -> pa.Table:
        if not rejections:
            return self.rejected_schema.empty_table()
        stats.rejected.update(r.reason for r in rejections)
        domain_names = set(self.generator.schema.names)
        provenance = self._provenance(ctx, [r.parent_ids for r in rejections])
        rows = []
        for rejection, origin in zip(rejections, provenance, strict=True):
            values = {k: v for k, v in rejection.values.items() if k in domain_names}
            identity = {"rejected": rejection.reason, **({"detail": rejection.detail} if rejection.detail else {})}
            rows.append(
                {
                    **values,
                    ID_FIELD: make_row_id(self.generator.name, {**identity, **values}),
                    PROVENANCE_FIELD: origin,
                    FILTER_REASON_FIELD: rejection.reason,
                    FILTER_STEP_FIELD: GENERATOR_STEP,
                    FILTER_DETAIL_FIELD: rejection.detail or None,
                }
            )
        return pa.Table.from_pylist(rows, schema=self.rejected_schema)


def build_pipeline(config: PipelineConfig) -> Pipeline:
    """Build the pipeline a validated config describes."""
    return Pipeline(config, get_domain(config.domain))
