"""Pieces shared by the treebank and CSV readers: listing entries, sigla spans, line assembly, dates.

PapyGreek and Trismegistos Words treebanks keep the edition's Leiden sigla inside each word form and give
each word a line number. A reader strips the sigla of one form (`SiglaSpans` says what is being dropped),
wraps it in a `Token` with the line it starts and ends on, and `join_tokens` rebuilds the lines.
"""

from __future__ import annotations

import re
from collections.abc import Iterable
from dataclasses import dataclass
from pathlib import Path

from synth.generators.papyrus.epidoc import parse_xml

__all__ = [
    "CORPORA_ROOT",
    "SiglaSpans",
    "SourceEntry",
    "Token",
    "century_span",
    "date_fields",
    "join_tokens",
    "parse_xml",
    "sorted_files",
    "split_tms",
]

#: The labelled corpora shipped with the package (see ``corpora/ATTRIBUTION.md``).
CORPORA_ROOT = Path(__file__).parent.parent / "corpora"

_TM = re.compile(r"\d+")
_DROPPED = frozenset({"lost", "omitted", "expansion"})


@dataclass(frozen=True, slots=True)
class SourceEntry:
    """One readable item of a source as listed: where it is and its Trismegistos ids (for dedup)."""

    locator: str
    tms: tuple[str, ...]


@dataclass(frozen=True, slots=True)
class Token:
    """One word with its sigla stripped (``"\\n"`` at line breaks inside it) and its first and last line."""

    text: str
    first_line: str | None
    last_line: str | None


class SiglaSpans:
    """The editorial spans open at a point of a word form, innermost last.

    Kinds: ``lost`` (``[…]``), ``omitted`` (``<…>``), ``expansion`` (a resolved abbreviation), ``deleted``
    (struck ink) and transparent kinds such as ``abbreviation``. Text inside a lost, omitted or expansion
    span is editorial and dropped; deleted text is dropped unless `keep_deleted`.
    """

    def __init__(self, *, keep_deleted: bool) -> None:
        self.keep_deleted = keep_deleted
        self.open: list[str] = []
        self.dropping = False

    def push(self, kind: str) -> None:
        self.open.append(kind)
        self.dropping = self.dropping or self._drops(kind)

    def close(self, kind: str) -> None:
        """Close the innermost `kind` span and any span opened inside it; ignore a stray closer."""
        for index in range(len(self.open) - 1, -1, -1):
            if self.open[index] == kind:
                del self.open[index:]
                self.dropping = any(self._drops(k) for k in self.open)
                return

    def top(self) -> str | None:
        return self.open[-1] if self.open else None

    def _drops(self, kind: str) -> bool:
        return kind in _DROPPED or (kind == "deleted" and not self.keep_deleted)


def join_tokens(tokens: Iterable[Token]) -> str:
    """Join stripped words with spaces, starting a new line whenever a word starts off the current line.

    A word without a line number stays on the current line. The result still needs `normalise_greek`.
    """
    parts: list[str] = []
    current: str | None = None
    for token in tokens:
        if token.first_line is not None and current is not None and token.first_line != current:
            parts.append("\n")
        parts.append(" ")
        parts.append(token.text)
        if token.last_line is not None:
            current = token.last_line
    return "".join(parts)


def split_tms(value: str | None) -> tuple[str, ...]:
    """Return the distinct numeric Trismegistos ids in `value` (``"3420 3420"`` → ``("3420",)``)."""
    return tuple(dict.fromkeys(token for token in (value or "").split() if _TM.fullmatch(token)))


def century_span(first: int, last: int) -> tuple[int, int]:
    """Return the years covered from century `first` to century `last` (negative = BCE, no year 0).

    Example:
        >>> century_span(-3, -2), century_span(2, 3), century_span(-1, 1)
        ((-300, -101), (101, 300), (-100, 100))
    """
    if first == 0 or last == 0:
        msg = f"century 0 does not exist (got {first}..{last})"
        raise ValueError(msg)
    low = 100 * first if first < 0 else 100 * (first - 1) + 1
    high = 100 * last + 99 if last < 0 else 100 * last
    if low > high:
        msg = f"century range runs backwards ({first}..{last})"
        raise ValueError(msg)
    return low, high


def date_fields(low: int | None, high: int | None) -> dict[str, int | float | None]:
    """Return date_min, date_max and date_mid; a missing bound takes the other's value."""
    low = high if low is None else low
    high = low if high is None else high
    if low is None or high is None:
        return {"date_min": None, "date_max": None, "date_mid": None}
    low, high = min(low, high), max(low, high)
    return {"date_min": low, "date_max": high, "date_mid": (low + high) / 2}


def sorted_files(folder: Path, root: Path, pattern: str) -> list[Path]:
    """The files matching `pattern` under `folder`, sorted by their POSIX path relative to `root`."""
    if not folder.is_dir():
        return []
    return sorted((p for p in folder.rglob(pattern) if p.is_file()), key=lambda p: p.relative_to(root).as_posix())
