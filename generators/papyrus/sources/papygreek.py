"""Read the PapyGreek treebanks (``papygreek_treebanks/documentary/<series>/<ddb-file>.xml``).

Each file is one documentary text: ``<document_meta>`` (TM, HGV, date range, place), one ``<hand_meta>``
per hand with an EVWRIT ``<text_type hypercategory category subcategory>``, then ``<sentence>/<word>``
tokens. The text is the scribe's spelling (``orig_form``) of every non-artificial word, in file order; a
word starts a new line when its ``line_n`` changes. ``line_n`` is the line a word ends on, so a word broken
over lines (``ἐνέκ|και``) starts ``|``-count lines earlier.

The forms keep IDP Leiden+ sigla. Dropped with their content: ``[…]`` (lost, restored by the editor),
``<…>`` (omitted), the inner ``(…)`` of an abbreviation ``(abbr(ex))`` (the editor's expansion), and
``〚…〛`` (deleted, kept with ``keep_deleted``). Kept: ``{…}`` (surplus), ``\\…/`` and ``||…||`` (additions),
``(|…|)`` (an abbreviation left unresolved), superscripts ``|^…^|``, underdots. A lone ``|`` is a line
break, and so is ``⧙`` (it opens ``⧙…⧘``, which PapyGreek puts around a line break that falls next to
a bracket: ``τεσσαρά⧙[]⧘κοντα``); ``⧘ ❛ ❜`` are dropped; gaps (``_.3``, ``_.?``, ``_.vestig``) and symbols
(``*✕*``) leave no letters after `normalise_greek`.

Labels (the text type of the first hand that has one):

| PapyGreek category | doctype |
|---|---|
| Letter | letter |
| Petition | petition |
| Contract | contract |
| Receipt | receipt |
| Order, Order (law/administration) | order |
| Register, Registration | register |
| Report with subcategory "Legal proceedings" | register (HGV calls these *Protokoll*) |
| Declaration, Declaration (apographè), Notification | declaration (HGV *Deklaration*, *Anzeige*) |
| Account | account |
| List | list |
| anything else (Memorandum, Report, Dream, Notice, Acknowledgement, Response, Mixed, Uncertain) | other |
| no text type on any hand | None |

``subtype`` is the subcategory, ``genre_raw`` is ``"hypercategory; category; subcategory"`` (empty parts
left out). All texts are documentary (``literary=False``). Dates are ``date_not_before``/``date_not_after``.
"""

from __future__ import annotations

import re
from collections.abc import Iterator
from pathlib import Path

from lxml import etree

from synth.generators.papyrus.corpus import PapyrusDocument, parse_year
from synth.generators.papyrus.epidoc import MAX_DOCUMENT_BYTES, EpiDocError, normalise_greek
from synth.generators.papyrus.sources.base import (
    CORPORA_ROOT,
    SiglaSpans,
    SourceEntry,
    Token,
    date_fields,
    join_tokens,
    parse_xml,
    sorted_files,
    split_tms,
)

__all__ = ["FOLDER", "list_papygreek", "map_papygreek_doctype", "read_papygreek", "strip_form"]

#: The folder of the PapyGreek treebanks under the corpora root.
FOLDER = "papygreek_treebanks"

_DOCTYPES = {
    "letter": "letter",
    "petition": "petition",
    "contract": "contract",
    "receipt": "receipt",
    "order": "order",
    "register": "register",
    "registration": "register",
    "declaration": "declaration",
    "notification": "declaration",
    "account": "account",
    "list": "list",
}
_MARKERS = str.maketrans({"⧙": "|", "⧘": None, "❛": None, "❜": None})
_SKIPPED_PAIRS = ("|^", "^|", "||")
_SIGLA = re.compile(r"[\[\]<>〚〛()|⧙⧘❛❜]")
_HEADER_TM = re.compile(rb"<document_meta\b[^>]*?\btm_id=\"([^\"]*)\"")
_HEADER_BYTES = 1 << 16
_OPENERS = {"[": "lost", "<": "omitted", "〚": "deleted"}
_CLOSERS = {"]": "lost", ">": "omitted", "〛": "deleted"}


def list_papygreek(root: Path = CORPORA_ROOT, *, max_bytes: int | None = MAX_DOCUMENT_BYTES) -> list[SourceEntry]:
    """List the treebank files under `root` in path order, with the TM ids read from their header only.

    A file larger than `max_bytes` is listed without TM ids (reading it reports the size).
    """
    root = Path(root)
    return [SourceEntry(path.relative_to(root).as_posix(), _header_tms(path, max_bytes)) for path in _files(root)]


