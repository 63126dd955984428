"""The Arrow sink: Parquet shards written to a temp name then renamed, per-shard records, a run lock.

Layout of an output directory `OUT`:

    OUT/data/train-00000-of-00004.parquet      kept rows
    OUT/rejected/train-00000-of-00004.parquet  dropped rows with `filter_reason` and `filter_step`
    OUT/manifest.json                          config, config hash, per shard: rows, sha256, status
    OUT/README.md                              dataset card (a placeholder while the run is incomplete)
    OUT/.synth/shards/00000.json               completion record of one shard (the source of truth)
    OUT/.synth/lock                            held by the run that owns OUT

A shard is complete when its record exists and both files still match the record's sha256; anything else
is redone from scratch on resume, so a killed run never leaves a half-written shard behind. Every file is
written to a hidden temp name (`.NAME.tmp-PID`), fsynced, then renamed; a failed write removes its temp file,
and a killed run's temp files are synth's own: they never make OUT look foreign.

A generator may declare a split column (schema metadata `SPLIT_COLUMN_KEY`, e.g. `split`): each shard's kept rows
then go to one file per split value, `OUT/data/<split>-00000-of-00004.parquet`, listed in the shard record's
`files` (split, path, rows, bytes, sha256) instead of its single `path`, and the card names one Hugging Face
split per value. `shard_data_files` reads either form.

Whenever `manifest.json` exists, so does `README.md`: until the run completes it is `INCOMPLETE_CARD`, whose
`configs` name a data file that never exists, so `datasets.load_dataset(OUT)` fails with a message saying so
instead of loading partial shards (or, with no card at all, `manifest.json` itself as a one-row dataset).
"""

from __future__ import annotations

import contextlib
import fcntl
import hashlib
import json
import os
import re
import shutil
from collections import deque
from collections.abc import Callable, Iterable, Iterator, Mapping
from concurrent.futures import Future, ThreadPoolExecutor
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pyarrow as pa
import pyarrow.compute as pc
import pyarrow.parquet as pq

from synth.core.errors import InputError, OutputDirError
from synth.core.manifest import MANIFEST_FORMAT, check_manifest
from synth.core.shard import BatchOutput, ShardStats

DATA_DIR = "data"
REJECTED_DIR = "rejected"
STATE_DIR = ".synth"
MANIFEST_NAME = "manifest.json"
CARD_NAME = "README.md"
SPLIT = "train"
SPLIT_COLUMN_KEY = b"synth.split_column"
#: Splits a split column's values are listed in (other values follow, sorted).
SPLIT_ORDER = ("train", "validation", "test")
PARQUET_OPTIONS: dict[str, Any] = {"compression": "zstd", "compression_level": 3, "write_statistics": True}
INCOMPLETE_PATH = "INCOMPLETE-run-synth-again-to-finish"
INCOMPLETE_CARD = f"""---
configs:
- config_name: default
  default: true
  data_files:
  - split: {SPLIT}
    path: {DATA_DIR}/{INCOMPLETE_PATH}
- config_name: rejected
  data_files:
  - split: {SPLIT}
    path: {REJECTED_DIR}/{INCOMPLETE_PATH}
---
# Incomplete synth dataset

A synth run is writing this directory, or was interrupted before it finished. Run the same `synth` command
again (same config, same `--out`) to finish it; complete shards are kept. Until then `load_dataset` refuses
this directory and `synth inspect` / `synth verify` report how many shards are done.
"""
_TEMP_NAME = re.compile(r"\..+\.tmp-\d+")


def is_temp_name(name: str) -> bool:
    """Whether `name` is one of synth's temp files (`.NAME.tmp-PID`), left behind only by a killed run."""
    return _TEMP_NAME.fullmatch(name) is not None


@contextlib.contextmanager
def naming_errors(path: Path) -> Iterator[None]:
    """Name `path` on any `OSError` raised inside that names no file (pyarrow's) or only `path`'s temp file."""
    try:
        yield
    except OSError as error:
        if error.filename is None or is_temp_name(os.path.basename(str(error.filename))):
            error.filename = str(path)
        raise


