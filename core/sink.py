"""The Arrow sink: Parquet shards written to a temp name then renamed, per-shard records, a run lock.

Layout of an output directory `OUT`:

    OUT/data/train-00000-of-00004.parquet      kept rows
    OUT/rejected/train-00000-of-00004.parquet  dropped rows with `filter_reason` and `filter_step`
    OUT/manifest.json                          config, config hash, per shard: rows, sha256, status
    OUT/README.md                              dataset card
    OUT/.synth/shards/00000.json               completion record of one shard (the source of truth)
    OUT/.synth/lock                            held by the run that owns OUT

A shard is complete when its record exists and both files still match the record's sha256; anything else
is redone from scratch on resume, so a killed run never leaves a half-written shard behind.
"""

from __future__ import annotations

import contextlib
import fcntl
import hashlib
import json
import os
import shutil
from collections.abc import Callable, Iterable, Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pyarrow as pa
import pyarrow.parquet as pq

from synth.core.errors import OutputDirError
from synth.core.shard import BatchOutput, ShardStats

DATA_DIR = "data"
REJECTED_DIR = "rejected"
STATE_DIR = ".synth"
MANIFEST_NAME = "manifest.json"
CARD_NAME = "README.md"
SPLIT = "train"
PARQUET_OPTIONS: dict[str, Any] = {"compression": "zstd", "compression_level": 3, "write_statistics": True}


def shard_file_name(index: int, num_shards: int) -> str:
    """Return `train-00003-of-00016.parquet` for shard 3 of 16."""
    return f"{SPLIT}-{index:05d}-of-{num_shards:05d}.parquet"


def sha256_file(path: Path) -> str:
    """Hex sha256 of a file's bytes."""
    digest = hashlib.sha256()
    with path.open("rb") as handle:
        for chunk in iter(lambda: handle.read(1 << 20), b""):
            digest.update(chunk)
    return digest.hexdigest()


def write_json_atomic(path: Path, value: Any) -> None:
    """Write `value` as indented JSON to a temp file, fsync it, then rename it over `path`."""
    tmp = path.with_name(f".{path.name}.tmp-{os.getpid()}")
    with tmp.open("w", encoding="utf-8") as handle:
        json.dump(value, handle, indent=2, ensure_ascii=False, sort_keys=False)
        handle.write("\n")
        handle.flush()
        os.fsync(handle.fileno())
    os.replace(tmp, path)