def read_papygreek(
    root: Path,
    locator: str,
    *,
    keep_deleted: bool = False,
    scriptio_continua: bool = False,
    max_bytes: int | None = MAX_DOCUMENT_BYTES,
) -> PapyrusDocument | EpiDocError:
    """Read one treebank file (`locator` is its POSIX path relative to `root`; at most `max_bytes` bytes).

    Example:
        >>> doc = read_papygreek(CORPORA_ROOT, "papygreek_treebanks/documentary/aegyptus/aegyptus.90.43.xml")
        >>> doc.doc_id, doc.doctype, doc.subtype, doc.date_min, doc.text.split("\\n")[0]
        ('papygreek:aegyptus.90.43', 'order', 'Delivery', 301, 'περικλησ σαραπατι τω')
    """
    try:
        tree = parse_xml(Path(root) / locator, locator, max_bytes=max_bytes)
    except EpiDocError as error:
        return error
    meta = tree.find("document_meta")
    if meta is None:
        return EpiDocError(locator, "no document_meta element", code="no_document_meta")
    text = normalise_greek(join_tokens(_tokens(tree, keep_deleted=keep_deleted)), scriptio_continua=scriptio_continua)
    if not text:
        return EpiDocError(locator, "empty text (no legible letters)", code="no_text")
    hyper, category, subcategory = _text_type(tree)
    tms = split_tms(meta.get("tm_id"))
    return PapyrusDocument(
        doc_id=f"papygreek:{Path(locator).stem}",
        source="papygreek",
        path=locator,
        text=text,
        tm=" ".join(tms) or None,
        hgv=tuple(dict.fromkeys((meta.get("hgv_id") or "").split())),
        title=None,
        place=(meta.get("place_name") or "").strip() or None,
        literary=False,
        doctype=map_papygreek_doctype(category, subcategory, hypercategory=hyper),
        subtype=subcategory or None,
        genre_raw="; ".join(part for part in (hyper, category, subcategory) if part) or None,
        **date_fields(parse_year(meta.get("date_not_before")), parse_year(meta.get("date_not_after"))),
    )


def map_papygreek_doctype(category: str, subcategory: str = "", *, hypercategory: str = "") -> str | None:
    """Map a PapyGreek (EVWRIT) text-type category to a doctype class (table in the module docstring).

    Example:
        >>> map_papygreek_doctype("Declaration (apographè)"), map_papygreek_doctype("Report", "Legal proceedings")
        ('declaration', 'register')
    """
    if not category.strip():
        return "other" if hypercategory.strip() else None
    head = category.split("(")[0].strip().lower()
    if head == "report" and subcategory.strip().lower() == "legal proceedings":
        return "register"
    return _DOCTYPES.get(head, "other")


def strip_form(form: str, *, keep_deleted: bool = False) -> str:
    """Strip the Leiden+ sigla of one word form, keeping what the scribe wrote; ``|`` becomes ``"\\n"``.

    Example:
        >>> strip_form("(ἰν[δι]κ̣(τίωνος))"), strip_form("ε̣[ὔχο]μαι"), strip_form("ἐνέκ|και")
        ('ἰνκ̣', 'ε̣μαι', 'ἐνέκ\\nκαι')
    """
    if _SIGLA.search(form) is None:
        return form
    form = form.translate(_MARKERS)
    spans = SiglaSpans(keep_deleted=keep_deleted)
    out: list[str] = []
    index = 0
    while index < len(form):
        pair = form[index : index + 2]
        if pair in _SKIPPED_PAIRS:
            index += 2
        elif pair == "(|" and form[index + 2 : index + 3] != "^":
            spans.push("abbreviation")
            index += 2
        elif pair == "|)" and "abbreviation" in spans.open:
            spans.close("abbreviation")
            index += 2
        else:
            _strip_char(form[index], spans, out)
            index += 1
    return "".join(out)


def _strip_char(char: str, spans: SiglaSpans, out: list[str]) -> None:
    if char == "|":
        out.append("\n")
    elif char in _OPENERS:
        spans.push(_OPENERS[char])
    elif char in _CLOSERS:
        spans.close(_CLOSERS[char])
    elif char == "(":
        # ``(abbr(ex))``: the outer parentheses wrap the abbreviation, an inner pair is the expansion.
        spans.push("expansion" if "abbreviated" in spans.open else "abbreviated")
    elif char == ")":
        spans.close("expansion" if spans.top() == "expansion" else "abbreviated")
    elif not spans.dropping:
        out.append(char)


def _tokens(tree: etree._Element, *, keep_deleted: bool) -> Iterator[Token]:
    for word in tree.iter("word"):
        if word.get("artificial"):
            continue
        text = strip_form(word.get("orig_form") or "", keep_deleted=keep_deleted)
        last = (word.get("line_n") or "").strip() or None
        first = last
        breaks = text.count("\n")
        if breaks and last is not None:
            # A word broken over lines ends on `line_n`; without a plain number, keep it on the current line.
            first = str(int(last) - breaks) if last.isdigit() else None
        yield Token(text, first, last)


def _text_type(tree: etree._Element) -> tuple[str, str, str]:
    """Return (hypercategory, category, subcategory) of the first hand that has a text type."""
    for hand in tree.iter("hand_meta"):
        text_type = hand.find("text_type")
        if text_type is None:
            continue
        parts = tuple((text_type.get(key) or "").strip() for key in ("hypercategory", "category", "subcategory"))
        if parts[0] or parts[1]:
            return parts  # type: ignore[return-value]
    return "", "", ""


def _files(root: Path) -> list[Path]:
    return sorted_files(root / FOLDER, root, "*.xml")


def _header_tms(path: Path, max_bytes: int | None) -> tuple[str, ...]:
    """Read ``document_meta/@tm_id`` from the head of the file (it precedes the tokens); () when absent."""
    try:
        if max_bytes is not None and path.stat().st_size > max_bytes:
            return ()
        with path.open("rb") as handle:
            head = handle.read(_HEADER_BYTES)
            match = _HEADER_TM.search(head)
            if match is None and len(head) == _HEADER_BYTES:
                match = _HEADER_TM.search(head + handle.read(max_bytes))
    except OSError:
        return ()
    return split_tms(match.group(1).decode("utf-8", "replace")) if match else ()
