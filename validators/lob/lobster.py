"""LOBSTER message and orderbook files: tolerant readers and writers of the original format.

Readers accept an optional header row, CRLF line endings, a missing final newline, `.csv.gz` files and any level
count. Writers produce LOBSTER's original layout: no header, LF endings, prices as integers (dollars × 10000).
"""

from __future__ import annotations

import gzip
import io
import math
import zlib
from collections.abc import Iterable, Iterator
from pathlib import Path
from typing import BinaryIO, NamedTuple, TextIO

from synth.core.errors import InputError

MESSAGE_FIELDS = ("time", "type", "order_id", "size", "price", "direction")
LEVEL_FIELDS = ("ask_price", "ask_size", "bid_price", "bid_size")
EMPTY_ASK_PRICE = 9999999999
EMPTY_BID_PRICE = -9999999999
EVENT_TYPES = frozenset(range(1, 8))
INT64_LIMIT = 2**63

# Column names of a rollout row: one list column per LOBSTER message field, and the initial book's orders.
MESSAGE_COLUMNS = ("time", "type", "order_id", "size", "price", "direction")
INITIAL_COLUMNS = (
    "initial_order_id",
    "initial_side",
    "initial_price",
    "initial_size",
    "initial_time",
    "initial_unseen",
)


class LobsterMessage(NamedTuple):
    """One LOBSTER message row; `direction` is −1 sell, +1 buy (the resting side for executions)."""

    time: float
    type: int
    order_id: int
    size: int
    price: int
    direction: int


OrderbookRow = tuple[int, ...]
"""`AskPrice1, AskSize1, BidPrice1, BidSize1, AskPrice2, …`: 4 values per level."""


def _open_bytes(path: Path) -> BinaryIO:
    return gzip.open(path, "rb") if path.suffix == ".gz" else path.open("rb")  # type: ignore[return-value]


def _iter_rows(path: Path, *, what: str) -> Iterator[tuple[int, list[str]]]:
    """Yield (1-based data row, fields), skipping a header row and blank lines; a file without any data row, that
    is not ASCII text or not readable gzip is an `InputError` naming it."""
    try:
        handle = _open_bytes(path)
    except OSError as error:
        msg = f"{path}: cannot open ({error.strerror or error})"
        raise InputError(msg) from None
    row = 0
    try:
        with handle:
            for line_number, raw in enumerate(handle, start=1):
                try:
                    text = raw.decode("ascii").strip()
                except UnicodeDecodeError as error:
                    byte = raw[error.start : error.start + 1].hex()
                    msg = (
                        f"{path}: line {line_number}: byte 0x{byte} is not ASCII text; "
                        f"a LOBSTER {what} file holds comma-separated numbers"
                    )
                    raise InputError(msg) from None
                if not text:
                    continue
                fields = text.split(",")
                if line_number == 1 and not _looks_numeric(fields[0]):
                    continue
                row += 1
                yield row, fields
    except (OSError, EOFError, zlib.error) as error:
        msg = f"{path}: not a readable {'gzip' if path.suffix == '.gz' else 'text'} file ({error})"
        raise InputError(msg) from None
    if not row:
        msg = f"{path}: no {what} rows (the file is empty or holds only a header); give a LOBSTER {what} file"
        raise InputError(msg)


def _looks_numeric(text: str) -> bool:
    try:
        float(text)
    except ValueError:
        return False
    return True


def _bad(path: Path, row: int, field: str, problem: str) -> InputError:
    return InputError(f"{path}: row {row}, field `{field}`: {problem}")


def _to_int(text: str, *, path: Path, row: int, field: str) -> int:
    try:
        value: float = int(text)
    except ValueError:
        try:
            value = float(text)
        except ValueError:
            raise _bad(path, row, field, f"not a number ({text.strip()[:40]!r})") from None
        if not value.is_integer():
            raise _bad(path, row, field, f"not an integer ({text.strip()[:40]!r})") from None
    if not -INT64_LIMIT < value < INT64_LIMIT:
        raise _bad(path, row, field, f"{text.strip()[:40]} is outside the 64-bit integer range")
    return int(value)


