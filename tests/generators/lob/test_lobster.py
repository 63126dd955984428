"""LOBSTER readers and writers: tolerant parsing, one-line errors, exact round trips."""

import gzip

import pytest

from synth.core.errors import InputError
from synth.generators.lob import (
    SAMPLE_DIR,
    LobsterMessage,
    read_messages,
    read_orderbook,
    write_messages,
    write_orderbook,
)

AAPL = SAMPLE_DIR / "AAPL_2012-06-21_34200000_57600000"
AMZN = SAMPLE_DIR / "AMZN_2012-06-21_34200000_57600000"


def test_reads_the_original_format_at_ten_levels():
    messages = read_messages(f"{AAPL}_message_10.csv")
    rows = read_orderbook(f"{AAPL}_orderbook_10.csv")
    assert len(messages) == len(rows) == 999
    assert messages[0] == LobsterMessage(34200.004241176, 1, 16113575, 18, 5853300, 1)
    assert len(rows[0]) == 40
    assert rows[0][2:4] == (5853300, 18)


def test_reads_a_header_and_crlf_at_one_level():
    messages = read_messages(f"{AMZN}_message_1.csv")
    rows = read_orderbook(f"{AMZN}_orderbook_1.csv")
    assert len(messages) == len(rows) == 57515
    assert messages[0] == LobsterMessage(34200.01746, 5, 0, 1, 2238200, -1)
    assert rows[1] == (2239500, 100, 2238100, 21)


@pytest.mark.parametrize("name", ["AAPL_2012-06-21_34200000_57600000", "AMZN_2012-06-21_34200000_57600000"])
def test_write_then_read_is_identical(tmp_path, name):
    level = 10 if name.startswith("AAPL") else 1
    messages = read_messages(SAMPLE_DIR / f"{name}_message_{level}.csv")
    rows = read_orderbook(SAMPLE_DIR / f"{name}_orderbook_{level}.csv")
    assert write_messages(messages, path=tmp_path / "m.csv") == len(messages)
    write_orderbook(rows, path=tmp_path / "o.csv")
    assert read_messages(tmp_path / "m.csv") == messages
    assert read_orderbook(tmp_path / "o.csv") == rows


def test_writer_reproduces_the_original_aapl_bytes(tmp_path):
    # The shipped AAPL files were truncated by their source and lack only the final newline.
    write_messages(read_messages(f"{AAPL}_message_10.csv"), path=tmp_path / "m.csv")
    write_orderbook(read_orderbook(f"{AAPL}_orderbook_10.csv"), path=tmp_path / "o.csv")
    assert (tmp_path / "m.csv").read_bytes().rstrip(b"\n") == (SAMPLE_DIR / f"{AAPL.name}_message_10.csv").read_bytes()
    assert (tmp_path / "o.csv").read_bytes().rstrip(b"\n") == (
        SAMPLE_DIR / f"{AAPL.name}_orderbook_10.csv"
    ).read_bytes()


def test_gzip_is_read_transparently(tmp_path):
    path = tmp_path / "m.csv.gz"
    path.write_bytes(gzip.compress(b"Time,Type,OrderId,Size,Price,Direction\r\n1.5,1,7,100,5000,1"))
    assert read_messages(path) == [LobsterMessage(1.5, 1, 7, 100, 5000, 1)]


@pytest.mark.parametrize(
    ("text", "row", "field"),
    [
        ("1.0,1,7,100,5000,1\n1.0,1,8,100,5000\n", 2, "*"),
        ("1.0,1,7,abc,5000,1\n", 1, "size"),
        ("x1.0,1,7,100,5000,1\n1.0,1,8,100,5000,1\n2.0,1,9,100,5000,1\nbad,1,9,100,5000,1\n", 3, "time"),
        ("1.0,9,7,100,5000,1\n", 1, "type"),
        ("1.0,1,7,-5,5000,1\n", 1, "size"),
        ("1.0,1,7,5,5000,0\n", 1, "direction"),
    ],
)
def test_malformed_message_rows_give_one_line_errors(tmp_path, text, row, field):
    path = tmp_path / "bad.csv"
    path.write_text(text)
    with pytest.raises(InputError) as caught:
        read_messages(path)
    message = str(caught.value)
    assert "\n" not in message
    assert str(path) in message
    assert f"row {row}," in message
    assert f"field `{field}`" in message


@pytest.mark.parametrize(
    ("text", "field"),
    [
        ("1,2,3\n", "*"),
        ("1,2,3,4\n1,2,3,4,5,6,7,8\n", "*"),
        ("1,2,3,x\n", "bid_size1"),
        ("1,2,3,4,5,-6,7,8\n", "ask_size2"),
    ],
)
def test_malformed_orderbook_rows_give_one_line_errors(tmp_path, text, field):
    path = tmp_path / "book.csv"
    path.write_text(text)
    with pytest.raises(InputError, match=rf"^{path}: row \d+, field `{field}`: [^\n]+$".replace("*", r"\*")):
        read_orderbook(path)


def test_missing_file_is_an_input_error(tmp_path):
    with pytest.raises(InputError, match="cannot open"):
        read_messages(tmp_path / "nope.csv")


@pytest.mark.parametrize("content", [b"", b"\n\r\n  \n", b"Time,Type,OrderId,Size,Price,Direction\r\n"])
@pytest.mark.parametrize("reader", [read_messages, read_orderbook])
def test_a_file_without_rows_is_a_one_line_error_naming_it(tmp_path, content, reader):
    path = tmp_path / "empty.csv"
    path.write_bytes(content)
    what = "message" if reader is read_messages else "orderbook"
    with pytest.raises(InputError) as caught:
        reader(path)
    assert str(caught.value) == (
        f"{path}: no {what} rows (the file is empty or holds only a header); give a LOBSTER {what} file"
    )


def test_a_time_before_the_previous_row_is_refused_with_both_times(tmp_path):
    path = tmp_path / "m.csv"
    path.write_text("1.0,1,5,100,5000,1\n2.25,3,5,100,5000,1\n2.25,1,6,10,4000,1\n0.5,1,7,10,4000,1\n")
    with pytest.raises(InputError) as caught:
        read_messages(path)
    assert str(caught.value) == (
        f"{path}: row 4, field `time`: 0.5 is before row 3's 2.25; LOBSTER rows are in time order"
    )


@pytest.mark.parametrize(
    ("content", "expected"),
    [
        (b"1.0,1,7,100,5000,1\n\xff\xfe,1\n", "line 2: byte 0xff is not ASCII text"),
        (b"nan,1,7,100,5000,1\n", "row 1, field `time`: not a finite number ('nan')"),
        (b"1.0,1,7,1e30,5000,1\n", "row 1, field `size`: 1e30 is outside the 64-bit integer range"),
    ],
)
def test_binary_and_out_of_range_values_are_one_line_errors(tmp_path, content, expected):
    path = tmp_path / "m.csv"
    path.write_bytes(content)
    with pytest.raises(InputError) as caught:
        read_messages(path)
    assert str(caught.value).startswith(f"{path}: {expected}") and "\n" not in str(caught.value)


def test_a_broken_gzip_file_is_a_one_line_error(tmp_path):
    path = tmp_path / "m.csv.gz"
    path.write_bytes(gzip.compress(b"1.0,1,7,100,5000,1\n" * 50)[:-12])
    with pytest.raises(InputError, match=rf"^{path}: not a readable gzip file \("):
        read_messages(path)
    path.write_bytes(b"not gzip at all")
    with pytest.raises(InputError, match=rf"^{path}: not a readable gzip file \("):
        read_messages(path)
