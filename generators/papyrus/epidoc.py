"""Strip the editorial layer from an EpiDoc edition, leaving the letters a "perfect HTR" model would read.

The walker keeps what the scribe wrote and what is still visible (unclear, surplus, orig/sic, lem, add,
abbreviations) and drops what editors restored, expanded, regularised or commented (supplied, ex, reg/corr,
rdg, del, notes and layout markers). Every dropped element keeps its tail text. ``lb`` starts a new line;
line breaks that sit only inside a dropped branch (a ``reg`` split over two lines, a lost ``supplied`` line)
are still counted, so one output line corresponds to one physical line. Tags are matched by local name,
so TEI P5 (namespaced) and legacy TEI P4 ``TEI.2`` (no namespace, ``reg/@orig``, ``corr/@sic``) both work.
"""

from __future__ import annotations

import os
import re
import stat
import unicodedata
from collections.abc import Callable, Iterable
from pathlib import Path

from lxml import etree

__all__ = [
    "GREEK_LETTERS",
    "MAX_DOCUMENT_BYTES",
    "REASON_CODES",
    "EpiDocError",
    "check_file_size",
    "local_name",
    "normalise_greek",
    "parse_xml",
    "read_file_bytes",
    "strip_edition",
]

#: The default cap on one source file's size, checked before it is read (``generator.max_document_bytes``).
MAX_DOCUMENT_BYTES = 8 * 1024 * 1024

#: The output alphabet besides space and newline: the 24 letters plus digamma, stigma, koppa and sampi.
GREEK_LETTERS = "αβγδεζηθικλμνξοπρστυφχψω" + "ϝϛϙϟϡ"
_ALPHABET = frozenset(GREEK_LETTERS)

# Letter variants folded after lowercasing: final and lunate sigma, symbol forms, the micro sign.
_FOLD = {
    "ς": "σ",
    "ϲ": "σ",
    "ϐ": "β",
    "ϑ": "θ",
    "ϕ": "φ",
    "ϖ": "π",
    "ϰ": "κ",
    "ϱ": "ρ",
    "ϵ": "ε",
    "µ": "μ",
}

_WHITESPACE = re.compile(r"\s+")

# Elements whose whole subtree is apparatus or layout: dropped, no line breaks counted inside.
_DROP_SILENT = frozenset(
    {"note", "certainty", "milestone", "space", "handShift", "figure", "figDesc", "desc", "g", "gap"}
)
# Editorial text dropped in place; a line break inside still marks a physical line.
_DROP_EDITORIAL = frozenset({"supplied", "ex", "rdg"})
# Alternatives resolved by keeping one branch.
_ALTERNATIVES = frozenset({"choice", "app", "subst"})
_LINE_BREAKS = frozenset({"lb", "cb", "pb"})
_BLOCKS = frozenset({"ab", "div", "lg", "l", "p"})
_CHOICE_PREFERENCE = ("orig", "sic", "abbr")
_CHOICE_REJECT = frozenset({"reg", "corr", "expan"})


#: The failure kinds of the source readers, as the stable codes their rejected rows carry.
REASON_CODES: dict[str, str] = {
    "unreadable_file": "the file cannot be opened or read, or is not a regular file",
    "invalid_file_name": "the file name is not valid UTF-8 (it cannot be stored or parsed; rename the file)",
    "document_too_large": "the file is larger than `generator.max_document_bytes`",
    "invalid_xml": "not well-formed XML (or beyond the parser's depth and size limits)",
    "not_tei": "the root element is neither TEI (P5) nor TEI.2 (P4)",
    "no_edition": "a TEI file without div[@type='edition']",
    "no_document_meta": "a PapyGreek treebank without document_meta",
    "no_text": "nothing legible once the editorial layer is stripped",
    "no_such_document": "the locator names a row or TM id the file does not hold",
    "no_tm_id": "a treebank's sentences carry no document_id (TM id)",
    "bad_tm_id": "a TM id that is not a Trismegistos number",
    "bad_date": "a date or period value that cannot be read",
    "invalid_csv": "a CSV file that is not UTF-8 or not well-formed",
    "unknown_columns": "a CSV file without the expected columns",
}


