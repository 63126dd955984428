"""Write a derived dataset: what any stage that is not a generator (curate, audit, export tables) produces.

The layout, the shard writer, the manifest and the card are the generator datasets' own (`core.sink`), so every
reader (`core.dataset`, `datasets.load_dataset`) treats both alike; the manifest also names the input datasets
(path + manifest sha256). Writes go to temp names then renames; complete shards are kept on rerun.

    >>> with DatasetWriter(out, domain="toolforge-negatives", config={"seed": 0}, schema=schema) as writer:
    ...     writer.write_table(0, table)                                       # doctest: +SKIP
"""

from __future__ import annotations

import contextlib
import hashlib
from collections.abc import Iterable, Iterator, Mapping, Sequence
from pathlib import Path
from types import TracebackType
from typing import Any

import pyarrow as pa

from synth.core.card import CardSubject, render_card
from synth.core.manifest import build_manifest
from synth.core.records import FILTER_REASON_FIELD, canonical_json, rejected_schema
from synth.core.shard import BatchOutput, ShardStats
from synth.core.sink import DatasetDir, write_json_atomic


def input_reference(name: str, path: str | Path) -> dict[str, Any]:
    """How a derived dataset names one input: stage (or label), path and the sha256 of its manifest."""
    from synth.core.dataset import open_dataset

    dataset = open_dataset(path)
    return {"name": name, "path": str(dataset.root), "manifest_sha256": dataset.manifest_sha256, "rows": dataset.rows}


def config_fingerprint(config: Mapping[str, Any]) -> str:
    """16 hex digits of sha256 over the canonical JSON of a derived dataset's config."""
    return hashlib.sha256(canonical_json(dict(config)).encode()).hexdigest()[:16]


class DatasetWriter:
    """Owns one output directory while a derived dataset is written into it.

    Args:
        out: the dataset directory (created; refused if it holds another config's dataset).
        domain: what the manifest and card call the dataset (e.g. `toolforge-negatives`).
        config: the settings that decide the data (hashed; the rerun of another config is refused).
        schema: Arrow schema of the kept rows; `rejected/` rows get `rejected_schema(schema)`.
        num_shards: shards this dataset has (fixed for its life).
        inputs: the datasets read, from `input_reference`.
        summary: one paragraph for the card.
    """

    def __init__(
        self,
        out: str | Path,
        *,
        domain: str,
        config: Mapping[str, Any],
        schema: pa.Schema,
        num_shards: int = 1,
        inputs: Sequence[Mapping[str, Any]] = (),
        summary: str = "",
        card: Mapping[str, Any] | None = None,
        overwrite: bool = False,
    ) -> None:
        self.out = DatasetDir(Path(out))
        self.domain = domain
        self.config = {**dict(config), "card": dict(card or {})}
        self.config_hash = config_fingerprint(config)
        self.schema = schema
        self.rejected_schema = rejected_schema(schema)
        self.num_shards = num_shards
        self.inputs = [dict(item) for item in inputs]
        self.subject = CardSubject(name=domain, summary=summary)
        self.overwrite = overwrite
        self.records: dict[int, dict[str, Any]] = {}
        self._stack = contextlib.ExitStack()

    def __enter__(self) -> DatasetWriter:
        self.out.root.mkdir(parents=True, exist_ok=True)
        self._stack.enter_context(self.out.lock())
        self.records = self.out.prepare(self.config_hash, self.num_shards, overwrite=self.overwrite)
        self.write_manifest()
        return self

    def __exit__(
        self, kind: type[BaseException] | None, error: BaseException | None, trace: TracebackType | None
    ) -> None:
        self._stack.close()

    @property
    def pending(self) -> list[int]:
        """Shards still to write."""
        return [index for index in range(self.num_shards) if index not in self.records]

    def write_shard(
        self, index: int, outputs: Iterable[BatchOutput], stats: ShardStats | None = None
    ) -> dict[str, Any]:
        """Stream `outputs` into shard `index` (temp name, fsync, rename) and record it."""
        stats = stats or ShardStats()
        record = self.out.write_shard(
            index,
            self.num_shards,
            schema=self.schema,
            rejected_schema=self.rejected_schema,
            outputs=self._counted(outputs, stats),
            stats=stats,
        )
        self.records[index] = record
        self.write_manifest()
        return record

    def write_table(self, index: int, kept: pa.Table, rejected: pa.Table | None = None) -> dict[str, Any]:
        """Write one shard from whole tables (cast to the declared schemas)."""
        dropped = self.rejected_schema.empty_table() if rejected is None else rejected.cast(self.rejected_schema)
        return self.write_shard(index, [BatchOutput(kept=kept.cast(self.schema), rejected=dropped)])

    def write_manifest(self) -> dict[str, Any]:
        """Write manifest.json for the current state and return it."""
        manifest = build_manifest(
            domain=self.domain,
            config_hash=self.config_hash,
            config=self.config,
            num_shards=self.num_shards,
            columns=self.schema.names,
            input_info={},
            records=self.records,
            previous=self.out.read_manifest(),
            inputs=self.inputs,
        )
        write_json_atomic(self.out.manifest_path, manifest)
        return manifest

    def finalize(self, *, extra_files: Mapping[str, Any] | None = None) -> dict[str, Any]:
        """Write the final manifest, any extra JSON files, and (when complete) the card; return the manifest."""
        for name, value in (extra_files or {}).items():
            write_json_atomic(self.out.root / name, value)
        manifest = self.write_manifest()
        if manifest["status"] == "complete":
            self.out.write_card(render_card(manifest, self.subject))
        return manifest

    @staticmethod
    def _counted(outputs: Iterable[BatchOutput], stats: ShardStats) -> Iterator[BatchOutput]:
        for output in outputs:
            stats.generated += output.kept.num_rows + output.rejected.num_rows
            stats.kept += output.kept.num_rows
            if output.rejected.num_rows:
                stats.rejected.update(output.rejected.column(FILTER_REASON_FIELD).to_pylist())
            yield output
