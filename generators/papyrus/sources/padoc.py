"""Read the PaDoc dating corpus (``padoc/padoc389.csv`` and ``padoc/in_the_wild.csv``), one document per row.

The text is ``text_raw`` (papyri.info's reading text, accents and line breaks) through `normalise_greek`.
Unlike the EpiDoc and treebank sources it is not stripped by us: it is papyri.info's rendering, which
keeps the editor's restorations and expansions and may run a regularised and an original spelling
together (``τραπεζίτῃτραπεζείτῃ``). Labels are only the TM id and the date; all texts are documentary
(``literary=False``), with no document type, place, title or HGV id.

Dates:

- ``padoc389.csv``: ``date`` is in centuries on a quarter-century grid (``-2.5`` … ``6.75``). Each value is
  the upper end of the quarter-century holding the text's date: value ``v`` covers the years
  ``100·v − 24`` … ``100·v`` (``0.75`` → 51–75 CE, ``-1.25`` → 149–125 BCE, ``0.0`` → 24–1 BCE). This
  reading, ``v = ceil(year / 25) / 4``, fits every text that PaDoc shares with the PapyGreek treebanks and
  the EpiDoc sample; rounding to the nearest quarter does not.
- ``in_the_wild.csv``: only an upper limit is known (``Date_notAfter``), so ``date_max`` is that year and
  ``date_min``/``date_mid`` are None. The ``committee_*`` columns are model estimates and are not used.

Rows are numbered from 1 (the first row after the header); ``path`` is ``padoc/<file>.csv#row=<n>``.
"""

from __future__ import annotations

import csv
import functools
import io
import math
from dataclasses import dataclass
from pathlib import Path

from synth.generators.papyrus.corpus import PapyrusDocument, parse_year
from synth.generators.papyrus.epidoc import (
    MAX_DOCUMENT_BYTES,
    EpiDocError,
    check_file_size,
    normalise_greek,
    read_file_bytes,
)
from synth.generators.papyrus.sources.base import (
    CORPORA_ROOT,
    SourceEntry,
    date_fields,
    sorted_files,
    split_tms,
)

__all__ = ["FOLDER", "list_padoc", "quarter_century_span", "read_padoc"]

#: The folder of the PaDoc CSV files under the corpora root.
FOLDER = "padoc"

_FRAGMENT = "#row="


@dataclass(frozen=True, slots=True)
class _Layout:
    """The columns of one kind of PaDoc file."""

    tm: str
    date: str
    upper_bound_only: bool


_LAYOUTS = (
    _Layout(tm="tm", date="date", upper_bound_only=False),
    _Layout(tm="TM_Number", date="Date_notAfter", upper_bound_only=True),
)
_TEXT = "text_raw"


@dataclass(frozen=True, slots=True)
class _Table:
    layout: _Layout
    rows: tuple[dict[str, str], ...]


def list_padoc(root: Path = CORPORA_ROOT, *, max_bytes: int | None = MAX_DOCUMENT_BYTES) -> list[SourceEntry]:
    """List every row of the CSV files under `root` (files in path order), with the row's TM id.

    A file that cannot be read, has unknown columns or is larger than `max_bytes` (the limit applies to the
    whole file) is listed once without a row so that reading it reports the error.
    """
    root = Path(root)
    entries: list[SourceEntry] = []
    for path in sorted_files(root / FOLDER, root, "*.csv"):
        rel = path.relative_to(root).as_posix()
        try:
            table = _read_table(path, rel, max_bytes)
        except EpiDocError:
            entries.append(SourceEntry(rel, ()))
            continue
        for number, row in enumerate(table.rows, start=1):
            entries.append(SourceEntry(f"{rel}{_FRAGMENT}{number}", split_tms(row.get(table.layout.tm))))
    return entries