def normalise_greek(text: str, *, scriptio_continua: bool = False) -> str:
    """Reduce text to lowercase Greek letters, single spaces and non-empty lines.

    NFD, then combining marks (accents, breathings, diaeresis, iota subscript) are removed; letters are
    lowercased and ``ς``/``ϲ`` become ``σ``; everything outside `GREEK_LETTERS`, space and newline
    (punctuation, numeral ticks, digits, Latin) is removed. Runs of spaces collapse, each line is
    stripped and empty lines are dropped.

    Args:
        text: Raw text; ``"\\n"`` separates lines, any other whitespace counts as a space.
        scriptio_continua: Remove the spaces between words as well.

    Example:
        >>> normalise_greek("ἔτους μϛ Μεσορὴ δ, ἐφʼ  Ἡλιοδώρου.\\n\\n ᾠδῆς ")
        'ετουσ μϛ μεσορη δ εφ ηλιοδωρου\\nωδησ'
    """
    kept: list[str] = []
    for char in unicodedata.normalize("NFD", text):
        if unicodedata.combining(char):
            continue
        lower = char.lower()
        lower = _FOLD.get(lower, lower)
        if lower in _ALPHABET or lower == "\n":
            kept.append(lower)
        elif char.isspace():
            kept.append(" ")
    lines = []
    for line in "".join(kept).split("\n"):
        words = line.split()
        joined = "".join(words) if scriptio_continua else " ".join(words)
        if joined:
            lines.append(joined)
    return "\n".join(lines)


class EpiDocError(ValueError):
    """A source file that cannot be turned into text (unparseable, no edition, nothing legible).

    Attributes:
        path: The file, as given by the caller (usually relative to the corpus root).
        reason: A short, specific reason naming the values, e.g. ``"empty edition (no legible text)"``.
        code: The stable reason code of the failure kind, e.g. ``"no_text"`` (see `REASON_CODES`).
    """

    def __init__(self, path: str, reason: str, *, code: str) -> None:
        if code not in REASON_CODES:
            msg = f"unknown EpiDocError code {code!r}; known: {', '.join(REASON_CODES)}"
            raise ValueError(msg)
        super().__init__(f"{path}: {reason}")
        self.path = path
        self.reason = reason
        self.code = code

    def __reduce__(self) -> tuple[Callable[[str, str, str], EpiDocError], tuple[str, str, str]]:
        return (_rebuild_error, (self.path, self.reason, self.code))


def _rebuild_error(path: str, reason: str, code: str) -> EpiDocError:
    return EpiDocError(path, reason, code=code)


def read_file_bytes(path: Path, rel: str, *, max_bytes: int | None = MAX_DOCUMENT_BYTES) -> bytes:
    """Read a regular file of at most `max_bytes` bytes (None: no limit), checking its size before reading.

    Raises:
        EpiDocError: ``unreadable_file`` (missing, unreadable, not a regular file), ``document_too_large``, or
            ``invalid_file_name`` (a name that is not valid UTF-8 cannot be stored or parsed; it is shown escaped).
    """
    shown_rel = rel.encode("utf-8", "surrogateescape").decode("utf-8", "backslashreplace")
    if shown_rel != rel:
        raise EpiDocError(shown_rel, "file name is not valid UTF-8; rename the file", code="invalid_file_name")
    try:
        # O_NONBLOCK: opening a FIFO must not wait for a writer; it is refused below as not a regular file.
        with os.fdopen(os.open(path, os.O_RDONLY | getattr(os, "O_NONBLOCK", 0)), "rb") as handle:
            info = os.fstat(handle.fileno())
            if not stat.S_ISREG(info.st_mode):
                raise EpiDocError(rel, "cannot read file: not a regular file", code="unreadable_file")
            check_file_size(rel, info.st_size, max_bytes=max_bytes)
            data = handle.read(info.st_size + 1)  # a buffer the size of the file, not of the limit
            if len(data) > info.st_size:  # the file grew since fstat: read on, up to just past the limit
                data += handle.read() if max_bytes is None else handle.read(max(0, max_bytes + 1 - len(data)))
    except OSError as exc:
        raise EpiDocError(rel, f"cannot read file: {exc.strerror or exc}", code="unreadable_file") from exc
    check_file_size(rel, len(data), max_bytes=max_bytes)  # the file grew while it was read
    return data


