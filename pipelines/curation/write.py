"""Pass 2: stream the inputs again and write each row to OUT's `data/` (kept) or `rejected/` (with its reason).

Output shard `s` of `S` holds input rows `[s*N//S, (s+1)*N//S)` in input order. Kept rows keep their `id` and
columns; their `provenance` names the curate step and the input row as parent. A rejected row's
`filter_detail` is JSON naming what it duplicates (`duplicate_of`: the kept row's id) or overlaps (`eval_set`,
`eval_item`), or the values behind a filter.
"""

from __future__ import annotations

import json
from collections.abc import Iterator, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np
import polars as pl
import pyarrow as pa

import synth
from synth.core.records import (
    FILTER_DETAIL_FIELD,
    FILTER_REASON_FIELD,
    FILTER_STEP_FIELD,
    ID_FIELD,
    PROVENANCE_FIELD,
    PROVENANCE_TYPE,
)
from synth.core.shard import BatchOutput, ShardStats
from synth.core.writer import DatasetWriter
from synth.pipelines.curation.config import Balance, CurateConfig, Decontaminate, ExactDedup, NearDedup, step_names
from synth.pipelines.curation.inputs import CurateInputs
from synth.pipelines.curation.operations import ROW_LOCAL, drop_and_detail
from synth.pipelines.curation.resolve import KEPT, Decisions

CURATE_VERSION = "1"


def output_schema(schema: pa.Schema) -> pa.Schema:
    """The input schema with synth's provenance struct (added when the input has none)."""
    if PROVENANCE_FIELD in schema.names:
        return schema.set(schema.get_field_index(PROVENANCE_FIELD), pa.field(PROVENANCE_FIELD, PROVENANCE_TYPE))
    return schema.append(pa.field(PROVENANCE_FIELD, PROVENANCE_TYPE))


@dataclass
class _Chunk:
    shard: int
    table: pa.Table
    base: int