def shard_file_name(index: int, num_shards: int) -> str:
    """Return `train-00003-of-00016.parquet` for shard 3 of 16."""
    return f"{SPLIT}-{index:05d}-of-{num_shards:05d}.parquet"


def split_file_name(split: str, index: int, num_shards: int) -> str:
    """Return `test-00003-of-00016.parquet` for the `test` rows of shard 3 of 16 (a dataset with splits)."""
    return f"{split}-{index:05d}-of-{num_shards:05d}.parquet"


def split_column(schema: pa.Schema) -> str | None:
    """The split column a schema declares in its metadata (`SPLIT_COLUMN_KEY`), or None."""
    value = (schema.metadata or {}).get(SPLIT_COLUMN_KEY)
    return None if value is None else value.decode()


def split_sort_key(split: str) -> tuple[int, str]:
    """Order splits train, validation, test, then any other value alphabetically."""
    return (SPLIT_ORDER.index(split), "") if split in SPLIT_ORDER else (len(SPLIT_ORDER), split)


def shard_data_files(shard: Mapping[str, Any]) -> list[dict[str, Any]]:
    """The kept-row files of a complete shard record: its `files` (datasets with splits) or its one `path`."""
    if shard.get("files") is not None:
        return [dict(entry) for entry in shard["files"]]
    if not shard.get("path"):
        return []
    keys = ("path", "sha256", "rows", "bytes")
    return [{"split": SPLIT} | {key: shard.get(key) for key in keys}]


def sha256_file(path: Path) -> str:
    """Hex sha256 of a file's bytes."""
    digest = hashlib.sha256()
    with path.open("rb") as handle:
        for chunk in iter(lambda: handle.read(1 << 20), b""):
            digest.update(chunk)
    return digest.hexdigest()


def temp_path(path: Path) -> Path:
    """The temp name `path` is written under before it is renamed into place."""
    return path.with_name(f".{path.name}.tmp-{os.getpid()}")


def write_atomic(path: Path, write: Callable[[Path], None]) -> None:
    """Call `write(temp)` to write a file under `path`'s temp name, fsync it, then rename it over `path`; on
    failure remove the temp file (an `OSError` names `path`, not the temp file)."""
    tmp = temp_path(path)
    try:
        with naming_errors(path):
            write(tmp)
            with tmp.open("rb") as handle:
                os.fsync(handle.fileno())
            os.replace(tmp, path)
    except BaseException:
        tmp.unlink(missing_ok=True)
        raise


def write_text_atomic(path: Path, text: str) -> None:
    """Write `text` as UTF-8 through `write_atomic`."""
    write_atomic(path, lambda tmp: tmp.write_text(text, encoding="utf-8"))


def write_json_atomic(path: Path, value: Any, *, sort_keys: bool = False) -> None:
    """Write `value` as indented JSON (non-ASCII kept as is) through `write_atomic`."""
    write_text_atomic(path, json.dumps(value, indent=2, ensure_ascii=False, sort_keys=sort_keys) + "\n")


