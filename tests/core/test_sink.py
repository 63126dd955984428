"""The sink's file handling: leftovers of killed runs, failed writes, damaged manifests and records."""

import errno
import json
import os

import pytest
from shard_files import parquet_hashes

from synth.core.config import parse_config
from synth.core.errors import InputError, OutputDirError
from synth.core.sink import INCOMPLETE_CARD, DatasetDir, write_atomic, write_json_atomic
from synth.pipelines.execution import run_local
from synth.pipelines.runner import build_pipeline


def files_under(root):
    return sorted(p.relative_to(root).as_posix() for p in root.rglob("*") if p.is_file())


def fsync_failing_for(monkeypatch, fragment, code=errno.ENOSPC):
    """Make os.fsync raise OSError(`code`) for files whose path contains `fragment`, like a full disk would."""
    real_fsync = os.fsync

    def fsync(fd):
        if fragment in os.readlink(f"/proc/self/fd/{fd}"):
            raise OSError(code, os.strerror(code))
        return real_fsync(fd)

    monkeypatch.setattr(os, "fsync", fsync)


@pytest.mark.parametrize("leftover", [".manifest.json.tmp-4242", ".README.md.tmp-4242"])
def test_a_killed_first_write_leaves_an_out_that_a_rerun_resumes(tmp_path, toy_payload, leftover):
    out = tmp_path / "out"
    (out / ".synth").mkdir(parents=True)
    (out / leftover).write_text('{"format": "synth-man', encoding="utf-8")  # SIGKILL mid-write
    summary = run_local(parse_config(toy_payload), out)
    assert summary.manifest["status"] == "complete"
    assert not (out / leftover).exists()


def test_an_out_killed_between_the_placeholder_card_and_the_manifest_resumes(tmp_path, toy_payload):
    out = tmp_path / "out"
    (out / ".synth").mkdir(parents=True)
    (out / "README.md").write_text(INCOMPLETE_CARD, encoding="utf-8")
    assert run_local(parse_config(toy_payload), out).manifest["status"] == "complete"


def test_a_foreign_file_beside_synth_leftovers_is_still_refused(tmp_path, toy_payload):
    out = tmp_path / "out"
    out.mkdir()
    (out / ".manifest.json.tmp-4242").write_text("{", encoding="utf-8")
    (out / "README.md").write_text("# my notes\n", encoding="utf-8")
    with pytest.raises(OutputDirError, match=r"holds no synth manifest \(found 'README.md'\)"):
        run_local(parse_config(toy_payload), out)
    assert (out / "README.md").read_text(encoding="utf-8") == "# my notes\n"


def test_a_full_disk_while_writing_a_shard_names_the_file_and_leaves_no_partial_shard(
    tmp_path, toy_payload, monkeypatch
):
    reference = tmp_path / "reference"
    run_local(parse_config(toy_payload), reference)
    out = tmp_path / "out"
    fsync_failing_for(monkeypatch, "/data/.train-00001-of-00003")
    with pytest.raises(OSError) as info:
        run_local(parse_config(toy_payload), out)
    assert info.value.errno == errno.ENOSPC
    assert info.value.filename == str(out / "data" / "train-00001-of-00003.parquet")
    left = files_under(out)
    assert not [name for name in left if ".tmp-" in name]
    assert "data/train-00001-of-00003.parquet" not in left and "rejected/train-00001-of-00003.parquet" not in left
    assert ".synth/shards/00001.json" not in left
    assert (out / "README.md").read_text(encoding="utf-8") == INCOMPLETE_CARD

    monkeypatch.undo()
    resumed = run_local(parse_config(toy_payload), out)
    assert resumed.executed == [1, 2]
    assert parquet_hashes(out) == parquet_hashes(reference)


def test_a_failed_json_write_keeps_the_old_file_and_no_temp_file(tmp_path, monkeypatch):
    path = tmp_path / "manifest.json"
    write_json_atomic(path, {"v": 1})
    fsync_failing_for(monkeypatch, "manifest.json")
    with pytest.raises(OSError) as info:
        write_json_atomic(path, {"v": 2})
    assert info.value.filename == str(path)
    assert json.loads(path.read_text(encoding="utf-8")) == {"v": 1}
    assert files_under(tmp_path) == ["manifest.json"]


def test_a_writer_interrupted_halfway_keeps_the_old_file_and_no_temp_file(tmp_path):
    path = tmp_path / "model.bin"
    write_atomic(path, lambda tmp: tmp.write_bytes(b"old"))

    def write_half_then_stop(tmp):
        tmp.write_bytes(b"ne")
        raise KeyboardInterrupt

    with pytest.raises(KeyboardInterrupt):
        write_atomic(path, write_half_then_stop)
    assert path.read_bytes() == b"old"
    assert files_under(tmp_path) == ["model.bin"]


