"""The Papyrus CER generator: clean letters-only texts from several sources degraded to exact character error rates."""

from __future__ import annotations

import hashlib
import logging
from collections import Counter
from collections.abc import Iterator
from dataclasses import dataclass
from functools import cached_property
from pathlib import Path
from typing import Any, ClassVar, Literal

import pyarrow as pa

from synth.core.errors import InputError
from synth.core.steps import GeneratedBatch, Generator, ShardContext
from synth.generators.papyrus.corpus import SAMPLE_ROOT, PapyrusDocument
from synth.generators.papyrus.degrade import Degradation, TooShort, degrade_levels
from synth.generators.papyrus.epidoc import MAX_DOCUMENT_BYTES, EpiDocError
from synth.generators.papyrus.sources import (
    CORPORA_ROOT,
    SOURCE_NAMES,
    DocumentRef,
    SourceName,
    list_documents,
    read_ref,
)

logger = logging.getLogger(__name__)

Split = Literal["train", "validation", "test"]

PAPYRUS_SCHEMA = pa.schema(
    [
        ("doc_id", pa.string()),
        ("source", pa.string()),
        ("path", pa.string()),
        ("tm", pa.string()),
        ("hgv", pa.list_(pa.string())),
        ("title", pa.string()),
        ("place", pa.string()),
        ("split", pa.string()),
        ("literary", pa.bool_()),
        ("doctype", pa.string()),
        ("subtype", pa.string()),
        ("genre_raw", pa.string()),
        ("date_min", pa.int32()),
        ("date_max", pa.int32()),
        ("date_mid", pa.float64()),
        ("variant", pa.string()),
        ("cer_target", pa.float64()),
        ("sample", pa.int32()),
        ("k", pa.int32()),
        ("n_ref", pa.int32()),
        ("edit_distance", pa.int32()),
        ("cer_actual", pa.float64()),
        ("lost_lines", pa.int32()),
        ("k_line", pa.int32()),
        ("k_char", pa.int32()),
        ("attempts", pa.int32()),
        ("text_clean", pa.string()),
        ("text_noisy", pa.string()),
    ]
)


def assign_split(group: str, *, validation: float = 0.1, test: float = 0.1) -> Split:
    """Deterministic 80/10/10 split by a group key (the TM number), so a text never straddles splits."""
    bucket = int.from_bytes(hashlib.blake2b(group.encode(), digest_size=8).digest(), "little") / 2**64
    if bucket < test:
        return "test"
    return "validation" if bucket < test + validation else "train"


def document_columns(doc: PapyrusDocument) -> dict[str, Any]:
    """The per-document columns shared by all of a document's rows."""
    return {
        "doc_id": doc.doc_id,
        "source": doc.source,
        "path": doc.path,
        "tm": doc.tm,
        "hgv": list(doc.hgv),
        "title": doc.title,
        "place": doc.place,
        "split": assign_split(doc.tm or doc.doc_id),
        "literary": doc.literary,
        "doctype": doc.doctype,
        "subtype": doc.subtype,
        "genre_raw": doc.genre_raw,
        "date_min": doc.date_min,
        "date_max": doc.date_max,
        "date_mid": doc.date_mid,
        "text_clean": doc.text,
        "n_ref": len(doc.text),
    }


@dataclass(frozen=True, kw_only=True)
class PapyrusCERGenerator(Generator):
    """Read letters-only texts from the chosen sources and degrade each to exact CER levels per variant.

    `input` is the EpiDoc root of the ``epidoc`` source; the other sources are read from `corpora_root`.
    Documents whose TM id a higher-priority source already has are left out (see `list_documents`).
    A source file larger than `max_document_bytes` is not read; it becomes a rejected row
    (``document_too_large``). Every unusable document is a rejected row whose code is its `EpiDocError` code
    (`REASON_CODES`) and whose detail is ``"<source>: <file>: <reason>"``.
    """

    input: Path = SAMPLE_ROOT
    sources: tuple[SourceName, ...] = SOURCE_NAMES
    corpora_root: Path = CORPORA_ROOT
    levels: tuple[float, ...]
    variants: tuple[str, ...]
    lost_lines: float = 0.0
    samples: int = 1
    keep_deleted: bool = False
    scriptio_continua: bool = False
    docs_per_batch: int = 8
    max_document_bytes: int | None = MAX_DOCUMENT_BYTES
    schema: ClassVar[pa.Schema] = PAPYRUS_SCHEMA

    @cached_property
    def listing(self) -> tuple[list[DocumentRef], dict[str, int]]:
        """All documents of the sources in a stable order, and the TM duplicates dropped per source."""
        try:
            return list_documents(
                self.input, sources=self.sources, corpora_root=self.corpora_root, max_bytes=self.max_document_bytes
            )
        except FileNotFoundError as error:
            raise InputError(str(error)) from None

    @property
    def refs(self) -> list[DocumentRef]:
        """The documents to generate from, in shard order."""
        return self.listing[0]

    def describe_input(self) -> dict[str, Any]:
        refs, dropped = self.listing
        counts = Counter(ref.source for ref in refs)
        info: dict[str, Any] = {"root": str(self.input)} if "epidoc" in dropped else {}
        info["documents"] = len(refs)
        info["sources"] = {name: {"documents": counts[name], "duplicates_dropped": n} for name, n in dropped.items()}
        return info

    def generate(self, ctx: ShardContext) -> Iterator[GeneratedBatch]:
        refs = ctx.partition(self.refs)
        for start in range(0, len(refs), self.docs_per_batch):
            batch = GeneratedBatch()
            for ref in refs[start : start + self.docs_per_batch]:
                self._generate_document(ref, ctx, batch)
            yield batch

    def _generate_document(self, ref: DocumentRef, ctx: ShardContext, batch: GeneratedBatch) -> None:
        document = read_ref(
            ref,
            keep_deleted=self.keep_deleted,
            scriptio_continua=self.scriptio_continua,
            max_bytes=self.max_document_bytes,
        )
        if isinstance(document, EpiDocError):
            logger.warning("rejected %s (%s)", document, document.code)
            values = {"source": ref.source, "path": document.path}
            batch.reject(document.code, detail=f"{ref.source}: {document}", values=values)
            return
        base = document_columns(document)
        for variant in self.variants:
            for sample in range(self.samples):
                results = degrade_levels(
                    document.text,
                    doc_id=document.doc_id,
                    variant=variant,  # type: ignore[arg-type]
                    seed=ctx.seed,
                    levels=self.levels,
                    lost_lines=self.lost_lines,
                    sample=sample,
                )
                for result in results:
                    self._add_result(batch, base, variant, sample, result)

    @staticmethod
    def _add_result(
        batch: GeneratedBatch, base: dict[str, Any], variant: str, sample: int, result: Degradation | TooShort
    ) -> None:
        common = {
            **base,
            "variant": variant,
            "sample": sample,
            "cer_target": result.cer_target,
            "k": result.k,
        }
        if isinstance(result, TooShort):
            batch.reject("too_short_for_level", detail=result.reason, values=common, parents=(base["doc_id"],))
            return
        row = {
            **common,
            "edit_distance": result.edit_distance,
            "cer_actual": result.cer_actual,
            "lost_lines": result.lost_lines,
            "k_line": result.k_line,
            "k_char": result.k_char,
            "attempts": result.attempts,
            "text_noisy": result.text_noisy,
        }
        batch.add(row, parents=(base["doc_id"],))