def check_file_size(rel: str, size: int, *, max_bytes: int | None) -> None:
    """Raise ``document_too_large`` when a file of `size` bytes is over `max_bytes` (None: no limit)."""
    if max_bytes is not None and size > max_bytes:
        reason = (
            f"file is {size:,} bytes, over the {max_bytes:,}-byte limit; "
            "raise `generator.max_document_bytes` to read it"
        )
        raise EpiDocError(rel, reason, code="document_too_large")


def parse_xml(path: Path, rel: str, *, max_bytes: int | None = MAX_DOCUMENT_BYTES) -> etree._Element:
    """Parse an XML file of at most `max_bytes` bytes with a hardened parser; errors become `EpiDocError(rel, …)`.

    No entities are expanded, no DTD or network resource is loaded, and libxml2's limits stay on (depth 256,
    10 MB per text node), so the memory a file can take is bounded by its size.
    """
    data = read_file_bytes(path, rel, max_bytes=max_bytes)
    parser = etree.XMLParser(resolve_entities=False, no_network=True, load_dtd=False, huge_tree=False)
    try:
        root = etree.fromstring(data, parser, base_url=str(path))
    except etree.XMLSyntaxError as exc:
        raise EpiDocError(rel, f"XML syntax error: {exc}", code="invalid_xml") from exc
    return root


def strip_edition(
    tei_root: etree._Element | etree._ElementTree,
    *,
    keep_deleted: bool = False,
    scriptio_continua: bool = False,
) -> str:
    """Return the letters-only reference text of the ``div[@type='edition']`` of an EpiDoc document.

    Args:
        tei_root: The parsed document (root element or tree); an edition ``div`` itself is accepted too.
        keep_deleted: Keep struck-through ink (``del``), except ``del[@rend='erasure']``.
        scriptio_continua: Remove the spaces between words.

    Returns:
        Normalised lines joined by ``"\\n"`` (see `normalise_greek`); ``""`` when nothing is legible.

    Raises:
        EpiDocError: The document has no edition ``div``; ``path`` is the parsed file's URL when known.

    Example:
        >>> xml = '<TEI><text><body><div type="edition"><ab><lb n="1"/>ἐ<unclear>ν</unclear> '
        >>> xml += 'Π<supplied reason="lost">αθύρει</supplied></ab></div></body></text></TEI>'
        >>> strip_edition(etree.fromstring(xml))
        'εν π'
    """
    root = tei_root.getroot() if isinstance(tei_root, etree._ElementTree) else tei_root
    editions = _find_editions(root)
    if not editions:
        url = root.getroottree().docinfo.URL or "<document>"
        raise EpiDocError(url, "no edition div (div[@type='edition'])", code="no_edition")
    walker = _Walker(keep_deleted=keep_deleted)
    for edition in editions:
        walker.block(edition)
    return normalise_greek("".join(walker.out), scriptio_continua=scriptio_continua)


def local_name(element: etree._Element) -> str | None:
    """Return the tag without namespace, or None for comments and processing instructions."""
    tag = element.tag
    if not isinstance(tag, str):
        return None
    return tag.rsplit("}", 1)[-1]