class ShardWriter:
    """Writes the pending output shards of one curate run from its `Decisions`."""

    def __init__(
        self,
        config: CurateConfig,
        inputs: CurateInputs,
        decisions: Decisions,
        eval_ids: dict[int, list[tuple[str, str]]],
    ) -> None:
        self.config, self.inputs, self.decisions, self.eval_ids = config, inputs, decisions, eval_ids
        self.names = step_names(config)
        self.schema = output_schema(inputs.schema)
        self.rows = len(decisions.drop_op)
        reps = [
            refs["ref"]
            for i, refs in decisions.refs.items()
            if isinstance(config.operations[i], ExactDedup | NearDedup)
        ]
        self.reps = np.unique(np.concatenate(reps)) if reps else np.zeros(0, dtype=np.int64)
        self.rep_ids: dict[int, str] = {}
        pl_schema = inputs.polars_schema
        self.details = {
            i: drop_and_detail(op, pl_schema)[1] for i, op in enumerate(config.operations) if isinstance(op, ROW_LOCAL)
        }

    def bounds(self, shard: int) -> tuple[int, int]:
        shards = self.config.shards
        return shard * self.rows // shards, (shard + 1) * self.rows // shards

    def write(self, writer: DatasetWriter) -> None:
        """Stream the inputs once, writing every pending shard (complete shards are read past, not rewritten)."""
        chunks = self._chunks()
        pending = set(writer.pending)
        current = next(chunks, None)
        for shard in range(self.config.shards):

            def outputs(shard: int = shard) -> Iterator[BatchOutput]:
                nonlocal current
                while current is not None and current.shard == shard:
                    yield self._output(current, writer.config_hash)
                    current = next(chunks, None)

            if shard in pending:
                stats = ShardStats()
                if shard == 0:
                    stats.seconds.update({f"curate:{k}": v for k, v in self.decisions.seconds.items()})
                writer.write_shard(shard, outputs(), stats)
            else:
                for _ in outputs():
                    pass

    def _chunks(self) -> Iterator[_Chunk]:
        base = 0
        shard = 0
        for batch in self.inputs.batches(None, self.config.batch_rows):
            table = pa.Table.from_batches([batch])
            self._remember_reps(table, base)
            offset = 0
            while offset < table.num_rows:
                while self.bounds(shard)[1] <= base + offset and shard < self.config.shards - 1:
                    shard += 1
                stop = min(table.num_rows, self.bounds(shard)[1] - base)
                yield _Chunk(shard, table.slice(offset, stop - offset), base + offset)
                offset = stop
            base += table.num_rows

    def _remember_reps(self, table: pa.Table, base: int) -> None:
        ordinals = np.arange(base, base + table.num_rows)
        hit = np.flatnonzero(np.isin(ordinals, self.reps, assume_unique=True))
        if len(hit):
            ids = table.column(ID_FIELD).take(pa.array(hit)).to_pylist()
            self.rep_ids.update(zip((int(base + h) for h in hit), ids, strict=True))

    def _output(self, chunk: _Chunk, config_hash: str) -> BatchOutput:
        ops = self.decisions.drop_op[chunk.base : chunk.base + chunk.table.num_rows]
        kept_mask = ops == KEPT
        table = self._with_provenance(chunk.table, chunk.shard, config_hash)
        kept = table.filter(pa.array(kept_mask))
        dropped_at = np.flatnonzero(~kept_mask)
        dropped = table.take(pa.array(dropped_at))
        reasons, steps, details = self._reasons(chunk, dropped_at, ops[dropped_at])
        dropped = dropped.append_column(FILTER_REASON_FIELD, pa.array(reasons, pa.string()))
        dropped = dropped.append_column(FILTER_STEP_FIELD, pa.array(steps, pa.string()))
        dropped = dropped.append_column(FILTER_DETAIL_FIELD, pa.array(details, pa.string()))
        return BatchOutput(kept=kept.cast(self.schema), rejected=dropped.cast(self._rejected_schema()))

    def _rejected_schema(self) -> pa.Schema:
        from synth.core.records import rejected_schema

        return rejected_schema(self.schema)

    def _with_provenance(self, table: pa.Table, shard: int, config_hash: str) -> pa.Table:
        n = table.num_rows
        ids = table.column(ID_FIELD).combine_chunks().cast(pa.string())
        parents = pa.ListArray.from_arrays(pa.array(np.arange(n + 1, dtype=np.int32)), ids)
        values = [
            pa.repeat(pa.scalar("curate"), n),
            pa.repeat(pa.scalar(CURATE_VERSION), n),
            pa.repeat(pa.scalar(0, pa.int64()), n),
            pa.repeat(pa.scalar(shard, pa.int32()), n),
            pa.repeat(pa.scalar(config_hash), n),
            parents,
            pa.repeat(pa.scalar(synth.__version__), n),
        ]
        provenance = pa.StructArray.from_arrays(values, fields=list(PROVENANCE_TYPE))
        if PROVENANCE_FIELD in table.column_names:
            return table.set_column(table.column_names.index(PROVENANCE_FIELD), PROVENANCE_FIELD, provenance)
        return table.append_column(PROVENANCE_FIELD, provenance)

    def _reasons(self, chunk: _Chunk, at: np.ndarray, ops: np.ndarray) -> tuple[list[str], list[str], list[Any]]:
        reasons = [self.config.operations[int(op)].reason for op in ops]
        steps = [self.names[int(op)] for op in ops]
        details: list[Any] = [None] * len(at)
        for op_index in np.unique(ops):
            op = self.config.operations[int(op_index)]
            where = np.flatnonzero(ops == op_index)
            ordinals = chunk.base + at[where]
            if isinstance(op, ROW_LOCAL):
                frame = pl.from_arrow(chunk.table.take(pa.array(at[where])))
                texts = frame.select(self.details[int(op_index)]).to_series().to_list()  # type: ignore[union-attr]
            else:
                texts = self._ref_details(int(op_index), op, ordinals)
            for position, text in zip(where, texts, strict=True):
                details[position] = text
        return reasons, steps, details

    def _ref_details(self, op_index: int, op: Any, ordinals: np.ndarray) -> Sequence[str]:
        refs = self.decisions.refs[op_index]
        slot = np.searchsorted(refs["rows"], ordinals)
        ref = refs["ref"][slot]
        if isinstance(op, Decontaminate):
            items = [self.eval_ids[op_index][int(r)] for r in ref]
            return [_json({"eval_set": name, "eval_item": item}) for name, item in items]
        if isinstance(op, Balance):
            quota = next(e["quota"] for e in self.decisions.report if e["name"] == self.names[op_index])
            values = refs["values"]
            return [_json({"column": op.column, "value": str(values[int(r)]), "quota": quota}) for r in ref]
        if isinstance(op, NearDedup):
            sims = refs["sim"][slot]
            return [
                _json({"duplicate_of": self.rep_ids[int(r)], "similarity": round(float(s), 4)})
                for r, s in zip(ref, sims, strict=True)
            ]
        return [_json({"duplicate_of": self.rep_ids[int(r)]}) for r in ref]


def _json(value: dict[str, Any]) -> str:
    return json.dumps(value, ensure_ascii=False, separators=(",", ":"))
