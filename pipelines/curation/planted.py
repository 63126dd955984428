"""Generated documents with planted duplicates and test-set items: what the curation tests and bench measure on.

Base documents are random words from a Zipf-like vocabulary. Planted rows copy an earlier base document:
`exact` copies change only case and punctuation (equal after normalisation), `near` copies replace 1 to 4 words
(true Jaccard spread around 0.8, measured by brute force), `contaminated` rows embed an evaluation item.
"""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

import numpy as np
import polars as pl
import pyarrow as pa

from synth.core.records import PROVENANCE_TYPE
from synth.core.shard import BatchOutput
from synth.core.writer import DatasetWriter

SCHEMA = pa.schema(
    [
        ("id", pa.string()),
        ("text", pa.string()),
        ("category", pa.string()),
        ("planted", pa.string()),
        ("source", pa.int64()),
        ("provenance", PROVENANCE_TYPE),
    ]
)
CATEGORIES = ("alpha", "beta", "gamma", "delta")


@dataclass(frozen=True)
class PlantedSpec:
    """How many rows, how long, and what share of them is planted."""

    rows: int
    words: int = 24
    vocabulary: int = 50_000
    exact_rate: float = 0.05
    near_rate: float = 0.05
    eval_items: int = 0
    eval_words: int = 14
    seed: int = 0


def eval_items(spec: PlantedSpec) -> list[str]:
    """The evaluation items planted into rows (sentences of words outside the documents' vocabulary)."""
    rng = np.random.default_rng(spec.seed + 1)
    return [" ".join(f"q{int(w)}" for w in rng.integers(0, 5000, spec.eval_words)) for _ in range(spec.eval_items)]


def planted_batches(spec: PlantedSpec, *, batch_rows: int = 200_000) -> Iterator[pa.Table]:
    """The rows in batches; column `planted` is `base`, `exact`, `near` or `contaminated`, `source` the row copied
    (for `contaminated`: the evaluation item embedded). Copies take their source from the same batch."""
    rng = np.random.default_rng(spec.seed)
    items = eval_items(spec)
    chosen = np.sort(rng.choice(spec.rows, size=min(spec.eval_items, spec.rows), replace=False))
    ranks = np.arange(1, spec.vocabulary + 1, dtype=np.float64) ** -0.8
    probabilities = ranks / ranks.sum()
    fresh = spec.vocabulary
    for start in range(0, spec.rows, batch_rows):
        count = min(batch_rows, spec.rows - start)
        words = rng.choice(spec.vocabulary, size=(count, spec.words), p=probabilities)
        draws = rng.random(count)
        copy = draws < spec.exact_rate + spec.near_rate
        base_at = np.flatnonzero(~copy)
        before = np.searchsorted(base_at, np.arange(count))
        copy &= before > 0
        picks = np.floor(rng.random(count) * np.maximum(before, 1)).astype(np.int64)
        source = np.where(copy, base_at[np.minimum(picks, len(base_at) - 1)], -1)
        words[copy] = words[source[copy]]
        exact = copy & (draws < spec.exact_rate)
        near = copy & ~exact
        changes = rng.integers(1, 5, count)
        for row in np.flatnonzero(near):
            positions = rng.choice(spec.words, size=int(changes[row]), replace=False)
            words[row, positions] = np.arange(fresh, fresh + len(positions))
            fresh += len(positions)
        flat = pl.Series(words.ravel()).cast(pl.String)
        texts = ("w" + flat).reshape((count, spec.words)).arr.join(" ")
        frame = pl.DataFrame({"text": texts, "exact": exact})
        texts = frame.select(
            pl.when(pl.col("exact")).then(pl.col("text").str.to_uppercase() + " !").otherwise(pl.col("text"))
        ).to_series()
        kinds = np.where(exact, "exact", np.where(near, "near", "base")).astype(object)
        sources = np.where(copy, source + start, -1)
        local = chosen[(chosen >= start) & (chosen < start + count)] - start
        if len(local):
            values = texts.to_list()
            for row in local:
                item = int(np.searchsorted(chosen, row + start))
                head, _, tail = values[row].partition(" ")
                values[row] = f"{head} {items[item]} {tail}"
                kinds[row], sources[row] = "contaminated", item
            texts = pl.Series(values)
        categories = np.array(CATEGORIES)[rng.integers(0, len(CATEGORIES), count)]
        yield pa.table(
            {
                "id": [f"doc{start + offset:09d}" for offset in range(count)],
                "text": texts.to_arrow(),
                "category": categories,
                "planted": list(kinds),
                "source": sources,
                "provenance": pa.nulls(count, PROVENANCE_TYPE),
            },
            schema=SCHEMA,
        )


def write_planted(out: Path, spec: PlantedSpec, *, shards: int = 1) -> Path:
    """Write the planted rows as a synth dataset of domain `planted` (rows split evenly over `shards`)."""
    config = {"planted": spec.__dict__}
    with DatasetWriter(out, domain="planted", config=config, schema=SCHEMA, num_shards=shards) as writer:
        if not writer.pending:
            return out
        batches = planted_batches(spec)
        per_shard = -(-spec.rows // shards)
        pending: list[pa.Table] = []

        def shard_outputs() -> Iterator[BatchOutput]:
            taken = 0
            while taken < per_shard:
                table = pending.pop() if pending else next(batches, None)
                if table is None:
                    return
                head, tail = table.slice(0, per_shard - taken), table.slice(per_shard - taken)
                taken += head.num_rows
                if tail.num_rows:
                    pending.append(tail)
                yield BatchOutput(kept=head, rejected=writer.rejected_schema.empty_table())

        for index in range(shards):
            writer.write_shard(index, shard_outputs())
        writer.finalize()
    return out
