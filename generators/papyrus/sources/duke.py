"""Read the Trismegistos Words treebanks of DDbDP texts (``duke_nlp/*.xml``, e.g. ``Papyri_Paraliterary.xml``).

A file is one ``<treebank>`` of ``<sentence>``s; each sentence carries its document's metadata
(``document_id`` = TM id, ``filename`` = DDbDP file, ``period_min``/``period_max`` in centuries, negative =
BCE, ``genre``, ``place``) and ``<word>``s with ``form`` (the scribe's spelling), ``row`` (line, ``"3-4"``
for a word broken over lines) and ``wordid``. One document is one TM id. Its sentences may come from several
parts of one DDbDP file (``p.lond.2.265_1``, ``_2``, …), which are joined in file order, each part starting
on a new line; sentences of a second DDbDP file with the same TM id (a re-edition, e.g. ``p.benaki.7`` and
``sb.26.16688``) are left out.
A word repeated in two sentences (same ``wordid``) is read once; artificial (elliptic) words are skipped.

Sigla in ``form``: ``[…]`` (lost), ``<…>`` (omitted, also ``<:…:>``), ``(…)`` (the editor's expansion of an
abbreviation) and ``⟦…⟧`` (deleted, kept with ``keep_deleted``) are dropped with their content; ``{…}``,
``\\…/`` and underdots are kept; ``|gap=…|`` is removed; ``-`` is a line break when ``row`` spans lines.

Labels: ``literary`` is False (DDbDP "paraliterary" texts are magical texts, school exercises and the like,
not DCLP literature). ``genre_raw`` is the ``genre`` attribute, mapped to ``doctype`` by its stem:

| genre | doctype |
|---|---|
| paraliterary | other |
| letter(s) | letter |
| contract(s) | contract |
| receipt(s) | receipt |
| account(s) | account |
| list(s) | list |
| declaration(s) | declaration |
| pronouncement(s) | order |
| administration, report(s), label(s), other, anything else | other |

Only the paraliterary file is shipped; the other rows cover the corpus's other genre files. Dates span
the whole centuries ``period_min``..``period_max`` (`century_span`).
"""

from __future__ import annotations

import functools
import re
from dataclasses import dataclass
from pathlib import Path

from synth.generators.papyrus.corpus import PapyrusDocument
from synth.generators.papyrus.epidoc import MAX_DOCUMENT_BYTES, EpiDocError, check_file_size, normalise_greek
from synth.generators.papyrus.sources.base import (
    CORPORA_ROOT,
    SiglaSpans,
    SourceEntry,
    Token,
    century_span,
    date_fields,
    join_tokens,
    parse_xml,
    sorted_files,
    split_tms,
)

__all__ = ["FOLDER", "list_duke", "map_duke_doctype", "read_duke", "strip_form"]

#: The folder of the Trismegistos Words treebanks under the corpora root.
FOLDER = "duke_nlp"

_DOCTYPES = {
    "letter": "letter",
    "contract": "contract",
    "receipt": "receipt",
    "account": "account",
    "list": "list",
    "declaration": "declaration",
    "pronouncement": "order",
}
_GAP = re.compile(r"\|gap=[^|]*\|")
_PART = re.compile(r"_\d+$")
_OPENERS = {"[": "lost", "<": "omitted", "⟦": "deleted", "(": "expansion"}
_CLOSERS = {"]": "lost", ">": "omitted", "⟧": "deleted", ")": "expansion"}
_FRAGMENT = "#document_id="
_NO_PLACE = frozenset({"", "unknown"})


@dataclass(frozen=True, slots=True)
class _Word:
    form: str
    row: str
    part: str


@dataclass(frozen=True, slots=True)
class _Text:
    """One document of a treebank file: metadata of its first sentence, periods of all, words in order."""

    ddb_file: str
    genre: str
    place: str
    periods: tuple[tuple[str, str], ...]
    words: tuple[_Word, ...]


def list_duke(root: Path = CORPORA_ROOT, *, max_bytes: int | None = MAX_DOCUMENT_BYTES) -> list[SourceEntry]:
    """List the documents (TM ids) of the treebank files under `root`: files in path order, TM ids in order of
    first appearance.

    A file that cannot be parsed (or is larger than `max_bytes`: the limit applies to the whole file) is listed
    once, without a fragment, so that reading it reports the error.
    """
    root = Path(root)
    entries: list[SourceEntry] = []
    for path in sorted_files(root / FOLDER, root, "*.xml"):
        rel = path.relative_to(root).as_posix()
        try:
            texts = _read_file(path, rel, max_bytes)
        except EpiDocError:
            entries.append(SourceEntry(rel, ()))
            continue
        entries.extend(SourceEntry(f"{rel}{_FRAGMENT}{tm}", split_tms(tm)) for tm in texts)
    return entries


