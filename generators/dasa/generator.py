"""The DASA generator step: one shard synthesises its share of the m rows from the source task's examples.

Rows hold `inputs_embeds` as a fixed-shape [L, d] float32 list of lists, `labels`, `attention_mask`, the nearest
tokens (`nearest_token_ids`, `nearest_text`: inspection only, never trained on), the group's alignment before and
after optimisation, and the source row. The schema metadata names the reference model, its hidden size and the
hash of its embedding matrix (`synth.dasa.*` keys), which `check_reference` compares before training.
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from dataclasses import dataclass
from functools import cached_property
from pathlib import Path
from typing import Any, Literal

import pyarrow as pa

from synth.core.steps import GeneratedBatch, Generator, ShardContext

Method = Literal["dasa", "gradmm"]
META_MODEL, META_HIDDEN, META_HASH, META_SETTINGS = (
    b"synth.dasa.model_id",
    b"synth.dasa.hidden_size",
    b"synth.dasa.embedding_hash",
    b"synth.dasa.settings",
)

COLUMNS = [
    ("method", pa.string()),
    ("task", pa.string()),
    ("group", pa.int32()),
    ("source_index", pa.int64()),
    ("inputs_embeds", pa.list_(pa.list_(pa.float32()))),
    ("labels", pa.list_(pa.int64())),
    ("attention_mask", pa.list_(pa.int8())),
    ("input_ids", pa.list_(pa.int64())),
    ("text", pa.string()),
    ("alignment_start", pa.float64()),
    ("alignment", pa.float64()),
]


def dasa_schema(*, model_id: str, hidden_size: int, embedding_hash: str, settings: dict[str, Any]) -> pa.Schema:
    """The row schema with the reference model's identity in its metadata."""
    metadata = {
        META_MODEL: model_id.encode(),
        META_HIDDEN: str(hidden_size).encode(),
        META_HASH: embedding_hash.encode(),
        META_SETTINGS: json.dumps(settings, sort_keys=True).encode(),
    }
    return pa.schema(COLUMNS, metadata=metadata)


@dataclass(frozen=True, kw_only=True)
class DasaGenerator(Generator):
    """Synthesises m rows per run (split over shards by group) with DASA or GRADMM against one reference LM."""

    requires = (("torch", "synth[train]"), ("transformers", "synth[train]"), ("peft", "synth[train]"))

    method: Method = "dasa"
    model_dir: Path
    task: str = "shift"
    source_rows: int = 64
    m: int = 16
    settings: dict[str, Any]

    @cached_property
    def reference(self) -> Any:
        from synth.generators.dasa.base_lm import load_reference

        return load_reference(self.model_dir)

    @property
    def schema(self) -> pa.Schema:  # type: ignore[override]
        ref = self.reference
        settings = {"method": self.method, "task": self.task, "source_rows": self.source_rows, "m": self.m}
        return dasa_schema(
            model_id=ref.model_id,
            hidden_size=ref.hidden_size,
            embedding_hash=ref.embedding_hash,
            settings={**settings, **self.settings},
        )

    def describe_input(self) -> dict[str, Any]:
        return {"model_dir": str(self.model_dir), "model_id": self.reference.model_id, "task": self.task}

    def generate(self, ctx: ShardContext) -> Iterator[GeneratedBatch]:
        from synth.generators.dasa.tasks import make_pairs

        source = make_pairs(self.task, self.source_rows, seed=ctx.seed)
        shard_m = len(ctx.partition(range(self.m)))
        if shard_m == 0:
            return
        rows = self._synthesize(source, m=shard_m, seed=ctx.seed * 1009 + ctx.shard_index)
        batch = GeneratedBatch()
        tokenizer = self.reference.tokenizer
        for i in range(len(rows.source_index)):
            mask = rows.attention_mask[i].tolist()
            ids = rows.input_ids[i].tolist()
            src = rows.source_index[i]
            row = {
                "method": self.method,
                "task": self.task,
                "group": rows.group[i],
                "source_index": src,
                "inputs_embeds": rows.inputs_embeds[i].tolist(),
                "labels": rows.labels[i].tolist(),
                "attention_mask": mask,
                "input_ids": ids,
                "text": tokenizer.decode([t for t, keep in zip(ids, mask, strict=True) if keep]),
                "alignment_start": rows.alignment_start[i],
                "alignment": rows.alignment[i],
            }
            batch.add(row, parents=[f"{self.task}:{ctx.seed}:{src}"])
        yield batch

    def _synthesize(self, source: list[tuple[str, str]], *, m: int, seed: int) -> Any:
        if self.method == "gradmm":
            from synth.generators.gradmm.admm import GradmmSettings, synthesize_gradmm

            return synthesize_gradmm(self.reference, source, m=m, settings=GradmmSettings(**self.settings), seed=seed)
        from synth.generators.dasa.synthesize import DasaSettings, synthesize_dasa

        return synthesize_dasa(self.reference, source, m=m, settings=DasaSettings(**self.settings), seed=seed)