def read_manifest_file(path: Path) -> dict[str, Any]:
    """Read and shape-check a manifest; a damaged one is a one-line `InputError` naming the file."""
    try:
        value = json.loads(path.read_bytes().decode("utf-8"))
    except UnicodeDecodeError:
        problem = "not UTF-8 text"
    except json.JSONDecodeError as error:
        problem = f"not valid JSON: {error.msg} at line {error.lineno}"
    except RecursionError:
        problem = "not valid JSON: nested too deeply"
    else:
        return check_manifest(value, source=str(path))
    msg = (
        f"{path}: damaged manifest ({problem}); rerun the command that made this dataset with --overwrite to rebuild it"
    )
    raise InputError(msg)


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
        if self.root.exists() and not self.root.is_dir():
            msg = f"{self.root}: is a file, not a directory; use another --out"
            raise OutputDirError(msg)
        path = self.state_dir / "lock"
        with naming_errors(path):
            self.state_dir.mkdir(parents=True, exist_ok=True)
            handle = path.open("a+")
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
            with naming_errors(path):
                handle.seek(0)
                handle.truncate()
                handle.write(str(os.getpid()))
                handle.flush()
            yield
        finally:
            with naming_errors(path):
                handle.close()

    def read_manifest(self) -> dict[str, Any] | None:
        """The manifest, or None when OUT has none; a damaged one is a one-line `InputError`."""
        if not self.manifest_path.is_file():
            return None
        return read_manifest_file(self.manifest_path)

    def check_owner(self, config_hash: str) -> None:
        """Refuse an OUT that holds another config's data or foreign files."""
        try:
            manifest = self.read_manifest()
        except InputError as error:
            raise OutputDirError(str(error)) from None
        if manifest is not None:
            if manifest["format"] != MANIFEST_FORMAT:
                msg = f"{self.root}: holds a {manifest['format']} manifest, not a dataset's; use another --out"
                raise OutputDirError(msg)
            if manifest["config_hash"] != config_hash:
                msg = (
                    f"{self.root}: holds a dataset made with another config "
                    f"(hash {manifest['config_hash']}, this run {config_hash}); "
                    "use another --out, or --overwrite to replace it"
                )
                raise OutputDirError(msg)
            return
        foreign = self.foreign_names()
        if foreign:
            msg = (
                f"{self.root}: not empty and holds no synth manifest (found {foreign[0]!r}); use an empty or new --out"
            )
            raise OutputDirError(msg)

    def foreign_names(self) -> list[str]:
        """Names in OUT that are not synth's own state, temp files or placeholder card, sorted."""
        if not self.root.is_dir():
            return []
        return sorted(path.name for path in self.root.iterdir() if not self._is_own(path))

    def _is_own(self, path: Path) -> bool:
        if path.name == STATE_DIR or (is_temp_name(path.name) and path.is_file()):
            return True
        return path == self.card_path and path.is_file() and self.has_incomplete_card()

    def has_incomplete_card(self) -> bool:
        """Whether README.md is the placeholder card of an unfinished run."""
        try:
            return self.card_path.read_bytes() == INCOMPLETE_CARD.encode()
        except OSError:
            return False

    def mark_incomplete(self) -> None:
        """Put the placeholder card in place, so `load_dataset(OUT)` refuses OUT until the run completes."""
        if not self.has_incomplete_card():
            self.write_card(INCOMPLETE_CARD)

    def remove_temp_files(self) -> None:
        """Delete the temp manifest, card and record files a killed run left (call with the lock held)."""
        for folder in (self.root, self.records_dir):
            if folder.is_dir():
                for path in folder.iterdir():
                    if is_temp_name(path.name) and path.is_file():
                        path.unlink(missing_ok=True)

    def clear(self) -> None:
        """Remove everything synth wrote in OUT (for --overwrite); leaves foreign files and the lock alone.

        The placeholder card goes in first and the manifest goes last, so an interrupted clear leaves an OUT
        that `load_dataset` refuses and that a rerun still recognises as synth's.
        """
        self.mark_incomplete()
        for directory in (self.records_dir, self.data_dir, self.rejected_dir):
            shutil.rmtree(directory, ignore_errors=True)
        self.remove_temp_files()
        self.manifest_path.unlink(missing_ok=True)

    def write_card(self, text: str) -> None:
        """Write README.md (the dataset card) to a temp name, fsync it, then rename it into place."""
        write_text_atomic(self.card_path, text)

    def prepare(self, config_hash: str, num_shards: int, *, overwrite: bool = False) -> dict[int, dict[str, Any]]:
        """Under the lock: clear (with `overwrite`), refuse another config's OUT, drop temp files and partial
        shards, put the placeholder card in when shards remain, and return the complete shards' records."""
        if overwrite:
            self.clear()
        self.check_owner(config_hash)
        self.remove_temp_files()
        records = self.complete_shards(num_shards)
        pending = [index for index in range(num_shards) if index not in records]
        for index in pending:
            self.remove_stale(index, num_shards)
        if pending:
            self.mark_incomplete()
        return records

    def shard_paths(self, index: int, num_shards: int) -> tuple[Path, Path]:
        name = shard_file_name(index, num_shards)
        return self.data_dir / name, self.rejected_dir / name

    def read_record(self, index: int) -> dict[str, Any] | None:
        """The completion record of shard `index` if the shard is complete and intact, else None."""
        path = self.record_path(index)
        if not path.is_file():
            return None
        try:
            record = json.loads(path.read_bytes().decode("utf-8"))
            pairs = [(f["path"], f["sha256"]) for f in shard_data_files(record)]
            pairs.append((record["rejected_path"], record["rejected_sha256"]))
            files = [(self.root / relative, digest) for relative, digest in pairs]
        except (ValueError, KeyError, TypeError, AttributeError):
            return None  # a damaged record: the shard is redone
        if not all(file.is_file() and sha256_file(file) == digest for file, digest in files):
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
        suffix = f"-{index:05d}-of-{num_shards:05d}.parquet"
        if self.data_dir.is_dir():  # per-split files of a dataset with splits, and their temp files
            for path in self.data_dir.iterdir():
                if path.name.endswith(suffix) or (is_temp_name(path.name) and f"{suffix}.tmp-" in path.name):
                    path.unlink(missing_ok=True)

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
        write the shard's completion record. On any failure the shard's files are removed again."""
        self.remove_stale(index, num_shards)
        try:
            return self._write_shard(index, num_shards, schema, rejected_schema, outputs, stats, on_batch)
        except BaseException:
            self.remove_stale(index, num_shards)
            raise

    def _write_shard(
        self,
        index: int,
        num_shards: int,
        schema: pa.Schema,
        rejected_schema: pa.Schema,
        outputs: Iterable[BatchOutput],
        stats: ShardStats,
        on_batch: Callable[[int], None] | None,
    ) -> dict[str, Any]:
        for directory in (self.data_dir, self.rejected_dir, self.records_dir):
            with naming_errors(directory):
                directory.mkdir(parents=True, exist_ok=True)
        data, rejected = self.shard_paths(index, num_shards)
        split = split_column(schema) is not None
        kept_writer = _SplitWriter(self, index, num_shards, schema) if split else _ShardFileWriter(data, schema)
        with kept_writer, _ShardFileWriter(rejected, rejected_schema) as dropped_writer, WriteBehind() as writes:
            for output in outputs:
                writes.submit(kept_writer.write, output.kept)
                writes.submit(dropped_writer.write, output.rejected)
                if on_batch is not None:
                    on_batch(output.kept.num_rows + output.rejected.num_rows)
        kept_writer.commit()
        dropped_writer.commit()
        rejected_rows = sum(stats.rejected.values())
        if isinstance(kept_writer, _SplitWriter):
            kept: dict[str, Any] = {"files": kept_writer.entries(), "rows": stats.kept}
        else:
            kept = {"path": f"{DATA_DIR}/{data.name}", "rows": stats.kept}
            kept |= {"sha256": sha256_file(data), "bytes": data.stat().st_size}
        record = {
            "index": index,
            "status": "complete",
            **kept,
            "rejected_path": f"{REJECTED_DIR}/{rejected.name}",
            "rejected_rows": rejected_rows,
            "rejected_sha256": sha256_file(rejected),
            "stats": stats.to_dict(),
        }
        write_json_atomic(self.record_path(index), record)
        return record


class WriteBehind:
    """Runs writes in order on one background thread while the caller produces the next batch (pyarrow encodes
    and compresses Parquet without holding the GIL). At most `depth` writes wait; a failed write raises from the
    next `submit` or from leaving the block, which always waits for the writes in flight first."""

    def __init__(self, depth: int = 2) -> None:
        self.depth = depth
        self._pool = ThreadPoolExecutor(max_workers=1, thread_name_prefix="synth-write")
        self._pending: deque[Future[None]] = deque()

    def __enter__(self) -> WriteBehind:
        return self

    def submit(self, write: Callable[[pa.Table], None], table: pa.Table) -> None:
        while len(self._pending) >= self.depth:
            self._pending.popleft().result()
        self._pending.append(self._pool.submit(write, table))

    def __exit__(self, exc_type: type[BaseException] | None, *exc_info: object) -> None:
        try:
            while self._pending:
                future = self._pending.popleft()
                if exc_type is None:
                    future.result()
                else:  # the block's own error is the one to report; just let the writes finish
                    future.exception()
        finally:
            self._pool.shutdown(wait=True)


class _ShardFileWriter:
    """A Parquet writer on the temp name of `final`, renamed into place by `commit`; its OSErrors name `final`."""

    def __init__(self, final: Path, schema: pa.Schema) -> None:
        self.final, self.tmp = final, temp_path(final)
        with naming_errors(final):
            self._writer = pq.ParquetWriter(self.tmp, schema, **PARQUET_OPTIONS)

    def __enter__(self) -> _ShardFileWriter:
        return self

    def __exit__(self, *exc_info: object) -> None:
        with naming_errors(self.final):
            self._writer.close()

    def write(self, table: pa.Table) -> None:
        if table.num_rows:
            with naming_errors(self.final):
                self._writer.write_table(table)

    def commit(self) -> None:
        """fsync the closed temp file and rename it to its final name."""
        with naming_errors(self.final):
            with self.tmp.open("rb") as handle:
                os.fsync(handle.fileno())
            os.replace(self.tmp, self.final)


class _SplitWriter:
    """One `_ShardFileWriter` per value of the schema's split column, opened when that value first occurs."""

    def __init__(self, out: DatasetDir, index: int, num_shards: int, schema: pa.Schema) -> None:
        self.out, self.index, self.num_shards, self.schema = out, index, num_shards, schema
        self.column = split_column(schema) or ""
        self.writers: dict[str, _ShardFileWriter] = {}
        self.rows: dict[str, int] = {}

    def __enter__(self) -> _SplitWriter:
        return self

    def __exit__(self, *exc_info: object) -> None:
        for writer in self.writers.values():
            writer.__exit__(*exc_info)

    def write(self, table: pa.Table) -> None:
        if not table.num_rows:
            return
        values = table.column(self.column)
        if values.null_count:
            msg = f"split column `{self.column}` is null on {values.null_count} kept row(s) of shard {self.index}"
            raise ValueError(msg)
        for split in sorted(set(values.to_pylist()), key=split_sort_key):
            if not re.fullmatch(r"[A-Za-z0-9_]+", split):
                msg = f"split column `{self.column}`: {split!r} is not a split name (letters, digits, _)"
                raise ValueError(msg)
            if split not in self.writers:
                name = split_file_name(split, self.index, self.num_shards)
                self.writers[split] = _ShardFileWriter(self.out.data_dir / name, self.schema)
                self.rows[split] = 0
            part = table.filter(pc.equal(values, split))
            self.writers[split].write(part)
            self.rows[split] += part.num_rows

    def commit(self) -> None:
        for writer in self.writers.values():
            writer.commit()

    def entries(self) -> list[dict[str, Any]]:
        """The `files` of the shard record, in split order."""
        return [
            {
                "split": split,
                "path": f"{DATA_DIR}/{writer.final.name}",
                "rows": self.rows[split],
                "sha256": sha256_file(writer.final),
                "bytes": writer.final.stat().st_size,
            }
            for split, writer in sorted(self.writers.items(), key=lambda item: split_sort_key(item[0]))
        ]
