"""Failures a user can cause or meet are one `error:` line with an exit code, never a traceback."""

import errno
import json
import os
import re
import shutil

import pyarrow.parquet as pq
import pytest
import yaml
from typer.testing import CliRunner

from synth.cli._common import describe_os_error
from synth.cli.app import app

runner = CliRunner()
TOY = {"domain": "toy", "seed": 3, "shards": 2, "generator": {"rows_per_shard": 12, "batch_size": 5}}


def invoke(*args):
    return runner.invoke(app, [str(a) for a in args])


def one_error_line(result, code):
    """The single stderr line of a failed command, after checking the exit code and that nothing escaped."""
    assert result.exception is None or isinstance(result.exception, SystemExit), result.exception
    assert result.exit_code == code, (result.exit_code, result.output)
    lines = result.stderr.splitlines()
    assert len(lines) == 1 and lines[0].startswith("error: "), result.stderr
    return lines[0].removeprefix("error: ")


def last_error_line(result, code):
    """The error line a failed command ends with (after any warnings it logged), and no traceback."""
    assert result.exception is None or isinstance(result.exception, SystemExit), result.exception
    assert result.exit_code == code, (result.exit_code, result.output)
    lines = [line for line in result.stderr.splitlines() if line.strip()]
    assert [line for line in lines if line.startswith("error: ")] == lines[-1:], result.stderr
    return lines[-1].removeprefix("error: ")


def write_config(tmp_path, value=TOY, name="toy.yaml"):
    path = tmp_path / name
    path.write_text(yaml.safe_dump(value), encoding="utf-8")
    return path


@pytest.fixture
def toy_out(tmp_path):
    out = tmp_path / "out"
    result = invoke("run", write_config(tmp_path), "--out", out, "--no-progress")
    assert result.exit_code == 0, result.output
    return out


def test_a_binary_config_file(tmp_path):
    config = tmp_path / "bin.yaml"
    config.write_bytes(b"domain: toy\n\xff\xfe\x00")
    line = one_error_line(invoke("run", config, "--out", tmp_path / "out"), 2)
    assert line == f"{config}:2: not UTF-8 text (byte 0xff at offset 12); a config is YAML text"
    assert not (tmp_path / "out").exists()


def test_a_config_path_that_is_a_directory(tmp_path):
    line = one_error_line(invoke("run", tmp_path, "--out", tmp_path / "out"), 2)
    assert line == f"{tmp_path}: is a directory, not a config file; pass the YAML file itself"


def test_a_malformed_set_value(tmp_path):
    result = invoke("run", write_config(tmp_path), "--out", tmp_path / "out", "--set", "generator.levels=[0.1")
    line = one_error_line(result, 2)
    assert line.startswith("--set 'generator.levels=[0.1': the value is not valid YAML (expected ',' or ']'")
    assert "e.g. --set 'generator.levels=[0.1, 0.2]'" in line
    assert not (tmp_path / "out").exists()


def test_an_error_text_with_rich_markup_is_printed_literally(tmp_path):
    result = invoke("run", write_config(tmp_path), "--out", tmp_path / "out", "--set", "[/]=1")
    assert one_error_line(result, 2) == f"{tmp_path / 'toy.yaml'}: field `[/]`: unknown field"


@pytest.mark.parametrize(
    ("text", "problem"),
    [("{oops", "not valid JSON: Expecting property name enclosed in double quotes at line 1"), ("[]", "got list")],
)
def test_a_corrupt_manifest_for_inspect_verify_and_run(tmp_path, toy_out, text, problem):
    (toy_out / "manifest.json").write_text(text, encoding="utf-8")
    for args, code in ((("inspect", toy_out), 2), (("verify", toy_out), 2), (("run", tmp_path / "toy.yaml"), 3)):
        line = one_error_line(invoke(*args, "--out", toy_out) if args[0] == "run" else invoke(*args), code)
        assert line.startswith(f"{toy_out / 'manifest.json'}: damaged manifest (") and problem in line
        assert line.endswith("rerun the command that made this dataset with --overwrite to rebuild it")
    rebuilt = invoke("run", tmp_path / "toy.yaml", "--out", toy_out, "--overwrite", "--no-progress")
    assert rebuilt.exit_code == 0, rebuilt.output


