"""Read a papyri.info checkout (or the shipped sample) into clean texts joined with their labels.

DDB texts (``DDB_EpiDoc_XML/``) join HGV metadata (``HGV_meta_EpiDoc/HGV<k>/<id>.xml``) by every id in
``idno[@type='HGV']``; a record is accepted when its ``ddb-hybrid`` or, failing that, its TM number matches
the text. DCLP files (``DCLP/``) carry text and metadata together and are the literary side.
"""

from __future__ import annotations

import functools
import math
import os
import re
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Literal

from lxml import etree

from synth.generators.papyrus.epidoc import MAX_DOCUMENT_BYTES, EpiDocError, local_name, parse_xml, strip_edition

__all__ = [
    "SAMPLE_ROOT",
    "PapyrusDocument",
    "corpus_files",
    "iter_corpus",
    "map_doctype",
    "parse_year",
    "read_document",
]

#: The papyri.info sample shipped with the package (see ``sample/ATTRIBUTION.md``).
SAMPLE_ROOT = Path(__file__).parent / "sample"

_TEI_ROOTS = frozenset({"TEI", "TEI.2"})
_DDB_DIR = "DDB_EpiDoc_XML"
_DCLP_DIR = "DCLP"
_HGV_DIR = "HGV_meta_EpiDoc"

_YEAR = re.compile(r"^\s*([+-]?)0*(\d{1,4})")
_PARENTHESIS = re.compile(r"\([^)]*\)")
_NONE_VALUES = frozenset({"", "keiner", "keine", "unbekannt", "unknown"})

# German HGV genre stems, tested in order against each word of the first keyword term.
_DOCTYPE_STEMS: tuple[tuple[str, str], ...] = (
    ("brief", "letter"),
    ("quittung", "receipt"),
    ("empfangsbestätigung", "receipt"),
    ("kopie", "copy"),
    ("abschrift", "copy"),
    ("deklaration", "declaration"),
    ("erklärung", "declaration"),
    ("anzeige", "declaration"),
    ("eingabe", "petition"),
    ("petition", "petition"),
    ("gesuch", "petition"),
    ("antrag", "petition"),
    ("beschwerde", "petition"),
    ("liste", "list"),
    ("verzeichnis", "list"),
    ("inventar", "list"),
    ("rechnung", "account"),
    ("konto", "account"),
    ("bilanz", "account"),
    ("anweisung", "order"),
    ("überweisung", "order"),
    ("befehl", "order"),
    ("auftrag", "order"),
    ("edikt", "order"),
    ("erlass", "order"),
    ("verordnung", "order"),
    ("register", "register"),
    ("protokoll", "register"),
    ("tagebuch", "register"),
    ("vertrag", "contract"),
    ("verträge", "contract"),
    ("kauf", "contract"),
    ("pacht", "contract"),
    ("miete", "contract"),
    ("darlehen", "contract"),
    ("homologie", "contract"),
    ("bürgschaft", "contract"),
)


@dataclass(frozen=True, slots=True)
class PapyrusDocument:
    """One papyrus text with its labels.

    Dates are integer years, BCE negative, with no year 0; ``date_mid`` is the mean of the two bounds.
    Label fields are None when the metadata is missing (a DDB text without an HGV record).
    """

    doc_id: str
    source: Literal["ddb", "dclp", "papygreek", "duke", "padoc"]
    path: str
    text: str
    tm: str | None
    hgv: tuple[str, ...]
    title: str | None
    place: str | None
    literary: bool
    doctype: str | None
    subtype: str | None
    genre_raw: str | None
    date_min: int | None
    date_max: int | None
    date_mid: float | None


@dataclass(frozen=True, slots=True)
class _Meta:
    """The labels read from one metadata header (an HGV record or a DCLP file)."""

    tm: str | None
    ddb_hybrid: str | None
    title: str | None
    place: str | None
    terms: tuple[str, ...]
    dates: tuple[tuple[int, int], ...]


