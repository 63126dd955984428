"""The datasets a curate run reads: opened through the dataset API, one domain, one schema, streamed in order."""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from dataclasses import dataclass
from pathlib import Path

import polars as pl
import pyarrow as pa
import pyarrow.parquet as pq

from synth.core.dataset import SynthDataset, open_dataset
from synth.core.errors import InputError
from synth.core.manifest import MANIFEST_FORMAT
from synth.core.records import ID_FIELD
from synth.core.writer import input_reference

NEEDS = "synth curate"


@dataclass(frozen=True)
class CurateInputs:
    """The input datasets in order, their shared domain and schema, and their row count."""

    datasets: tuple[SynthDataset, ...]
    domain: str
    schema: pa.Schema
    rows: int

    @property
    def polars_schema(self) -> dict[str, pl.DataType]:
        return dict(pl.from_arrow(self.schema.empty_table()).schema)  # type: ignore[union-attr]

    def describe(self) -> str:
        return ", ".join(str(d.root) for d in self.datasets)

    def references(self) -> list[dict[str, object]]:
        return [input_reference(f"input{index}", d.root) for index, d in enumerate(self.datasets)]

    def batches(self, columns: Sequence[str] | None, batch_rows: int) -> Iterator[pa.RecordBatch]:
        """Every kept row of every input, in order, as record batches of `columns` (all when None)."""
        for dataset in self.datasets:
            for path in dataset.files("kept"):
                try:
                    yield from pq.ParquetFile(path).iter_batches(batch_size=batch_rows, columns=columns)
                except (OSError, pa.ArrowException) as error:
                    first = (str(error).strip().splitlines() or [type(error).__name__])[0]
                    msg = f"{path}: unreadable Parquet shard ({first}); `synth verify` checks every shard"
                    raise InputError(msg) from None


def open_inputs(paths: Sequence[str | Path]) -> CurateInputs:
    """Open the input datasets; refuse one that is not a complete synth dataset, or of another domain or schema."""
    if not paths:
        msg = "synth curate needs at least one input dataset"
        raise InputError(msg)
    datasets = []
    for path in paths:
        dataset = open_dataset(path, needs=NEEDS)
        if dataset.manifest.get("format") != MANIFEST_FORMAT:
            kind = dataset.manifest.get("format")
            msg = f"{dataset.root}: holds a {kind} manifest, not a synth dataset's (field `format`)"
            raise InputError(msg)
        datasets.append(dataset)
    first = datasets[0]
    schema = first.schema()
    if ID_FIELD not in schema.names:
        msg = f"{first.root}: the rows have no `{ID_FIELD}` column; synth curate reads synth datasets"
        raise InputError(msg)
    for other in datasets[1:]:
        if other.domain != first.domain:
            msg = (
                f"{other.root}: a {other.domain!r} dataset, but {first.root} is {first.domain!r} "
                "(manifest `domain`); curate one domain at a time"
            )
            raise InputError(msg)
        theirs = other.schema()
        for field in schema:
            if field.name not in theirs.names or not theirs.field(field.name).type.equals(field.type):
                got = theirs.field(field.name).type if field.name in theirs.names else "missing"
                msg = f"{other.root}: column `{field.name}` is {got} here but {field.type} in {first.root}"
                raise InputError(msg)
    return CurateInputs(
        datasets=tuple(datasets), domain=str(first.domain), schema=schema, rows=sum(d.rows for d in datasets)
    )