@pytest.mark.parametrize("part", ["data", "rejected"])
def test_inspect_on_a_truncated_second_shard(toy_out, part):
    shard = toy_out / part / "train-00001-of-00002.parquet"
    shard.write_bytes(shard.read_bytes()[:100])
    line = one_error_line(invoke("inspect", toy_out), 2)
    assert line.startswith(f"{shard}: unreadable Parquet shard (")
    assert line.endswith(f"`synth verify {toy_out}` checks every shard")


def test_a_full_disk_while_writing_a_shard(tmp_path, monkeypatch):
    real_fsync = os.fsync

    def fsync(fd):
        if "/data/.train-00001-of-00002" in os.readlink(f"/proc/self/fd/{fd}"):
            raise OSError(errno.ENOSPC, os.strerror(errno.ENOSPC))
        return real_fsync(fd)

    monkeypatch.setattr(os, "fsync", fsync)
    out = tmp_path / "out"
    line = one_error_line(invoke("run", write_config(tmp_path), "--out", out, "--no-progress"), 1)
    shard = out / "data" / "train-00001-of-00002.parquet"
    match = re.fullmatch(rf"no space left on (\S+) while writing {re.escape(str(shard))}; (.*)", line)
    assert match and os.path.ismount(match.group(1)), line
    assert match.group(2) == "free some space there or use another --out"
    assert not [p for p in out.rglob("*") if ".tmp-" in p.name or "00001-of" in p.name]


def test_system_errors_name_the_file():
    denied = PermissionError(errno.EACCES, "Permission denied", "/data/out/manifest.json")
    assert (
        describe_os_error(denied)
        == "/data/out/manifest.json: permission denied; check its permissions or use another --out"
    )
    full = OSError(errno.ENOSPC, "Error writing bytes to file. Detail: [errno 28] No space left on device")
    assert (
        describe_os_error(full)
        == "no space left on the device while writing an unnamed file; free some space there or use another --out"
    )


def broken_corpus(root, count=3):
    for index in range(count):
        path = root / "DCLP" / "1" / f"{index}.xml"
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text("<TEI><oops", encoding="utf-8")
    return root


@pytest.mark.parametrize("command", ["generate", "run"])
def test_a_run_that_rejects_every_input_fails_with_the_main_reason(tmp_path, command):
    corpus = broken_corpus(tmp_path / "corpus")
    out = tmp_path / "out"
    settings = ["--set", "generator.sources=[epidoc]", "--set", "generator.levels=[0.1]"]
    if command == "generate":
        args = ["generate", "papyrus", "--input", corpus, "--out", out, "--no-progress", *settings]
    else:
        config = write_config(tmp_path, {"domain": "papyrus", "generator": {"input": str(corpus)}}, "papyrus.yaml")
        args = ["run", config, "--out", out, "--no-progress", *settings]
    line = last_error_line(invoke(*args), 1)
    rejected = pq.read_table(out / "rejected").to_pylist()
    reason = rejected[0]["filter_reason"]
    assert len(rejected) == 3 and {row["filter_reason"] for row in rejected} == {reason}
    assert (
        line == f"no rows kept: all 3 items were rejected; most common reason `{reason}` (3); see {out / 'rejected'}/"
    )
    manifest = json.loads((out / "manifest.json").read_text(encoding="utf-8"))
    assert manifest["status"] == "complete" and manifest["totals"]["rows"] == 0
    assert last_error_line(invoke(*args), 1) == line  # a resumed run reports the same failure


def test_an_input_file_name_that_is_not_utf8_leaves_no_temp_shard(tmp_path):
    from synth.generators.papyrus.corpus import SAMPLE_ROOT

    corpus = tmp_path / "corpus"
    shutil.copytree(SAMPLE_ROOT / "DCLP", corpus / "DCLP")
    first = sorted((corpus / "DCLP").rglob("*.xml"))[0]
    shutil.copy(first, os.fsencode(first.parent) + b"/bad\xff.xml")
    out = tmp_path / "out"
    result = invoke(
        "generate", "papyrus", "--input", corpus, "--out", out, "--no-progress", "--set", "generator.sources=[epidoc]"
    )
    assert not [p for p in out.rglob("*") if ".tmp-" in p.name]
    if result.exit_code != 0:
        assert not list((out / "data").glob("*.parquet"))