def iter_corpus(
    root: Path,
    *,
    keep_deleted: bool = False,
    scriptio_continua: bool = False,
    max_bytes: int | None = MAX_DOCUMENT_BYTES,
) -> Iterator[PapyrusDocument | EpiDocError]:
    """Yield every DDB and DCLP text under `root`, in sorted path order, with its labels.

    A file that cannot be used (XML syntax error, no edition div, nothing legible) is yielded as an
    `EpiDocError` and iteration continues. A missing HGV record is not an error: the labels become None.

    Args:
        root: A folder holding ``DDB_EpiDoc_XML/`` and/or ``DCLP/`` (and ``HGV_meta_EpiDoc/``), laid out
            as in ``papyri/idp.data``.
        keep_deleted: Passed to `strip_edition`.
        scriptio_continua: Passed to `strip_edition`.
        max_bytes: Files larger than this are `document_too_large` errors, unread (None: no limit).

    Raises:
        FileNotFoundError: `root` is missing or holds neither ``DDB_EpiDoc_XML/`` nor ``DCLP/``.

    Example:
        >>> docs = [d for d in iter_corpus(SAMPLE_ROOT) if isinstance(d, PapyrusDocument)]
        >>> next(d.text.split("\\n")[1] for d in docs if d.doc_id == "ddb:p.adl.G2")
        'ετουσ μϛ μεσορη δ εν παθυρε'
    """
    root = Path(root).resolve()
    strip = {"keep_deleted": keep_deleted, "scriptio_continua": scriptio_continua}
    for path in corpus_files(root):
        yield read_document(root, path, **strip, max_bytes=max_bytes)


def corpus_files(root: Path) -> list[Path]:
    """List the text files under `root`: ``DDB_EpiDoc_XML/**.xml`` then ``DCLP/**.xml``, each sorted.

    The paths are absolute (under the resolved `root`), so they do not depend on the working directory.

    Raises:
        FileNotFoundError: `root` is missing or holds neither ``DDB_EpiDoc_XML/`` nor ``DCLP/``.
    """
    root = Path(root).resolve()
    if not root.is_dir():
        msg = f"papyrus root `{root}` does not exist or is not a folder"
        raise FileNotFoundError(msg)
    ddb_dir, dclp_dir = root / _DDB_DIR, root / _DCLP_DIR
    if not ddb_dir.is_dir() and not dclp_dir.is_dir():
        msg = f"papyrus root `{root}` holds neither {_DDB_DIR}/ nor {_DCLP_DIR}/"
        raise FileNotFoundError(msg)
    return _sorted_xml(ddb_dir, root) + _sorted_xml(dclp_dir, root)


def read_document(
    root: Path,
    path: Path | str,
    *,
    keep_deleted: bool = False,
    scriptio_continua: bool = False,
    max_bytes: int | None = MAX_DOCUMENT_BYTES,
) -> PapyrusDocument | EpiDocError:
    """Read one text file of the corpus at `root` (a DCLP file when it lies under ``DCLP/``, else DDB).

    Args:
        root: The corpus root; a relative root is taken from the working directory.
        path: The file: relative to `root` (a listing's locator, such as ``DDB_EpiDoc_XML/p.adl/p.adl.G2.xml``)
            or absolute, inside `root`.
        max_bytes: A larger file is a `document_too_large` error, unread (None: no limit).

    Returns the document, or the `EpiDocError` explaining why the file yields no text (never raised).
    """
    root = Path(root).resolve()
    path = Path(os.path.normpath(root / path))  # an absolute `path` replaces `root`
    rel = _relative_to(path, root)
    if rel is None:
        return EpiDocError(str(path), f"not inside the corpus root {root}", code="unreadable_file")
    strip = {"keep_deleted": keep_deleted, "scriptio_continua": scriptio_continua}
    reader = _read_dclp if rel.split("/", 1)[0] == _DCLP_DIR else _read_ddb
    try:
        return reader(path, root, rel, max_bytes=max_bytes, **strip)
    except EpiDocError as error:
        return error


def _relative_to(path: Path, root: Path) -> str | None:
    """`path` as a POSIX path relative to the resolved `root` (resolving `path` only if needed), or None."""
    for candidate in (path, path.resolve()):
        if candidate.is_relative_to(root):
            return candidate.relative_to(root).as_posix()
    return None


def parse_year(value: str | None) -> int | None:
    """Return the signed year of an ISO-like date (``-0251-06-21``, ``0577-05``, ``-98``), None for 0."""
    if value is None:
        return None
    match = _YEAR.match(value)
    if match is None:
        return None
    year = int(match.group(2))
    if year == 0:
        return None
    return -year if match.group(1) == "-" else year


