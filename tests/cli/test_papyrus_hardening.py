"""Hostile and careless inputs to the papyrus commands: relative inputs, oversized files, damaged model folders.

Everything runs through the real `synth` app (typer's test runner). A failure must be one `error:` line with exit
code 1, 2 or 3, never a traceback, and `synth train papyrus eval` must leave the model folder as it found it.
"""

from __future__ import annotations

import hashlib
import json
import os
import shutil
import tempfile
from pathlib import Path
from typing import Any

import psutil
import pyarrow.parquet as pq
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from typer.testing import CliRunner

from synth.cli.app import app
from synth.generators.papyrus.corpus import SAMPLE_ROOT
from synth.generators.papyrus.epidoc import MAX_DOCUMENT_BYTES

runner = CliRunner()
SMALL = ["--set", "generator.levels=[0.05]", "--set", "generator.variants=[uniform]"]
SMALL += ["--set", "generator.sources=[epidoc]", "--no-progress"]
TEI_NS = "http://www.tei-c.org/ns/1.0"
CHARCNN_TOY = ["embedding_dim=8", "filters=8", "max_chars=64", "epochs=1", "batch_size=8", "threads=1"]


def invoke(*args: object) -> Any:
    return runner.invoke(app, [str(arg) for arg in args])


def assert_clean_failure(result: Any, codes: set[int] = frozenset({1, 2, 3})) -> str:
    """No traceback escaped; the error is one `error:` line; return it."""
    assert result.exception is None or isinstance(result.exception, SystemExit), result.exception
    assert result.exit_code in codes, result.output
    lines = result.stderr.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith("error: "), result.stderr
    return lines[0]


# --- generation: the input root and the size limit ---------------------------------------------------------


