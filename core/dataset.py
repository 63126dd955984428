"""The dataset API: the one way to read a synth dataset (kept or rejected rows, manifest, schema metadata).

A synth dataset is a directory with `manifest.json`, `data/` and `rejected/` Parquet shards and a `README.md`
card. Readers take the shards the manifest lists (in shard order), never a glob, so a stray Parquet file is not
read as data. `read_*` is eager, `scan` lazy (polars naming).

    >>> ds = open_dataset("out/papyrus", domain="papyrus")                   # doctest: +SKIP
    >>> ds.scan(columns=["doc_id", "cer_target"]).collect().height           # doctest: +SKIP
    >>> read_rows("out/papyrus", columns=["doc_id"]).height                  # doctest: +SKIP
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Literal

import polars as pl
import pyarrow as pa
import pyarrow.parquet as pq

from synth.core.errors import InputError
from synth.core.sink import DatasetDir, shard_data_files
from synth.core.versions import resolve_latest

Part = Literal["kept", "rejected"]


@dataclass(frozen=True)
class SynthDataset:
    """An opened synth dataset directory: its manifest and the shard files it lists."""

    root: Path
    manifest: dict[str, Any]

    @property
    def domain(self) -> str | None:
        """The domain (generator datasets) or the stage kind that wrote the dataset."""
        return self.manifest.get("domain")

    @property
    def complete(self) -> bool:
        return self.manifest.get("status") == "complete"

    @property
    def manifest_sha256(self) -> str:
        """sha256 of manifest.json as written (what downstream stages record as this input's identity)."""
        from synth.core.sink import sha256_file

        return sha256_file(self.root / "manifest.json")

    def files(self, part: Part = "kept", *, split: str | None = None) -> list[Path]:
        """The complete shards' Parquet files of `part`, in shard order (then split order within a shard).

        `split` keeps only the kept-row files of that split (a dataset with splits; others hold `train` only).
        """
        shards = sorted(
            (s for s in self.manifest.get("shards", []) if s.get("status") == "complete"), key=lambda s: s["index"]
        )
        if part == "rejected":
            return [self.root / s["rejected_path"] for s in shards if s.get("rejected_path")]
        entries = [entry for s in shards for entry in shard_data_files(s)]
        return [self.root / e["path"] for e in entries if split is None or e["split"] == split]

    @property
    def splits(self) -> list[str]:
        """The splits of the kept rows: `train` only, or the values of a declared split column."""
        from synth.core.sink import split_sort_key

        found = {e["split"] for s in self.manifest.get("shards", []) for e in shard_data_files(s)}
        return sorted(found, key=split_sort_key)

    @property
    def rows(self) -> int:
        """Kept rows over the complete shards."""
        return sum(int(s.get("rows", 0)) for s in self.manifest.get("shards", []) if s.get("status") == "complete")

    def schema(self, part: Part = "kept") -> pa.Schema:
        """The Arrow schema (with its metadata) of `part`'s shards."""
        files = self.files(part)
        if not files:
            msg = f"{self.root}: no complete {part} shards; has the run finished?"
            raise InputError(msg)
        return _read_schema(files[0])

    def metadata(self, key: str) -> str | None:
        """One schema-metadata value of the kept shards, decoded; None when absent."""
        value = (self.schema().metadata or {}).get(key.encode())
        return None if value is None else value.decode()

    def _columns(
        self, part: Part, columns: Sequence[str] | None, optional: Sequence[str] | None, needs: str
    ) -> list[str]:
        names = self.schema(part).names
        if columns is None:
            return names
        missing = [c for c in columns if c not in names]
        if missing:
            wanted = ", ".join(f"`{c}`" for c in columns)
            msg = f"{self.root}: column `{missing[0]}` is missing from the {part} rows; {needs} needs {wanted}"
            raise InputError(msg)
        extra = names if optional is None else [c for c in optional if c in names]
        return list(dict.fromkeys([*columns, *extra]))

    def scan(
        self,
        *,
        columns: Sequence[str] | None = None,
        optional: Sequence[str] | None = (),
        part: Part = "kept",
        needs: str = "this command",
    ) -> pl.LazyFrame:
        """A lazy frame over `part`'s rows: `columns` (all when None) plus the `optional` ones present (every other
        column when `optional` is None)."""
        chosen = self._columns(part, columns, optional, needs)
        return pl.scan_parquet(self.files(part)).select(chosen)

    def read_table(
        self,
        *,
        columns: Sequence[str] | None = None,
        optional: Sequence[str] | None = (),
        part: Part = "kept",
        needs: str = "this command",
    ) -> pa.Table:
        """`part`'s rows as one Arrow table, exactly as stored (types and metadata kept)."""
        chosen = self._columns(part, columns, optional, needs)
        tables = [_read_table(path, chosen) for path in self.files(part)]
        return pa.concat_tables(tables) if tables else self.schema(part).empty_table().select(chosen)


def open_dataset(
    path: str | Path,
    *,
    domain: str | Sequence[str] | None = None,
    require_complete: bool = True,
    needs: str = "this command",
) -> SynthDataset:
    """Open a synth dataset directory.

    Raises a one-line `InputError` for a missing directory, a directory without (or with a corrupt) manifest,
    a dataset of another `domain`, and, unless `require_complete` is False, an incomplete dataset. A versioned
    output root (`synth deploy`) opens its latest complete version.
    """
    root = resolve_latest(path)
    if not root.is_dir():
        msg = f"{root}: dataset directory not found"
        raise InputError(msg)
    manifest = DatasetDir(root).read_manifest()
    if manifest is None:
        msg = f"{root}: no manifest.json here; is this a synth dataset directory?"
        raise InputError(msg)
    dataset = SynthDataset(root=root, manifest=manifest)
    wanted = (domain,) if isinstance(domain, str) else tuple(domain or ())
    if wanted and dataset.domain not in wanted:
        expected = " or ".join(repr(d) for d in wanted)
        msg = f"{root}: a {dataset.domain!r} dataset, but {needs} needs a {expected} dataset (manifest `domain`)"
        raise InputError(msg)
    if require_complete and not dataset.complete:
        done = sum(s.get("status") == "complete" for s in manifest.get("shards", []))
        msg = (
            f"{root}: dataset is incomplete ({done} of {len(manifest.get('shards', []))} shards); "
            "rerun the command that made it to finish it"
        )
        raise InputError(msg)
    return dataset


def read_rows(
    path: str | Path,
    *,
    columns: Sequence[str] | None = None,
    optional: Sequence[str] | None = (),
    domain: str | Sequence[str] | None = None,
    part: Part = "kept",
    needs: str = "this command",
) -> pl.DataFrame:
    """The rows of a complete dataset as a polars DataFrame (see `SynthDataset.scan`)."""
    dataset = open_dataset(path, domain=domain, needs=needs)
    return dataset.scan(columns=columns, optional=optional, part=part, needs=needs).collect()


def read_records(
    path: str | Path,
    *,
    columns: Sequence[str] | None = None,
    optional: Sequence[str] | None = (),
    domain: str | Sequence[str] | None = None,
    part: Part = "kept",
    needs: str = "this command",
) -> list[dict[str, Any]]:
    """The rows of a complete dataset as Python dicts (Arrow's own conversion, shard order)."""
    dataset = open_dataset(path, domain=domain, needs=needs)
    return dataset.read_table(columns=columns, optional=optional, part=part, needs=needs).to_pylist()


def _read_schema(path: Path) -> pa.Schema:
    try:
        return pq.read_schema(path)
    except (OSError, pa.ArrowException) as error:
        msg = f"{path}: unreadable Parquet shard ({_first_line(error)}); `synth verify` checks every shard"
        raise InputError(msg) from None


def _read_table(path: Path, columns: Sequence[str]) -> pa.Table:
    try:
        return pq.read_table(path, columns=list(columns))
    except (OSError, pa.ArrowException) as error:
        msg = f"{path}: unreadable Parquet shard ({_first_line(error)}); `synth verify` checks every shard"
        raise InputError(msg) from None


def _first_line(error: BaseException) -> str:
    return (str(error).strip().splitlines() or [type(error).__name__])[0]