def map_doctype(term: str | None) -> str | None:
    """Map a German HGV genre term (``Brief (privat)``, ``zwei Briefe``, ``Vertrag (Kauf)``) to a class.

    Returns one of letter, receipt, contract, petition, list, account, declaration, order, register,
    copy, other; None when there is no term.
    """
    if term is None or not term.strip():
        return None
    words = _PARENTHESIS.sub(" ", term).lower().split() or term.lower().split()
    for word in words:
        for stem, doctype in _DOCTYPE_STEMS:
            if stem in word:
                return doctype
    return "other"


def _sorted_xml(folder: Path, root: Path) -> list[Path]:
    if not folder.is_dir():
        return []
    files = (p for p in folder.rglob("*.xml") if p.is_file())
    return sorted(files, key=lambda p: p.relative_to(root).as_posix())


def _read_text(path: Path, rel: str, *, max_bytes: int | None, **strip: bool) -> tuple[etree._Element, str]:
    root = parse_xml(path, rel, max_bytes=max_bytes)
    if local_name(root) not in _TEI_ROOTS:
        raise EpiDocError(rel, f"root element is <{local_name(root)}>, expected <TEI> or <TEI.2>", code="not_tei")
    try:
        text = strip_edition(root, **strip)
    except EpiDocError as exc:
        raise EpiDocError(rel, exc.reason, code=exc.code) from exc
    if not text:
        raise EpiDocError(rel, "empty edition (no legible text)", code="no_text")
    return root, text


def _read_ddb(path: Path, root: Path, rel: str, *, max_bytes: int | None, **strip: bool) -> PapyrusDocument:
    tei, text = _read_text(path, rel, max_bytes=max_bytes, **strip)
    idnos = _idnos(tei)
    tm = _dedupe_tokens(idnos.get("TM"))
    hybrid = idnos.get("ddb-hybrid")
    hgv_ids = tuple(dict.fromkeys((idnos.get("HGV") or "").split()))
    candidates = hgv_ids or ((tm,) if tm and " " not in tm else ())
    records = []
    for hgv_id in candidates:
        record = _read_hgv(root, hgv_id, max_bytes=max_bytes)
        if record is not None and _joins(record, hybrid=hybrid, tm=tm):
            records.append(record)
    if not hgv_ids and records:
        hgv_ids = candidates
    first = records[0] if records else None
    terms = first.terms if first else ()
    return PapyrusDocument(
        doc_id=f"ddb:{path.stem}",
        source="ddb",
        path=rel,
        text=text,
        tm=tm,
        hgv=hgv_ids,
        title=next((r.title for r in records if r.title), None),
        place=next((r.place for r in records if r.place), None),
        literary=False,
        doctype=map_doctype(terms[0]) if terms else None,
        subtype=terms[1] if len(terms) > 1 else None,
        genre_raw=terms[0] if terms else None,
        **_date_fields([span for r in records for span in r.dates]),
    )


def _read_dclp(path: Path, root: Path, rel: str, *, max_bytes: int | None, **strip: bool) -> PapyrusDocument:
    del root  # DCLP files carry their own metadata
    tei, text = _read_text(path, rel, max_bytes=max_bytes, **strip)
    meta = _read_meta(tei)
    culture, genres = _dclp_terms(tei)
    doctype = "literary" if culture in (None, "literature") else culture
    return PapyrusDocument(
        doc_id=f"dclp:{path.stem}",
        source="dclp",
        path=rel,
        text=text,
        tm=meta.tm,
        hgv=(),
        title=meta.title,
        place=meta.place,
        literary=True,
        doctype=doctype,
        subtype=genres[0] if genres else None,
        genre_raw="; ".join(genres) or None,
        **_date_fields(list(meta.dates)),
    )


def _date_fields(dates: list[tuple[int, int]]) -> dict[str, int | float | None]:
    """Return date_min, date_max and date_mid over every (low, high) span; None when there are none."""
    if not dates:
        return {"date_min": None, "date_max": None, "date_mid": None}
    low = min(lo for lo, _ in dates)
    high = max(hi for _, hi in dates)
    return {"date_min": low, "date_max": high, "date_mid": (low + high) / 2}


def _joins(record: _Meta, *, hybrid: str | None, tm: str | None) -> bool:
    """Accept a record whose ddb-hybrid matches, else whose TM does; accept when neither can be compared."""
    if hybrid and record.ddb_hybrid == hybrid:
        return True
    if tm and record.tm:
        return record.tm in tm.split()
    return not (hybrid and record.ddb_hybrid)