def read_padoc(
    root: Path,
    locator: str,
    *,
    keep_deleted: bool = False,
    scriptio_continua: bool = False,
    max_bytes: int | None = MAX_DOCUMENT_BYTES,
) -> PapyrusDocument | EpiDocError:
    """Read one row; `locator` is ``<file relative to root>#row=<n>`` (a file of at most `max_bytes` bytes).

    `keep_deleted` has no effect here.

    Example:
        >>> doc = read_padoc(CORPORA_ROOT, "padoc/padoc389.csv#row=1")
        >>> doc.doc_id, doc.date_min, doc.date_max, doc.text.split("\\n")[0]
        ('padoc:1017', -224, -200, 'ετουσ ιϛ πανημου εμβολιμου')
    """
    del keep_deleted  # the text comes without deletions marked
    rel, _, number = locator.partition(_FRAGMENT)
    try:
        table = _read_table(Path(root) / rel, rel, max_bytes)
    except EpiDocError as error:
        return error
    if not number.isdigit() or not 1 <= int(number) <= len(table.rows):
        reason = f"no row {number or '(none)'} (the file has {len(table.rows)} rows)"
        return EpiDocError(locator, reason, code="no_such_document")
    row = table.rows[int(number) - 1]
    tm = (row.get(table.layout.tm) or "").strip()
    if not tm.isdigit():
        reason = f"bad `{table.layout.tm}` value {tm!r} (expected a Trismegistos number)"
        return EpiDocError(locator, reason, code="bad_tm_id")
    try:
        dates = _dates(row.get(table.layout.date) or "", table.layout)
    except ValueError as error:
        return EpiDocError(locator, str(error), code="bad_date")
    text = normalise_greek(row.get(_TEXT) or "", scriptio_continua=scriptio_continua)
    if not text:
        return EpiDocError(locator, f"empty `{_TEXT}` (no Greek letters)", code="no_text")
    return PapyrusDocument(
        doc_id=f"padoc:{tm}",
        source="padoc",
        path=locator,
        text=text,
        tm=tm,
        hgv=(),
        title=None,
        place=None,
        literary=False,
        doctype=None,
        subtype=None,
        genre_raw=None,
        **dates,
    )


def quarter_century_span(value: float) -> tuple[int, int]:
    """Return the years (BCE negative, no year 0) of the quarter-century whose upper end is ``100·value``.

    Example:
        >>> quarter_century_span(0.75), quarter_century_span(-1.25), quarter_century_span(0.0)
        ((51, 75), (-149, -125), (-24, -1))
    """
    if not math.isfinite(value):
        msg = f"date {value} is not a number"
        raise ValueError(msg)
    high = round(value * 100)
    low = high - 24
    return low, (-1 if high == 0 else high)


def _dates(raw: str, layout: _Layout) -> dict[str, int | float | None]:
    raw = raw.strip()
    if not raw:
        return date_fields(None, None)
    if layout.upper_bound_only:
        year = parse_year(raw)
        if year is None:
            msg = f"bad `{layout.date}` value {raw!r} (expected an ISO date such as 0153-01-31)"
            raise ValueError(msg)
        return {"date_min": None, "date_max": year, "date_mid": None}
    try:
        low, high = quarter_century_span(float(raw))
    except ValueError:
        msg = f"bad `{layout.date}` value {raw!r} (expected centuries such as -2.5)"
        raise ValueError(msg) from None
    return date_fields(low, high)


def _read_table(path: Path, rel: str, max_bytes: int | None) -> _Table:
    try:
        stat = path.stat()
    except OSError as exc:
        raise EpiDocError(rel, f"cannot read file: {exc.strerror or exc}", code="unreadable_file") from exc
    check_file_size(rel, stat.st_size, max_bytes=max_bytes)
    return _read_table_cached(str(path), rel, stat.st_mtime_ns, stat.st_size, max_bytes)


@functools.lru_cache(maxsize=8)
def _read_table_cached(path: str, rel: str, mtime_ns: int, size: int, max_bytes: int | None) -> _Table:
    """Read a PaDoc CSV file, cached by path and file stamp."""
    del mtime_ns, size  # part of the cache key only
    data = read_file_bytes(Path(path), rel, max_bytes=max_bytes)
    try:
        reader = csv.DictReader(io.StringIO(data.decode("utf-8"), newline=""))
        rows = tuple(reader)
        columns = set(reader.fieldnames or ())
    except (UnicodeDecodeError, csv.Error) as exc:
        raise EpiDocError(rel, f"cannot read CSV: {exc}", code="invalid_csv") from exc
    for layout in _LAYOUTS:
        if {layout.tm, layout.date, _TEXT} <= columns:
            return _Table(layout, rows)
    msg = f"unknown columns {sorted(columns)} (expected tm, date, text_raw or TM_Number, Date_notAfter, text_raw)"
    raise EpiDocError(rel, msg, code="unknown_columns")