def test_a_generator_error_mid_shard_leaves_no_temp_or_partial_shard(tmp_path, toy_payload, monkeypatch):
    toy_generator = type(build_pipeline(parse_config(toy_payload)).generator)
    real_generate = toy_generator.generate

    def generate_then_fail(self, ctx):
        yield from real_generate(self, ctx)
        if ctx.shard_index == 1:
            raise ValueError("input went away")

    monkeypatch.setattr(toy_generator, "generate", generate_then_fail)
    out = tmp_path / "out"
    with pytest.raises(ValueError, match="input went away"):
        run_local(parse_config(toy_payload), out)
    left = files_under(out)
    assert not [name for name in left if ".tmp-" in name or "00001-of" in name]
    assert "data/train-00000-of-00003.parquet" in left


@pytest.mark.parametrize(
    ("text", "problem"),
    [
        ('{"format": "synth-manifest/1", ', "not valid JSON: Expecting property name"),
        ("[1, 2]", "expected a JSON object, got list"),
        ('{"shards": 5}', "field `format`: Field required"),
        (b"\xff\xfe", "not UTF-8 text"),
    ],
)
def test_a_damaged_manifest_is_one_line_naming_the_file(tmp_path, toy_payload, text, problem):
    out = tmp_path / "out"
    out.mkdir()
    manifest = out / "manifest.json"
    manifest.write_bytes(text if isinstance(text, bytes) else text.encode())
    with pytest.raises(InputError) as info:
        DatasetDir(out).read_manifest()
    message = str(info.value)
    assert message.startswith(f"{manifest}: damaged manifest") and problem in message and "\n" not in message
    assert message.endswith("--overwrite to rebuild it")
    with pytest.raises(OutputDirError, match="damaged manifest"):
        run_local(parse_config(toy_payload), out)
    assert run_local(parse_config(toy_payload), out, overwrite=True).manifest["status"] == "complete"


def test_a_manifest_entry_of_the_wrong_type_names_the_field(tmp_path, toy_payload):
    out = tmp_path / "out"
    run_local(parse_config(toy_payload), out)
    manifest = json.loads((out / "manifest.json").read_text(encoding="utf-8"))
    manifest["shards"][1]["sha256"] = 5
    (out / "manifest.json").write_text(json.dumps(manifest), encoding="utf-8")
    with pytest.raises(InputError, match=r"field `shards.1.sha256`: Input should be a valid string \(got 5\)"):
        DatasetDir(out).read_manifest()


def test_a_damaged_shard_record_makes_the_shard_redo(tmp_path, toy_payload):
    out = tmp_path / "out"
    run_local(parse_config(toy_payload), out)
    before = parquet_hashes(out)
    (out / ".synth" / "shards" / "00002.json").write_text('{"index": 2', encoding="utf-8")
    again = run_local(parse_config(toy_payload), out)
    assert again.executed == [2] and parquet_hashes(out) == before


def test_an_out_that_is_a_file_is_refused(tmp_path, toy_payload):
    out = tmp_path / "out"
    out.write_text("x", encoding="utf-8")
    with pytest.raises(OutputDirError, match="is a file, not a directory"):
        run_local(parse_config(toy_payload), out)


def test_write_behind_keeps_order_and_finishes_every_write_before_the_block_ends():
    from synth.core.sink import WriteBehind

    written: list[int] = []
    with WriteBehind(depth=2) as writes:
        for value in range(50):
            writes.submit(written.append, value)
    assert written == list(range(50))


def test_a_failed_background_write_raises_in_the_caller_and_later_writes_do_not_run():
    from synth.core.sink import WriteBehind

    written: list[int] = []

    def write(value: int) -> None:
        if value == 3:
            raise OSError(errno.ENOSPC, "No space left on device", "shard.parquet")
        written.append(value)

    with pytest.raises(OSError) as info, WriteBehind(depth=1) as writes:
        for value in range(10):
            writes.submit(write, value)
    assert info.value.errno == errno.ENOSPC and info.value.filename == "shard.parquet"
    assert written == [0, 1, 2]


def test_the_blocks_own_error_wins_and_writes_in_flight_still_finish():
    import threading

    from synth.core.sink import WriteBehind

    release, written = threading.Event(), []

    def slow_write(value: int) -> None:
        release.wait()
        written.append(value)

    with pytest.raises(KeyError), WriteBehind(depth=2) as writes:
        writes.submit(slow_write, 1)
        release.set()
        raise KeyError("generator failed")
    assert written == [1]