def _read_hgv(root: Path, hgv_id: str, *, max_bytes: int | None) -> _Meta | None:
    """Read one HGV record; a missing, oversized or unparseable record counts as missing."""
    digits = re.match(r"\d+", hgv_id)
    if digits is None or not re.fullmatch(r"[0-9A-Za-z]+", hgv_id):
        return None
    folder = f"HGV{math.ceil(int(digits.group()) / 1000)}"
    path = root / _HGV_DIR / folder / f"{hgv_id}.xml"
    try:
        stat = path.stat()
    except OSError:
        return None
    return _read_hgv_file(str(path), stat.st_mtime_ns, stat.st_size, max_bytes)


@functools.lru_cache(maxsize=4096)
def _read_hgv_file(path: str, mtime_ns: int, size: int, max_bytes: int | None) -> _Meta | None:
    """Parse an HGV record, cached by path and file stamp (a record may serve several texts)."""
    del mtime_ns, size  # part of the cache key only
    try:
        tei = parse_xml(Path(path), path, max_bytes=max_bytes)
    except EpiDocError:
        return None
    return _read_meta(tei)


def _header(tei: etree._Element) -> etree._Element:
    return next((e for e in tei.iter() if local_name(e) == "teiHeader"), tei)


def _idnos(tei: etree._Element) -> dict[str, str]:
    found: dict[str, str] = {}
    for element in _header(tei).iter():
        if local_name(element) == "idno" and element.get("type") and element.get("type") not in found:
            found[element.get("type")] = " ".join((element.text or "").split())
    return found


def _read_meta(tei: etree._Element) -> _Meta:
    header = _header(tei)
    idnos = _idnos(tei)
    title = _first_text(header, "title", within="titleStmt")
    place = _first_text(header, "origPlace") or _first_text(header, "placeName", within="origin")
    terms = tuple(
        _clean(t.text)
        for kw in header.iter()
        if local_name(kw) == "keywords" and _has_ancestor(kw, "textClass")
        for t in kw
        if local_name(t) == "term" and _clean(t.text)
    )
    spans = (_date_span(e) for e in header.iter() if local_name(e) == "origDate")
    dates = tuple(span for span in spans if span is not None)
    return _Meta(
        tm=_dedupe_tokens(idnos.get("TM")),
        ddb_hybrid=idnos.get("ddb-hybrid"),
        title=title,
        place=place,
        terms=terms,
        dates=dates,
    )


def _dclp_terms(tei: etree._Element) -> tuple[str | None, tuple[str, ...]]:
    """Return the DCLP culture term (lowercased) and the untyped genre terms, from textClass only."""
    culture = None
    genres: list[str] = []
    for term in _header(tei).iter():
        if local_name(term) != "term" or not _has_ancestor(term, "textClass"):
            continue
        value = _clean(term.text)
        if not value:
            continue
        kind = term.get("type")
        if kind == "culture" and culture is None:
            culture = value.lower()
        elif kind is None:
            genres.append(value)
    return culture, tuple(genres)


def _date_span(element: etree._Element) -> tuple[int, int] | None:
    """Read one origDate: ``@when`` wins (sign included), else ``@notBefore``/``@notAfter`` (or -custom)."""
    when = parse_year(element.get("when") or element.get("when-custom"))
    if when is not None:
        return when, when
    low = parse_year(element.get("notBefore") or element.get("notBefore-custom"))
    high = parse_year(element.get("notAfter") or element.get("notAfter-custom"))
    low = high if low is None else low
    high = low if high is None else high
    if low is None or high is None:
        return None
    return min(low, high), max(low, high)


def _first_text(header: etree._Element, name: str, *, within: str | None = None) -> str | None:
    """Return the first non-empty, informative text of an element `name` (inside an ancestor `within`)."""
    for element in header.iter():
        if local_name(element) != name:
            continue
        if within is not None and not _has_ancestor(element, within):
            continue
        value = _clean("".join(element.itertext()))
        if value and value.lower() not in _NONE_VALUES:
            return value
    return None


def _has_ancestor(element: etree._Element, name: str) -> bool:
    return any(local_name(a) == name for a in element.iterancestors())


def _clean(value: str | None) -> str:
    return " ".join((value or "").split())


def _dedupe_tokens(value: str | None) -> str | None:
    tokens = list(dict.fromkeys((value or "").split()))
    return " ".join(tokens) or None
