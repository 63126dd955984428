"""Fuzzing the QA seed readers: malformed records become rejected rows, bad files one-line errors, never tracebacks.

Records are valid HotpotQA / MuSiQue records with one value replaced by random JSON (or removed); files are
random bytes or random JSON. `synth generate toolforge --input FILE` runs in-process through the CLI app.
"""

from __future__ import annotations

import json
import os
from pathlib import Path
from typing import Any

import pyarrow.parquet as pq
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from toolforge_seed_records import HOTPOT, MUSIQUE
from typer.testing import CliRunner

from synth.cli.app import app
from synth.core.errors import InputError
from synth.core.records import REASON_CODE
from synth.generators.toolforge.seeds import SeedProblem, read_seed_file, seed_files
from synth.validators.toolforge.model import QASeed

FUZZ = settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
JSON_VALUES = st.recursive(
    st.none() | st.booleans() | st.integers() | st.floats(allow_nan=False) | st.text(max_size=12),
    lambda inner: st.lists(inner, max_size=4) | st.dictionaries(st.text(max_size=8), inner, max_size=4),
    max_leaves=12,
)
runner = CliRunner()


def _paths(value: Any, prefix: tuple[Any, ...] = ()) -> list[tuple[Any, ...]]:
    """Every key path inside a JSON value (the value itself first)."""
    out = [prefix]
    if isinstance(value, dict):
        for key, item in value.items():
            out += _paths(item, (*prefix, key))
    elif isinstance(value, list):
        for index, item in enumerate(value):
            out += _paths(item, (*prefix, index))
    return out


@st.composite
def broken_records(draw: st.DrawFn) -> Any:
    """A valid record with the value at one random path replaced by random JSON, or deleted."""
    record = json.loads(json.dumps(draw(st.sampled_from([HOTPOT, MUSIQUE]))))
    path = draw(st.sampled_from(_paths(record)))
    if not path:
        return draw(JSON_VALUES)
    parent = record
    for key in path[:-1]:
        parent = parent[key]
    if isinstance(parent, dict) and draw(st.booleans()):
        del parent[path[-1]]
    else:
        parent[path[-1]] = draw(JSON_VALUES)
    return record


def _check_items(items: list[QASeed | SeedProblem], path: Path) -> None:
    for item in items:
        assert isinstance(item, QASeed | SeedProblem)
        if isinstance(item, SeedProblem):
            assert REASON_CODE.fullmatch(item.code) and item.reason and "\n" not in item.reason
            assert item.path == str(path)


@FUZZ
@given(records=st.lists(broken_records(), min_size=1, max_size=4), jsonl=st.booleans())
def test_broken_records_are_seed_problems_never_exceptions(tmp_path: Path, records: list[Any], jsonl: bool) -> None:
    path = tmp_path / ("seeds.jsonl" if jsonl else "seeds.json")
    lines = "\n".join(json.dumps(r) for r in records) if jsonl else json.dumps(records)
    path.write_text(lines, encoding="utf-8")
    try:
        items = list(read_seed_file(path))
    except InputError as error:  # a JSONL line that is not an object is still a record; only file-level errors
        assert "\n" not in str(error) and str(path) in str(error)
        return
    assert len(items) == len(records)
    _check_items(items, path)


@FUZZ
@given(content=st.binary(max_size=300) | JSON_VALUES.map(lambda v: json.dumps(v).encode()))
def test_any_file_content_is_records_or_a_one_line_error(tmp_path: Path, content: bytes) -> None:
    for name in ("any.json", "any.jsonl"):
        path = tmp_path / name
        path.write_bytes(content)
        try:
            items = list(read_seed_file(path))
        except InputError as error:
            assert "\n" not in str(error) and str(error).startswith(str(path))
            continue
        _check_items(items, path)


def _generate(seed_input: Path, out: Path):
    args = ["generate", "toolforge", "--input", str(seed_input), "--out", str(out), "--no-progress"]
    args += ["--set", "generator.variants_per_family=0", "--set", "generator.dialogues_per_seed=1"]
    return runner.invoke(app, args)


def _assert_clean_exit(result, out: Path) -> None:
    assert result.exit_code in {0, 1, 2, 3}, result.output
    assert result.exception is None or isinstance(result.exception, SystemExit), result.exception
    assert "Traceback" not in result.output
    errors = [line for line in result.output.splitlines() if line.startswith("error: ")]
    assert len(errors) == (1 if result.exit_code else 0), result.output
    if result.exit_code == 2:  # an input refused before anything was written
        assert [line for line in result.output.splitlines() if line.strip()] == errors
        assert not out.exists()


@settings(max_examples=12, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(records=st.lists(broken_records(), min_size=1, max_size=3), binary=st.binary(min_size=1, max_size=64))
def test_the_cli_never_shows_a_traceback_for_broken_seed_files(
    tmp_path_factory: pytest.TempPathFactory, records: list[Any], binary: bytes
) -> None:
    root = tmp_path_factory.mktemp("fuzz")
    (root / "seeds.json").write_text(json.dumps(records), encoding="utf-8")
    result = _generate(root / "seeds.json", root / "out")
    _assert_clean_exit(result, root / "out")
    if result.exit_code in (0, 1):  # 1: every record was rejected
        problems = [i for i in read_seed_file(root / "seeds.json") if isinstance(i, SeedProblem)]
        rejected = pq.read_table(root / "out" / "rejected").to_pylist() if problems else []
        codes = {r["filter_reason"] for r in rejected}
        assert {f"seed:{p.code}" for p in problems} <= codes
    (root / "blob.json").write_bytes(b"\xff" + binary)
    _assert_clean_exit(_generate(root / "blob.json", root / "out-blob"), root / "out-blob")


def test_a_binary_seed_file_is_a_one_line_error(tmp_path: Path) -> None:
    path = tmp_path / "blob.json"
    path.write_bytes(b'[{"_id": "x"}]\n\xff\xfe\x00')
    result = _generate(path, tmp_path / "out")
    assert result.exit_code == 2
    expected = f"error: {path}:2: not UTF-8 text (byte 0xff at offset 15); a seed file is JSON or JSONL"
    assert result.output.strip() == expected
    assert not (tmp_path / "out").exists()


@pytest.mark.skipif(os.name != "posix", reason="POSIX file names are bytes")
def test_a_seed_file_name_that_is_not_utf8_is_a_one_line_error(tmp_path: Path) -> None:
    folder = tmp_path / "seeds"
    folder.mkdir()
    (Path(os.fsdecode(os.fsencode(folder) + b"/bad\xff.json"))).write_text(json.dumps([HOTPOT]), encoding="utf-8")
    with pytest.raises(InputError, match=r"bad\\udcff\.json: the file name is not valid UTF-8; rename the file"):
        seed_files([folder])
    result = _generate(folder, tmp_path / "out")
    assert result.exit_code == 2
    assert result.output.strip() == (
        f"error: {folder}/bad\\udcff.json: the file name is not valid UTF-8; rename the file (its name goes in the "
        "manifest)"
    )
    assert not (tmp_path / "out").exists()