@dataclass(frozen=True)
class DatasetDir:
    """Paths and file operations of one output directory."""

    root: Path

    @property
    def data_dir(self) -> Path:
        return self.root / DATA_DIR

    @property
    def rejected_dir(self) -> Path:
        return self.root / REJECTED_DIR

    @property
    def state_dir(self) -> Path:
        return self.root / STATE_DIR

    @property
    def records_dir(self) -> Path:
        return self.state_dir / "shards"

    @property
    def manifest_path(self) -> Path:
        return self.root / MANIFEST_NAME

    @property
    def card_path(self) -> Path:
        return self.root / CARD_NAME

    def record_path(self, index: int) -> Path:
        return self.records_dir / f"{index:05d}.json"

    @contextlib.contextmanager
    def lock(self) -> Iterator[None]:
        """Hold an exclusive lock on OUT for the duration of a run; refuse at once if another run has it."""
        self.state_dir.mkdir(parents=True, exist_ok=True)
        handle = (self.state_dir / "lock").open("a+")
        try:
            try:
                fcntl.flock(handle, fcntl.LOCK_EX | fcntl.LOCK_NB)
            except BlockingIOError:
                handle.seek(0)
                holder = handle.read().strip() or "unknown"
                msg = (
                    f"{self.root}: output directory is in use by another synth run (pid {holder}); "
                    "wait for it or use another --out"
                )
                raise OutputDirError(msg) from None
            handle.seek(0)
            handle.truncate()
            handle.write(str(os.getpid()))
            handle.flush()
            yield
        finally:
            handle.close()

    def read_manifest(self) -> dict[str, Any] | None:
        """The manifest, or None when OUT has none."""
        if not self.manifest_path.is_file():
            return None
        return json.loads(self.manifest_path.read_text(encoding="utf-8"))

    def check_owner(self, config_hash: str) -> None:
        """Refuse an OUT that holds another config's data or foreign files."""
        manifest = self.read_manifest()
        if manifest is not None:
            if manifest.get("config_hash") != config_hash:
                msg = (
                    f"{self.root}: holds a dataset made with another config "
                    f"(hash {manifest.get('config_hash')}, this run {config_hash}); "
                    "use another --out, or --overwrite to replace it"
                )
                raise OutputDirError(msg)
            return
        foreign = sorted(p.name for p in self.root.iterdir() if p.name != STATE_DIR) if self.root.exists() else []
        if foreign:
            msg = (
                f"{self.root}: not empty and holds no synth manifest (found {foreign[0]!r}); use an empty or new --out"
            )
            raise OutputDirError(msg)

    def clear(self) -> None:
        """Remove everything synth wrote in OUT (for --overwrite); leaves foreign files and the lock alone."""
        for directory in (self.data_dir, self.rejected_dir, self.records_dir):
            shutil.rmtree(directory, ignore_errors=True)
        for path in (self.manifest_path, self.card_path):
            path.unlink(missing_ok=True)

    def write_card(self, text: str) -> None:
        """Write README.md (the dataset card) to a temp name, then rename it into place."""
        tmp = self.card_path.with_name(f".{CARD_NAME}.tmp-{os.getpid()}")
        tmp.write_text(text, encoding="utf-8")
        os.replace(tmp, self.card_path)

    def shard_paths(self, index: int, num_shards: int) -> tuple[Path, Path]:
        name = shard_file_name(index, num_shards)
        return self.data_dir / name, self.rejected_dir / name

    def read_record(self, index: int) -> dict[str, Any] | None:
        """The completion record of shard `index` if the shard is complete and intact, else None."""
        path = self.record_path(index)
        if not path.is_file():
            return None
        record = json.loads(path.read_text(encoding="utf-8"))
        data, rejected = self.root / record["path"], self.root / record["rejected_path"]
        if not (data.is_file() and rejected.is_file()):
            return None
        if sha256_file(data) != record["sha256"] or sha256_file(rejected) != record["rejected_sha256"]:
            return None
        return record

    def complete_shards(self, num_shards: int) -> dict[int, dict[str, Any]]:
        """Records of all complete, intact shards."""
        records = {}
        for index in range(num_shards):
            record = self.read_record(index)
            if record is not None:
                records[index] = record
        return records

    def remove_stale(self, index: int, num_shards: int) -> None:
        """Delete the partial files of an incomplete shard, including temp files of killed runs."""
        self.record_path(index).unlink(missing_ok=True)
        for path in self.shard_paths(index, num_shards):
            path.unlink(missing_ok=True)
            for tmp in path.parent.glob(f".{path.name}.tmp-*"):
                tmp.unlink(missing_ok=True)

    def write_shard(
        self,
        index: int,
        num_shards: int,
        *,
        schema: pa.Schema,
        rejected_schema: pa.Schema,
        outputs: Iterable[BatchOutput],
        stats: ShardStats,
        on_batch: Callable[[int], None] | None = None,
    ) -> dict[str, Any]:
        """Stream `outputs` (which fill `stats`) into shard `index`'s Parquet files, rename them into place and
        write the shard's completion record."""
        self.remove_stale(index, num_shards)
        for directory in (self.data_dir, self.rejected_dir, self.records_dir):
            directory.mkdir(parents=True, exist_ok=True)
        data, rejected = self.shard_paths(index, num_shards)
        tmp_data = data.with_name(f".{data.name}.tmp-{os.getpid()}")
        tmp_rejected = rejected.with_name(f".{rejected.name}.tmp-{os.getpid()}")
        with (
            pq.ParquetWriter(tmp_data, schema, **PARQUET_OPTIONS) as kept_writer,
            pq.ParquetWriter(tmp_rejected, rejected_schema, **PARQUET_OPTIONS) as rejected_writer,
        ):
            for output in outputs:
                _write_nonempty(kept_writer, output.kept)
                _write_nonempty(rejected_writer, output.rejected)
                if on_batch is not None:
                    on_batch(output.kept.num_rows + output.rejected.num_rows)
        rejected_rows = sum(stats.rejected.values())
        for tmp, final in ((tmp_data, data), (tmp_rejected, rejected)):
            _fsync(tmp)
            os.replace(tmp, final)
        record = {
            "index": index,
            "status": "complete",
            "path": f"{DATA_DIR}/{data.name}",
            "rows": stats.kept,
            "sha256": sha256_file(data),
            "bytes": data.stat().st_size,
            "rejected_path": f"{REJECTED_DIR}/{rejected.name}",
            "rejected_rows": rejected_rows,
            "rejected_sha256": sha256_file(rejected),
            "stats": stats.to_dict(),
        }
        write_json_atomic(self.record_path(index), record)
        return record


def _write_nonempty(writer: pq.ParquetWriter, table: pa.Table) -> None:
    if table.num_rows:
        writer.write_table(table)


def _fsync(path: Path) -> None:
    with path.open("rb") as handle:
        os.fsync(handle.fileno())