def read_duke(
    root: Path,
    locator: str,
    *,
    keep_deleted: bool = False,
    scriptio_continua: bool = False,
    max_bytes: int | None = MAX_DOCUMENT_BYTES,
) -> PapyrusDocument | EpiDocError:
    """Read one document; `locator` is ``<file relative to root>#document_id=<TM id>`` (a file of at most
    `max_bytes` bytes).

    Example:
        >>> doc = read_duke(CORPORA_ROOT, "duke_nlp/Papyri_Paraliterary.xml#document_id=31247")
        >>> doc.doc_id, doc.doctype, doc.date_min, doc.date_max, doc.text.split("\\n")[0]
        ('duke:31247', 'other', 201, 400, 'εντολικον νικωνοσ')
    """
    rel, _, tm = locator.partition(_FRAGMENT)
    try:
        texts = _read_file(Path(root) / rel, rel, max_bytes)
    except EpiDocError as error:
        return error
    if tm not in texts:
        return EpiDocError(locator, f"no sentence with document_id `{tm}`", code="no_such_document")
    if not tm:
        return EpiDocError(locator, "sentences without a document_id (TM id)", code="no_tm_id")
    text = texts[tm]
    try:
        low, high = _period(text.periods)
    except ValueError as error:
        return EpiDocError(locator, str(error), code="bad_date")
    tokens = (_token(word, keep_deleted=keep_deleted) for word in text.words)
    clean = normalise_greek(join_tokens(tokens), scriptio_continua=scriptio_continua)
    if not clean:
        return EpiDocError(locator, "empty text (no legible letters)", code="no_text")
    return PapyrusDocument(
        doc_id=f"duke:{tm}",
        source="duke",
        path=locator,
        text=clean,
        tm=tm,
        hgv=(),
        title=None,
        place=None if text.place.lower() in _NO_PLACE else text.place,
        literary=False,
        doctype=map_duke_doctype(text.genre),
        subtype=None,
        genre_raw=text.genre or None,
        **date_fields(low, high),
    )


def map_duke_doctype(genre: str) -> str | None:
    """Map a Trismegistos Words genre (``paraliterary``, ``Letters``, …) to a doctype class; None if empty.

    Example:
        >>> map_duke_doctype("paraliterary"), map_duke_doctype("Letters"), map_duke_doctype("Pronouncements")
        ('other', 'letter', 'order')
    """
    stem = genre.strip().lower()
    if not stem:
        return None
    return _DOCTYPES.get(stem.removesuffix("s"), "other")


def strip_form(form: str, *, keep_deleted: bool = False, spans_lines: bool = False) -> str:
    """Strip the sigla of one ``form``; with `spans_lines` each ``-`` becomes ``"\\n"``.

    Example:
        >>> strip_form("χωρ(ί)ο(ν)"), strip_form("Ἀ[μπελίου]"), strip_form("σ̣ε-|gap=unknown|σ̣ας", spans_lines=True)
        ('χωρο', 'Ἀ', 'σ̣ε\\nσ̣ας')
    """
    form = _GAP.sub("", form)
    spans = SiglaSpans(keep_deleted=keep_deleted)
    out: list[str] = []
    for char in form:
        if char == "-" and spans_lines:
            out.append("\n")
        elif char in _OPENERS:
            spans.push(_OPENERS[char])
        elif char in _CLOSERS:
            spans.close(_CLOSERS[char])
        elif not spans.dropping:
            out.append(char)
    return "".join(out)


def _token(word: _Word, *, keep_deleted: bool) -> Token:
    """A word whose line keys name its part too, so that a new part always starts a new line."""
    first, dash, last = word.row.partition("-")
    text = strip_form(word.form, keep_deleted=keep_deleted, spans_lines=bool(dash))
    first_line = f"{word.part}:{first.strip()}" if first.strip() else None
    last_line = (f"{word.part}:{last.strip()}" if last.strip() else None) if dash else first_line
    return Token(text, first_line, last_line)


def _period(periods: tuple[tuple[str, str], ...]) -> tuple[int | None, int | None]:
    """Return the first and last year covered by the centuries of all sentences; (None, None) if none."""
    spans = []
    for low, high in periods:
        if not low.strip() and not high.strip():
            continue
        try:
            first, last = int(low or high), int(high or low)
        except ValueError:
            msg = f"bad period_min/period_max `{low}`/`{high}` (expected centuries, e.g. -2 and 1)"
            raise ValueError(msg) from None
        spans.append(century_span(first, last))
    if not spans:
        return None, None
    return min(low for low, _ in spans), max(high for _, high in spans)


def _read_file(path: Path, rel: str, max_bytes: int | None) -> dict[str, _Text]:
    try:
        stat = path.stat()
    except OSError as exc:
        raise EpiDocError(rel, f"cannot read file: {exc.strerror or exc}", code="unreadable_file") from exc
    check_file_size(rel, stat.st_size, max_bytes=max_bytes)
    return _read_file_cached(str(path), rel, stat.st_mtime_ns, stat.st_size, max_bytes)


@functools.lru_cache(maxsize=8)
def _read_file_cached(path: str, rel: str, mtime_ns: int, size: int, max_bytes: int | None) -> dict[str, _Text]:
    """Group the sentences of one treebank file by TM id, in order of first appearance (cached per stamp)."""
    del mtime_ns, size  # part of the cache key only
    tree = parse_xml(Path(path), rel, max_bytes=max_bytes)
    groups: dict[str, dict] = {}
    for sentence in tree.iter("sentence"):
        tm = (sentence.get("document_id") or "").strip()
        part = sentence.get("filename") or ""
        ddb_file = _PART.sub("", part)
        group = groups.setdefault(tm, {"sentence": sentence, "ddb_file": ddb_file, "periods": [], "words": {}})
        if ddb_file != group["ddb_file"]:
            continue  # another edition of the same TM text
        group["periods"].append((sentence.get("period_min") or "", sentence.get("period_max") or ""))
        for word in sentence.iter("word"):
            key = word.get("wordid")
            if word.get("artificial") or key is None or key in group["words"]:
                continue
            group["words"][key] = _Word(word.get("form") or "", word.get("row") or "", part)
    return {
        tm: _Text(
            ddb_file=group["ddb_file"],
            genre=(group["sentence"].get("genre") or "").strip(),
            place=(group["sentence"].get("place") or "").strip(),
            periods=tuple(group["periods"]),
            words=tuple(group["words"].values()),
        )
        for tm, group in groups.items()
    }
