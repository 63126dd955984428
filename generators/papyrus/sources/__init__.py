"""Papyrus corpus sources: the EpiDoc reader plus three labelled corpora shipped in ``corpora/``.

Every source yields the same `PapyrusDocument` (letters-only text via `normalise_greek`, common labels):

| source | where | reader |
|---|---|---|
| ``epidoc`` | a papyri.info checkout (``input``) or the shipped ``sample/`` | `synth.generators.papyrus.corpus` |
| ``papygreek`` | ``corpora/papygreek_treebanks/`` (558 treebanks) | `papygreek` |
| ``duke`` | ``corpora/duke_nlp/`` (235 paraliterary texts) | `duke` |
| ``padoc`` | ``corpora/padoc/`` (389 + 159 CSV rows) | `padoc` |

`list_documents` lists the chosen sources as cheap, picklable `DocumentRef`s in a fixed order and drops a
document whose Trismegistos (TM) id was already listed by a higher-priority source (epidoc > papygreek >
duke > padoc); documents of one source that share a TM id (recto and verso, parts) are all kept.
`read_ref` reads one ref; `iter_source` reads every document of one labelled corpus.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Literal

from lxml import etree

from synth.generators.papyrus.corpus import SAMPLE_ROOT, PapyrusDocument, corpus_files, read_document
from synth.generators.papyrus.epidoc import MAX_DOCUMENT_BYTES, EpiDocError, local_name
from synth.generators.papyrus.sources.base import CORPORA_ROOT, SourceEntry, split_tms
from synth.generators.papyrus.sources.duke import list_duke, read_duke
from synth.generators.papyrus.sources.padoc import list_padoc, read_padoc
from synth.generators.papyrus.sources.papygreek import list_papygreek, read_papygreek

__all__ = [
    "CORPORA_ROOT",
    "SOURCE_NAMES",
    "DocumentRef",
    "SourceEntry",
    "SourceName",
    "iter_source",
    "list_documents",
    "list_epidoc",
    "read_ref",
]

SourceName = Literal["epidoc", "papygreek", "duke", "padoc"]

#: Every source, highest dedup priority first; listings follow this order whatever order was asked for.
SOURCE_NAMES: tuple[SourceName, ...] = ("epidoc", "papygreek", "duke", "padoc")

_Reader = Callable[..., PapyrusDocument | EpiDocError]
_LISTERS: dict[str, Callable[..., list[SourceEntry]]] = {
    "papygreek": list_papygreek,
    "duke": list_duke,
    "padoc": list_padoc,
}
_READERS: dict[str, _Reader] = {"papygreek": read_papygreek, "duke": read_duke, "padoc": read_padoc}
_HEADER_BYTES = 1 << 15
_HEADER_END = b"</teiHeader>"
_HEADER_TM = re.compile(rb"<idno\s+type=[\"']TM[\"']\s*>([^<]*)</idno>")


@dataclass(frozen=True, slots=True)
class DocumentRef:
    """Where one document is: its source, that source's root folder (absolute), and a locator inside it.

    The locator is a POSIX path relative to `root`, with ``#row=<n>`` (PaDoc) or ``#document_id=<TM>``
    (Trismegistos Words) when a file holds several documents. `tms` are the Trismegistos ids the listing
    found (the split groups by them).
    """

    source: SourceName
    root: str
    locator: str
    tms: tuple[str, ...] = ()

    @property
    def literary(self) -> bool:
        """Whether the document is on the literary side: a DCLP file of the EpiDoc source (DCLP = 1, DDB = 0)."""
        return self.source == "epidoc" and self.locator.split("/", 1)[0] == "DCLP"


def list_documents(
    root_epidoc: Path | None,
    *,
    sources: Sequence[str],
    corpora_root: Path = CORPORA_ROOT,
    max_bytes: int | None = MAX_DOCUMENT_BYTES,
) -> tuple[list[DocumentRef], dict[str, int]]:
    """List the documents of `sources`, deduplicated by TM id across sources.

    Each root is resolved once, here: the refs hold absolute roots and locators relative to them, so reading a
    ref does not depend on the working directory.

    Args:
        root_epidoc: The EpiDoc root for the ``epidoc`` source; None means the shipped sample.
        sources: Source names (`SOURCE_NAMES`), in any order; the listing always follows priority order.
        corpora_root: The folder holding the labelled corpora.
        max_bytes: Files larger than this are listed without reading them (reading the ref reports them).

    Returns:
        The refs (sources in priority order, each in its own stable order), and per chosen source the
        number of documents dropped because a higher-priority source already has their TM id.

    Raises:
        ValueError: `sources` is empty or names an unknown source.
        FileNotFoundError: The EpiDoc root is missing or holds neither ``DDB_EpiDoc_XML/`` nor ``DCLP/``.

    Example:
        >>> refs, dropped = list_documents(None, sources=["padoc", "epidoc"])
        >>> refs[0].source, refs[-1].source, dropped
        ('epidoc', 'padoc', {'epidoc': 0, 'padoc': 4})
    """
    wanted = _check_sources(sources)
    claimed: set[str] = set()
    refs: list[DocumentRef] = []
    dropped: dict[str, int] = {}
    for name in wanted:
        if name == "epidoc":
            root = Path(root_epidoc if root_epidoc is not None else SAMPLE_ROOT).resolve()
            entries = list_epidoc(root, max_bytes=max_bytes)
        else:
            root = Path(corpora_root).resolve()
            entries = _LISTERS[name](root, max_bytes=max_bytes)
        dropped[name] = 0
        listed: set[str] = set()
        for entry in entries:
            if claimed.intersection(entry.tms):
                dropped[name] += 1
                continue
            refs.append(DocumentRef(name, str(root), entry.locator, entry.tms))
            listed.update(entry.tms)
        claimed |= listed
    return refs, dropped


def read_ref(
    ref: DocumentRef,
    *,
    keep_deleted: bool = False,
    scriptio_continua: bool = False,
    max_bytes: int | None = MAX_DOCUMENT_BYTES,
) -> PapyrusDocument | EpiDocError:
    """Read the document `ref` points to; an unusable one comes back as an `EpiDocError` (never raised).

    A file larger than `max_bytes` is not read: it comes back as a ``document_too_large`` error.
    """
    if ref.source != "epidoc" and ref.source not in _READERS:
        msg = f"unknown source `{ref.source}` in {ref!r}; choose from {', '.join(SOURCE_NAMES)}"
        raise ValueError(msg)
    reader = read_document if ref.source == "epidoc" else _READERS[ref.source]
    options = {"keep_deleted": keep_deleted, "scriptio_continua": scriptio_continua, "max_bytes": max_bytes}
    return reader(Path(ref.root), ref.locator, **options)


def iter_source(
    name: str,
    root: Path = CORPORA_ROOT,
    *,
    keep_deleted: bool = False,
    scriptio_continua: bool = False,
    max_bytes: int | None = MAX_DOCUMENT_BYTES,
) -> Iterator[PapyrusDocument | EpiDocError]:
    """Yield every document of the labelled corpus `name` (``papygreek``, ``duke``, ``padoc``) under `root`, in
    its listing order, without TM deduplication; unusable ones come as `EpiDocError`s.

    Raises:
        ValueError: `name` is not a labelled corpus.
    """
    if name not in _LISTERS:
        msg = f"unknown labelled corpus `{name}`; choose from {', '.join(_LISTERS)}"
        raise ValueError(msg)
    options = {"keep_deleted": keep_deleted, "scriptio_continua": scriptio_continua, "max_bytes": max_bytes}
    for entry in _LISTERS[name](Path(root), max_bytes=max_bytes):
        yield read_ref(DocumentRef(name, str(root), entry.locator, entry.tms), **options)


def list_epidoc(root: Path, *, read_tms: bool = True, max_bytes: int | None = MAX_DOCUMENT_BYTES) -> list[SourceEntry]:
    """List the EpiDoc text files under `root` (`corpus_files` order), with TM ids read from the headers.

    A file larger than `max_bytes` is listed without TM ids (its header is not parsed).

    Raises:
        FileNotFoundError: `root` is missing or holds neither ``DDB_EpiDoc_XML/`` nor ``DCLP/``.
    """
    root = Path(root).resolve()
    return [
        SourceEntry(path.relative_to(root).as_posix(), _epidoc_tms(path, max_bytes) if read_tms else ())
        for path in corpus_files(root)
    ]


def _check_sources(sources: Sequence[str]) -> list[SourceName]:
    unknown = [name for name in sources if name not in SOURCE_NAMES]
    if unknown:
        msg = f"unknown source `{unknown[0]}` in `sources`; choose from {', '.join(SOURCE_NAMES)}"
        raise ValueError(msg)
    if not sources:
        msg = f"`sources` is empty; choose one or more of {', '.join(SOURCE_NAMES)}"
        raise ValueError(msg)
    return [name for name in SOURCE_NAMES if name in sources]


def _epidoc_tms(path: Path, max_bytes: int | None) -> tuple[str, ...]:
    """The TM ids of the first ``idno[@type='TM']`` in the TEI header; () when there is none or no header."""
    try:
        if max_bytes is not None and path.stat().st_size > max_bytes:
            return ()
        with path.open("rb") as handle:
            head = handle.read(_HEADER_BYTES)
    except OSError:
        return ()
    end = head.find(_HEADER_END)
    header = head[:end] if end >= 0 else head
    match = _HEADER_TM.search(header)
    if match is not None:
        return split_tms(match.group(1).decode("utf-8", "replace"))
    if end >= 0 and b"TM" not in header:
        return ()
    return _epidoc_tms_parsed(path)


def _epidoc_tms_parsed(path: Path) -> tuple[str, ...]:
    """Slow path for an unusual header (spacing, attribute order, a very long header): parse it."""
    try:
        events = etree.iterparse(
            str(path), events=("end",), resolve_entities=False, no_network=True, load_dtd=False, huge_tree=False
        )
        for _, element in events:
            name = local_name(element)
            if name == "idno" and element.get("type") == "TM":
                return split_tms(element.text)
            if name == "teiHeader":
                return ()
    except (etree.XMLSyntaxError, OSError):
        return ()
    return ()