def _find_editions(root: etree._Element) -> list[etree._Element]:
    def is_edition(element: etree._Element) -> bool:
        return local_name(element) == "div" and element.get("type") == "edition"

    return [e for e in root.iter() if is_edition(e) and not any(is_edition(a) for a in e.iterancestors())]


def _children(element: etree._Element) -> list[etree._Element]:
    return [child for child in element if local_name(child) is not None]


def _count_lines(element: etree._Element) -> int:
    """Count the line breaks a subtree stands for; an alternative counts its longest branch once."""
    name = local_name(element)
    if name is None or name in _DROP_SILENT:
        return 0
    if name in _LINE_BREAKS:
        return 1
    counts = [_count_lines(child) for child in element]
    if name in _ALTERNATIVES:
        return max(counts, default=0)
    return sum(counts)


class _Walker:
    """Depth-first walk that appends kept text and ``"\\n"`` markers to `out`."""

    def __init__(self, *, keep_deleted: bool) -> None:
        self.keep_deleted = keep_deleted
        self.out: list[str] = []

    def text(self, value: str | None) -> None:
        if value:
            self.out.append(_WHITESPACE.sub(" ", value))

    def newlines(self, count: int) -> None:
        self.out.extend("\n" * count)

    def content(self, element: etree._Element) -> None:
        """Emit the element's text, its children and their tails."""
        self.text(element.text)
        for child in element:
            self.node(child)
            self.text(child.tail)

    def block(self, element: etree._Element) -> None:
        self.newlines(1)
        self.content(element)
        self.newlines(1)

    def node(self, element: etree._Element) -> None:
        """Emit one element (never its tail: the parent does that)."""
        name = local_name(element)
        if name is None or name in _DROP_SILENT:
            return
        if name in _LINE_BREAKS:
            self.newlines(1)
        elif name in _BLOCKS:
            self.block(element)
        elif name in _ALTERNATIVES:
            self.alternative(element, name)
        elif name in _DROP_EDITORIAL:
            self.newlines(_count_lines(element))
        elif name in ("reg", "corr"):
            self.regularised(element, "orig" if name == "reg" else "sic")
        elif name == "del":
            self.deleted(element)
        else:
            self.content(element)

    def regularised(self, element: etree._Element, original_attr: str) -> None:
        """A lone ``reg``/``corr``: keep the P4 original (``@orig``/``@sic``), else drop the editor's text."""
        original = element.get(original_attr)
        if original is not None:
            self.text(original)
        self.newlines(_count_lines(element))

    def deleted(self, element: etree._Element) -> None:
        if self._keeps_deletion(element):
            self.content(element)
        else:
            self.newlines(_count_lines(element))

    def _keeps_deletion(self, element: etree._Element) -> bool:
        return self.keep_deleted and element.get("rend") != "erasure"

    def alternative(self, element: etree._Element, name: str) -> None:
        """Keep one branch of choice/app/subst, then add the line breaks only the dropped branches hold."""
        kept = self._kept_branches(element, name)
        kept_ids = {id(child) for child in kept}
        self.text(element.text)
        for child in element:
            if local_name(child) is not None and id(child) in kept_ids:
                self.node(child)
            self.text(child.tail)
        longest = max((_count_lines(child) for child in element), default=0)
        self.newlines(max(0, longest - sum(_count_lines(child) for child in kept)))

    def _kept_branches(self, element: etree._Element, name: str) -> list[etree._Element]:
        children = _children(element)
        if name == "subst":
            return [c for c in children if local_name(c) != "del" or self._keeps_deletion(c)]
        if name == "app":
            preferred: Iterable[str] = ("lem",)
            rejected: frozenset[str] = frozenset({"rdg"})
        else:
            preferred, rejected = _CHOICE_PREFERENCE, _CHOICE_REJECT
        for wanted in preferred:
            for child in children:
                if local_name(child) == wanted:
                    return [child]
        for child in children:
            if local_name(child) not in rejected:
                return [child]
        return children[:1]