def read_messages(path: str | Path) -> list[LobsterMessage]:
    """Read a LOBSTER message file.

    Raises:
        InputError: one line naming the file, the 1-based data row and the field, for a wrong column count, a
            non-numeric value, an unknown event type, a negative size, a direction other than ±1 or a time before
            the previous row's; or naming the file when it holds no message rows or is not ASCII text.

    Example:
        >>> from synth.generators.lob import SAMPLE_DIR
        >>> read_messages(SAMPLE_DIR / "AAPL_2012-06-21_34200000_57600000_message_10.csv")[0].size
        18
    """
    path = Path(path)
    messages: list[LobsterMessage] = []
    append = messages.append
    previous = -math.inf
    for row, fields in _iter_rows(path, what="message"):
        if len(fields) != len(MESSAGE_FIELDS):
            raise _bad(path, row, "*", f"expected {len(MESSAGE_FIELDS)} columns, found {len(fields)}")
        try:
            time = float(fields[0])
        except ValueError:
            raise _bad(path, row, "time", f"not a number ({fields[0].strip()[:40]!r})") from None
        if not math.isfinite(time):
            raise _bad(path, row, "time", f"not a finite number ({fields[0].strip()[:40]!r})")
        if time < previous:
            problem = (
                f"{format_time(time)} is before row {row - 1}'s {format_time(previous)}; LOBSTER rows are in time order"
            )
            raise _bad(path, row, "time", problem)
        previous = time
        event, order_id, size, price, direction = (
            _to_int(text, path=path, row=row, field=name)
            for text, name in zip(fields[1:], MESSAGE_FIELDS[1:], strict=True)
        )
        if event not in EVENT_TYPES:
            raise _bad(path, row, "type", f"unknown event type {event} (expected 1..7)")
        if size < 0:
            raise _bad(path, row, "size", f"negative size {size}")
        if direction not in (-1, 1):
            raise _bad(path, row, "direction", f"direction {direction} is not -1 or 1")
        append(LobsterMessage(time, event, order_id, size, price, direction))
    return messages


def read_orderbook(path: str | Path) -> list[OrderbookRow]:
    """Read a LOBSTER orderbook file; the level count is taken from the column count (4 per level).

    Raises:
        InputError: one line naming the file, row and field for a column count that is not a positive multiple of
            4 or differs from the first row, a non-numeric value or a negative size; or naming the file when it
            holds no rows or is not ASCII text.
    """
    path = Path(path)
    rows: list[OrderbookRow] = []
    width = 0
    for row, fields in _iter_rows(path, what="orderbook"):
        if not width:
            width = len(fields)
            if width % 4:
                raise _bad(path, row, "*", f"expected a multiple of 4 columns, found {width}")
        elif len(fields) != width:
            raise _bad(path, row, "*", f"expected {width} columns, found {len(fields)}")
        values = [
            _to_int(text, path=path, row=row, field=f"{LEVEL_FIELDS[index % 4]}{index // 4 + 1}")
            for index, text in enumerate(fields)
        ]
        for index in range(1, width, 2):
            if values[index] < 0:
                field = f"{LEVEL_FIELDS[index % 4]}{index // 4 + 1}"
                raise _bad(path, row, field, f"negative size {values[index]}")
        rows.append(tuple(values))
    return rows


def format_time(time: float) -> str:
    """Seconds after midnight as LOBSTER writes them: shortest exact decimal, no trailing zeros."""
    text = repr(time)
    return text[:-2] if text.endswith(".0") else text


def _open_for_writing(path: Path) -> TextIO:
    if path.suffix == ".gz":
        return io.TextIOWrapper(gzip.open(path, "wb"), encoding="ascii", newline="\n")
    return path.open("w", encoding="ascii", newline="\n")


def write_messages(messages: Iterable[LobsterMessage], *, path: str | Path) -> int:
    """Write messages in LOBSTER's original format (no header, LF); returns the number of rows."""
    count = 0
    with _open_for_writing(Path(path)) as handle:
        for time, event, order_id, size, price, direction in messages:
            handle.write(f"{format_time(time)},{event},{order_id},{size},{price},{direction}\n")
            count += 1
    return count


def write_orderbook(rows: Iterable[OrderbookRow], *, path: str | Path) -> int:
    """Write orderbook rows in LOBSTER's original format (no header, LF); returns the number of rows."""
    count = 0
    with _open_for_writing(Path(path)) as handle:
        for values in rows:
            handle.write(",".join(map(str, values)) + "\n")
            count += 1
    return count