def test_a_relative_input_generates_from_every_file(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    shutil.copytree(SAMPLE_ROOT, tmp_path / "corpus")
    monkeypatch.chdir(tmp_path)
    result = invoke("generate", "papyrus", "--input", "corpus", "--out", tmp_path / "x", *SMALL)
    assert result.exit_code == 0, result.output
    kept = pq.read_table(tmp_path / "x" / "data")
    rejected = pq.read_table(tmp_path / "x" / "rejected")
    assert kept.num_rows > 0
    assert set(rejected.column("filter_reason").to_pylist()) <= {"too_short_for_level"}
    absolute = invoke("generate", "papyrus", "--input", tmp_path / "corpus", "--out", tmp_path / "y", *SMALL)
    assert absolute.exit_code == 0, absolute.output
    assert kept.select(["id", "text_noisy"]) == pq.read_table(tmp_path / "y" / "data").select(["id", "text_noisy"])


def test_an_oversized_document_is_a_rejected_row_naming_the_file_and_sizes(tmp_path: Path) -> None:
    corpus = Path(shutil.copytree(SAMPLE_ROOT, tmp_path / "corpus"))
    big = corpus / "DDB_EpiDoc_XML" / "p.big" / "p.big.1.xml"
    big.parent.mkdir(parents=True)
    head = f'<TEI xmlns="{TEI_NS}"><text><body><div type="edition"><ab>'.encode()
    big.write_bytes(head + "α".encode() * (MAX_DOCUMENT_BYTES // 2 + 1))  # one line, 8 MiB, no closing tags
    size = big.stat().st_size
    result = invoke("generate", "papyrus", "--input", corpus, "--out", tmp_path / "x", *SMALL)
    assert result.exit_code == 0, result.output
    rejected = pq.read_table(tmp_path / "x" / "rejected").to_pylist()
    (row,) = [r for r in rejected if r["filter_reason"] == "document_too_large"]
    assert (row["source"], row["path"]) == ("epidoc", "DDB_EpiDoc_XML/p.big/p.big.1.xml")
    assert row["filter_detail"] == (
        f"epidoc: DDB_EpiDoc_XML/p.big/p.big.1.xml: file is {size:,} bytes, over the {MAX_DOCUMENT_BYTES:,}-byte "
        "limit; raise `generator.max_document_bytes` to read it"
    )
    assert pq.read_table(tmp_path / "x" / "data").num_rows > 0
    raised = invoke("generate", "papyrus", "--input", corpus, "--out", tmp_path / "y", *SMALL, "--set",
                    f"generator.max_document_bytes={size}")  # fmt: skip
    assert raised.exit_code == 0, raised.output
    assert "document_too_large" not in pq.read_table(tmp_path / "y" / "rejected").column("filter_reason").to_pylist()


def test_a_bad_size_limit_is_a_config_error(tmp_path: Path) -> None:
    result = invoke("generate", "papyrus", "--out", tmp_path / "x", *SMALL, "--set", "generator.max_document_bytes=0")
    line = assert_clean_failure(result, {2})
    assert "field `generator.max_document_bytes`" in line and "greater than 0" in line


@pytest.mark.parametrize(
    ("option", "message"),
    [
        (["--retrain", "0.05,x"], "error: --retrain: 'x' is not a number; expected CER levels such as 0.05,0.1,0.2"),
        (["--search", "exact,nope"], "error: --search: unknown search method 'nope'; choose from exact, normalised"),
    ],
)
def test_study_options_are_checked_before_any_work(tmp_path: Path, option: list[str], message: str) -> None:
    line = assert_clean_failure(invoke("study", "papyrus", "--out", tmp_path / "s", *option), {2})
    assert line.startswith(message)
    assert not (tmp_path / "s").exists()


# --- model folders -----------------------------------------------------------------------------------------


@pytest.fixture(scope="module")
def trained(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Path]:
    root = tmp_path_factory.mktemp("papyrus-models")
    dataset = root / "dataset"
    generate = invoke("generate", "papyrus", "--out", dataset, "--set", "generator.levels=[0.05, 0.2]", *SMALL[2:])
    assert generate.exit_code == 0, generate.output
    folders = {"dataset": dataset}
    for kind, params in (("tfidf", []), ("charcnn", CHARCNN_TOY)):
        folders[kind] = root / kind
        args = ["train", "papyrus", "fit", dataset, "--task", "doctype", "--model", kind, "--eval-cers", "0,0.05"]
        fit = invoke(*args, *(f"--param={p}" for p in params), "--out", folders[kind], "--json")
        assert fit.exit_code == 0, fit.output
    return folders


def snapshot(folder: Path) -> dict[str, str]:
    """Every entry under `folder` with its kind and content hash (links by target), to see that nothing changed."""
    entries = {}
    for path in sorted(folder.rglob("*")):
        if path.is_symlink():
            entries[str(path)] = f"link:{os.readlink(path)}"
        elif path.is_file():
            entries[str(path)] = hashlib.sha256(path.read_bytes()).hexdigest()
        else:
            entries[str(path)] = "dir"
    return entries


def json_paths(value: Any, prefix: tuple = ()) -> list[tuple]:
    """The key paths of a JSON value (dict keys and list positions), outermost first."""
    paths = [prefix] if prefix else []
    if isinstance(value, dict):
        for key, item in value.items():
            paths += json_paths(item, (*prefix, key))
    elif isinstance(value, list):
        for index, item in enumerate(value[:3]):
            paths += json_paths(item, (*prefix, index))
    return paths


JSON_VALUES = st.recursive(
    st.none() | st.booleans() | st.integers() | st.floats() | st.text(max_size=12),
    lambda inner: st.lists(inner, max_size=3) | st.dictionaries(st.text(max_size=8), inner, max_size=3),
    max_leaves=8,
)
HOSTILE_PATHS = st.sampled_from(
    ["../training.json", "/etc/passwd", "/dev/zero", "a/../../b", "", ".", "model.json", "~/x", "\x00", "🜁" * 300]
)
LINK_TARGETS = st.sampled_from(["/dev/zero", "/etc/passwd", "..", "../dataset/manifest.json", "missing"])


def mutations(files: list[str], fields: dict[str, list[tuple]]) -> st.SearchStrategy:
    json_files = st.sampled_from(sorted(fields))
    field = json_files.flatmap(lambda name: st.tuples(st.just(name), st.sampled_from(fields[name])))
    return st.one_of(
        st.tuples(st.just("bytes"), st.sampled_from(files), st.binary(max_size=200)),
        st.tuples(st.just("truncate"), st.sampled_from(files), st.integers(0, 4000)),
        st.tuples(st.just("delete"), st.sampled_from(files)),
        st.tuples(st.just("link"), st.sampled_from(files), LINK_TARGETS),
        st.tuples(st.just("json"), json_files, JSON_VALUES),
        st.tuples(st.just("field"), field, JSON_VALUES),
        st.tuples(st.just("field"), st.tuples(st.just("model.json"), st.sampled_from(fields["state"])), HOSTILE_PATHS),
    )


def apply(folder: Path, mutation: tuple) -> None:
    kind, target, *rest = mutation
    if kind == "field":
        (name, key_path), value = target, rest[0]
        name = "model.json" if name == "state" else name
        path = folder / name
        if path.is_symlink() or not path.is_file():
            return  # an earlier mutation replaced the file (reading a link to /dev/zero would never end)
        try:
            data = json.loads(path.read_text(encoding="utf-8"))
            node = data
            for key in key_path[:-1]:
                node = node[key]
            node[key_path[-1]] = value
        except (OSError, ValueError, KeyError, IndexError, TypeError):
            return  # an earlier mutation removed or broke this file
        path.write_text(json.dumps(data), encoding="utf-8")
        return
    path = folder / target
    if path.is_symlink() or path.exists():
        if path.is_dir() and not path.is_symlink():
            shutil.rmtree(path)
        else:
            path.unlink()
    if kind == "bytes":
        path.write_bytes(rest[0])
    elif kind == "truncate":
        original = (folder.parent / "original" / target).read_bytes()
        path.write_bytes(original[: rest[0]])
    elif kind == "link":
        path.symlink_to(rest[0])
    elif kind == "json":
        path.write_text(json.dumps(rest[0]), encoding="utf-8")


def fuzz_model_folder(trained: dict[str, Path], kind: str) -> None:
    base = trained[kind]
    files = sorted(p.name for p in base.iterdir() if p.is_file())
    fields = {name: json_paths(json.loads((base / name).read_text())) for name in ("model.json", "training.json")}
    fields["metrics.json"] = [("results",), ("results", 0), ("results", 0, "cer"), ("measurable",), ("reason",)]
    fields["state"] = [("state", key) for key in json.loads((base / "model.json").read_text())["state"]]
    baseline_rss = psutil.Process().memory_info().rss

    @settings(max_examples=30, deadline=None, suppress_health_check=list(HealthCheck))
    @given(steps=st.lists(mutations(files, fields), min_size=1, max_size=3))
    def run(steps: list[tuple]) -> None:
        with tempfile.TemporaryDirectory() as scratch:
            shutil.copytree(base, Path(scratch) / "original")
            folder = Path(shutil.copytree(base, Path(scratch) / "model"))
            for step in steps:
                apply(folder, step)
            before = snapshot(Path(scratch))
            result = invoke("train", "papyrus", "eval", folder, trained["dataset"], "--json")
            if result.exit_code == 0:
                assert result.exception is None
                assert json.loads(result.stdout)["task"]
            else:
                assert_clean_failure(result)
            assert snapshot(Path(scratch)) == before  # eval writes nothing, not even a temp file
        assert psutil.Process().memory_info().rss < baseline_rss + (2 << 30)

    run()


def test_a_damaged_tfidf_folder_fails_cleanly(trained: dict[str, Path]) -> None:
    fuzz_model_folder(trained, "tfidf")


def test_a_damaged_charcnn_folder_fails_cleanly(trained: dict[str, Path]) -> None:
    fuzz_model_folder(trained, "charcnn")


@pytest.mark.parametrize(
    ("edit", "message"),
    [
        ({"format": "synth-papyrus-model/1"}, "field `format` is 'synth-papyrus-model/1', a model saved as a pickle"),
        ({"state": {"vocabulary": "/etc/passwd"}}, "field `state.vocabulary` is '/etc/passwd', outside the model"),
        ({"objective": "regression", "classes": None}, "field `objective` is 'regression', but task `doctype`"),
    ],
)
def test_model_folder_errors_are_one_line_naming_file_and_field(
    trained: dict[str, Path], tmp_path: Path, edit: dict, message: str
) -> None:
    folder = Path(shutil.copytree(trained["tfidf"], tmp_path / "model"))
    meta = json.loads((folder / "model.json").read_text())
    for key, value in edit.items():
        meta[key] = {**meta[key], **value} if isinstance(value, dict) else value
    (folder / "model.json").write_text(json.dumps(meta))
    line = assert_clean_failure(invoke("train", "papyrus", "eval", folder, trained["dataset"]), {2})
    assert f"error: {folder / 'model.json'}: {message}" in line


def test_an_input_file_name_that_is_not_utf8_is_a_rejected_row(tmp_path: Path) -> None:
    corpus = tmp_path / "corpus" / "DCLP"
    corpus.mkdir(parents=True)
    first, second = sorted(SAMPLE_ROOT.glob("DCLP/*/*.xml"))[:2]
    shutil.copy(first, corpus / first.name)
    shutil.copy(second, os.fsencode(corpus) + b"/bad\xff.xml")
    out = tmp_path / "out"
    result = invoke(
        "generate",
        "papyrus",
        "--input",
        tmp_path / "corpus",
        "--set",
        "generator.sources=[epidoc]",
        "--out",
        out,
        "--no-progress",
    )
    assert result.exit_code == 0, result.output
    rejected = [r for r in pq.read_table(out / "rejected").to_pylist() if r["filter_reason"] == "invalid_file_name"]
    assert [r["path"] for r in rejected] == ["DCLP/bad\\xff.xml"]
    assert "rename the file" in rejected[0]["filter_detail"]
    assert not [p for p in (out / "data").iterdir() if p.name.startswith(".")]
