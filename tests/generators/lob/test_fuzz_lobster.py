"""Fuzzing the LOBSTER readers and `synth lob replay`: any bytes give rows or one line naming the file, never a
traceback; what the readers accept is in time order, finite and within int64."""

from __future__ import annotations

import math
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from typer.testing import CliRunner

from synth.cli.app import app
from synth.core.errors import InputError
from synth.generators.lob import read_messages, read_orderbook
from synth.validators.lob.fast_replay import NUMBA_AVAILABLE
from synth.validators.lob.lobster import INT64_LIMIT

FUZZ = settings(max_examples=80, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
TOKENS = st.one_of(
    st.integers(-5, 12).map(str),
    st.integers(-(2**70), 2**70).map(str),
    st.floats(allow_nan=True, allow_infinity=True).map(repr),
    st.sampled_from(["", " ", "nan", "inf", "-inf", "1e30", "1.5", "0x10", "1,0", "abc", "\x00", "é", "9999999999"]),
)
LINES = st.lists(TOKENS, min_size=1, max_size=8).map(",".join)
TEXTS = st.builds(
    lambda header, lines, newline: (header + newline if header else "") + newline.join(lines),
    st.sampled_from(["", "Time,Type,OrderId,Size,Price,Direction", "AskPrice1,AskSize1,BidPrice1,BidSize1"]),
    st.lists(LINES, max_size=12),
    st.sampled_from(["\n", "\r\n"]),
)
CONTENTS = st.one_of(st.binary(max_size=200), TEXTS.map(lambda text: text.encode("utf-8")))
runner = CliRunner()


def _one_line_naming(error: InputError, path: Path) -> None:
    message = str(error)
    assert "\n" not in message and message.startswith(f"{path}: ")


@FUZZ
@given(content=CONTENTS)
def test_message_reader_gives_ordered_finite_rows_or_one_line(tmp_path: Path, content: bytes) -> None:
    path = tmp_path / "m.csv"
    path.write_bytes(content)
    try:
        messages = read_messages(path)
    except InputError as error:
        _one_line_naming(error, path)
        return
    assert messages
    times = [m.time for m in messages]
    assert all(math.isfinite(t) for t in times) and times == sorted(times)
    assert all(abs(v) < INT64_LIMIT for m in messages for v in (m.order_id, m.size, m.price))


@FUZZ
@given(content=CONTENTS)
def test_orderbook_reader_gives_rows_of_one_width_or_one_line(tmp_path: Path, content: bytes) -> None:
    path = tmp_path / "o.csv"
    path.write_bytes(content)
    try:
        rows = read_orderbook(path)
    except InputError as error:
        _one_line_naming(error, path)
        return
    assert rows and len({len(r) for r in rows}) == 1 and len(rows[0]) % 4 == 0


@settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(
    messages=CONTENTS,
    orderbook=st.none() | CONTENTS,
    engine=st.sampled_from(["python", "numba"] if NUMBA_AVAILABLE else ["python"]),
)
def test_replay_never_shows_a_traceback(tmp_path: Path, messages: bytes, orderbook: bytes | None, engine: str) -> None:
    message_file = tmp_path / "X_2012-01-01_0_1_message_1.csv"
    message_file.write_bytes(messages)
    args = ["lob", "replay", str(message_file), "--engine", engine]
    if orderbook is None:
        args.append("--no-orderbook")
    else:
        (tmp_path / "book.csv").write_bytes(orderbook)
        args += ["--orderbook", str(tmp_path / "book.csv")]
    result = runner.invoke(app, args)
    assert result.exception is None or isinstance(result.exception, SystemExit), repr(result.exception)
    assert result.exit_code in {0, 1, 2}, result.output
    assert "Traceback" not in result.output
    if result.exit_code == 2:
        lines = [line for line in result.output.splitlines() if line.strip()]
        assert len(lines) == 1 and lines[0].startswith("error: "), result.output


@pytest.mark.parametrize("content", [b"", b"\xff\xfe\xfd", b"Time,Type,OrderId,Size,Price,Direction\n"])
def test_a_generation_run_on_an_unusable_day_writes_nothing(tmp_path: Path, content: bytes) -> None:
    day = tmp_path / "X_2012-01-01_0_1_message_1.csv"
    day.write_bytes(content)
    (tmp_path / "X_2012-01-01_0_1_orderbook_1.csv").write_text("5100,1,5000,100\n")
    out = tmp_path / "out"
    args = ["generate", "lob", "--out", str(out), "--set", f"generator.messages={day}", "--no-progress"]
    result = runner.invoke(app, args)
    assert result.exit_code == 2
    lines = [line for line in result.output.splitlines() if line.strip()]
    assert len(lines) == 1 and lines[0].startswith(f"error: {day}: ")
    assert not out.exists()
