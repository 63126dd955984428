"""The Papyrus CER generator: clean letters-only texts from several sources degraded to exact character error rates."""

from __future__ import annotations

import hashlib
import logging
from collections import Counter
from collections.abc import Iterator, Mapping, Sequence
from dataclasses import dataclass
from functools import cached_property
from pathlib import Path
from typing import Any, ClassVar, Literal

import pyarrow as pa

from synth.core.errors import InputError
from synth.core.sink import SPLIT_COLUMN_KEY
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
    ],
    metadata={SPLIT_COLUMN_KEY: b"split"},  # the sink writes data/<split>-*.parquet: Hugging Face splits
)


def _group_rank(group: str) -> bytes:
    return hashlib.blake2b(group.encode(), digest_size=8).digest()


def stratified_group_split(
    groups: Mapping[str, bool], *, validation: float = 0.1, test: float = 0.1
) -> dict[str, Split]:
    """An 80/10/10 split of groups (TM ids), stratified by a class flag (literary or not).

    Within each class the groups are ordered by a hash of their key; the first ``round(test * n)`` go to test,
    the next ``round(validation * n)`` to validation, the rest to train. A class with at least 3 groups puts
    at least one in every split, so each split holds both classes whenever each class has 3 groups or more.
    The split depends only on the set of groups, not on the seed or the order they are listed in.

    Example:
        >>> split = stratified_group_split({f"d{i}": False for i in range(20)} | {"l1": True, "l2": True, "l3": True})
        >>> sorted(split[g] for g in ("l1", "l2", "l3"))
        ['test', 'train', 'validation']
    """
    assigned: dict[str, Split] = {}
    for flag in (False, True):
        ranked = sorted((g for g, f in groups.items() if f is flag), key=lambda g: (_group_rank(g), g))
        n = len(ranked)
        n_test = max(1, round(test * n)) if n >= 3 else 0
        n_validation = max(1, round(validation * n)) if n >= 3 else 0
        for position, group in enumerate(ranked):
            assigned[group] = (
                "test" if position < n_test else "validation" if position < n_test + n_validation else "train"
            )
    return assigned


def split_groups(refs: Sequence[DocumentRef]) -> tuple[dict[DocumentRef, str], dict[str, bool]]:
    """Each ref's split group (its smallest TM id, else its own locator) and each group's class flag.

    Documents that share their smallest TM id (recto and verso, parts of one text) form one group, so a text
    never straddles splits; a group is literary when any of its documents is.
    """
    group_of: dict[DocumentRef, str] = {}
    literary: dict[str, bool] = {}
    for ref in refs:
        group = f"tm:{min(ref.tms, key=lambda tm: (len(tm), tm))}" if ref.tms else f"{ref.source}:{ref.locator}"
        group_of[ref] = group
        literary[group] = literary.get(group, False) or ref.literary
    return group_of, literary


def document_columns(doc: PapyrusDocument, split: Split) -> dict[str, Any]:
    """The per-document columns shared by all of a document's rows."""
    return {
        "doc_id": doc.doc_id,
        "source": doc.source,
        "path": doc.path,
        "tm": doc.tm,
        "hgv": list(doc.hgv),
        "title": doc.title,
        "place": doc.place,
        "split": split,
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

    @cached_property
    def splits(self) -> dict[DocumentRef, Split]:
        """Each document's split: grouped by TM id, stratified by the literary flag (`stratified_group_split`)."""
        group_of, literary = split_groups(self.refs)
        by_group = stratified_group_split(literary)
        return {ref: by_group[group] for ref, group in group_of.items()}

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
        base = document_columns(document, self.splits[ref])
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
