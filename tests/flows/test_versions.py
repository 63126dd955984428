"""Dataset versions: allocation never reuses a folder, `latest` moves only after a complete run, retention."""

import datetime as dt
import json

import pytest
from shard_files import parquet_hashes

from synth.core.dataset import open_dataset
from synth.core.errors import ConfigError, InputError, OutputDirError
from synth.core.registry import get_domain
from synth.core.versions import VersionedRoot, resolve_latest

DAY = dt.date(2026, 12, 4)
PAYLOAD = {"domain": "toy", "seed": 3, "shards": 2, "generator": {"rows_per_shard": 12, "batch_size": 5}}


def publish_new(root, day=DAY):
    with root.lock():
        version = root.allocate(day)
        root.publish(version, {"seed": version.ordinal})
    return version


def test_versions_are_numbered_per_root_and_latest_follows_the_newest_published(tmp_path):
    root = VersionedRoot(tmp_path / "out")
    first = publish_new(root)
    second = publish_new(root, dt.date(2026, 12, 5))
    assert (first.name, second.name) == ("20261204-1", "20261205-2")
    assert root.latest()["version"] == second.name
    with root.lock():
        unfinished = root.allocate(DAY)
    assert unfinished.name == "20261204-3"
    assert [v.status for v in root.versions()] == ["complete", "complete", "incomplete"]
    assert root.latest()["version"] == second.name  # an unfinished version never becomes latest
    assert resolve_latest(root.root) == second.path


def test_an_older_version_finishing_late_leaves_latest_on_the_newer_one(tmp_path):
    root = VersionedRoot(tmp_path / "out")
    with root.lock():
        slow = root.allocate(DAY)
        fast = root.allocate(DAY)
        assert root.publish(fast, {}) is not None
        assert root.publish(slow, {}) is None
    assert root.latest()["version"] == fast.name
    assert [v.status for v in root.versions()] == ["complete", "complete"]


def test_retention_keeps_the_newest_complete_versions_and_drops_older_unfinished_ones(tmp_path):
    root = VersionedRoot(tmp_path / "out")
    publish_new(root)
    with root.lock():
        root.allocate(DAY)  # a crashed run's folder
    kept = [publish_new(root) for _ in range(3)]
    with root.lock():
        pruned = root.prune(2)
    assert pruned == ["20261204-1", "20261204-2", "20261204-3"]
    assert [v.name for v in root.versions()] == [v.name for v in kept[1:]]
    assert [e["name"] for e in root.index()] == [v.name for v in kept[1:]]
    assert not list((tmp_path / "out" / "versions").glob(".trash-*"))
    with pytest.raises(OutputDirError, match="keep at least 1"), root.lock():
        root.prune(0)


def test_a_damaged_latest_pointer_is_a_one_line_error(tmp_path):
    root = VersionedRoot(tmp_path / "out")
    publish_new(root)
    (tmp_path / "out" / "latest.json").write_text("{not json", encoding="utf-8")
    with pytest.raises(InputError, match=r"latest.json: unreadable") as caught:
        open_dataset(tmp_path / "out")
    assert "\n" not in str(caught.value)


@pytest.mark.prefect
def test_the_run_flow_writes_versions_and_a_failed_run_leaves_latest_alone(tmp_path, prefect_server, monkeypatch):
    from synth.flows.run import RunParams, synth_run_flow

    out = tmp_path / "out"
    first = synth_run_flow(RunParams(config=PAYLOAD, out=str(out), versions="seed"))
    second = synth_run_flow(RunParams(config=PAYLOAD, out=str(out), versions="seed"))
    assert (first["seed"], second["seed"]) == (3, 4)
    root = VersionedRoot(out)
    one, two = root.versions()
    first_hashes = parquet_hashes(one.path)
    assert first_hashes != parquet_hashes(two.path)
    assert root.latest()["version"] == two.name
    before = (out / "latest.json").read_bytes()

    broken = PAYLOAD | {"generator": {"rows_per_shard": 12, "batch_size": 5, "no_such_field": 1}}
    with pytest.raises(ConfigError, match="no_such_field"):
        synth_run_flow(RunParams(config=broken, out=str(out), versions="seed"))
    assert len(root.versions()) == 2  # refused before a folder was allocated

    def fail_on_shard_one(self, ctx):
        if ctx.shard_index == 1:
            raise RuntimeError("generator crashed on shard 1")
        yield from original(self, ctx)

    toy = type(get_domain("toy").build_generator(get_domain("toy").config_model()))
    original = toy.generate
    monkeypatch.setattr(toy, "generate", fail_on_shard_one)
    with pytest.raises(RuntimeError, match="crashed"):
        synth_run_flow(RunParams(config=PAYLOAD, out=str(out), versions="seed"))
    monkeypatch.undo()
    assert (out / "latest.json").read_bytes() == before
    assert [v.status for v in root.versions()] == ["complete", "complete", "incomplete"]

    same = synth_run_flow(RunParams(config=PAYLOAD, out=str(out), versions="date", keep=2))
    assert parquet_hashes(root.latest_path()) == first_hashes  # versions=date: the same seed, the same bytes
    assert same["pruned"] == [one.name, root.versions()[0].name.replace("-2", "-3")]
    assert [v.name for v in root.versions()] == [two.name, same["version"]]
    assert json.loads((out / "latest.json").read_text())["version"] == same["version"]


def test_synth_inspect_lists_the_versions_then_describes_latest(tmp_path):
    from typer.testing import CliRunner

    from synth.cli.app import app
    from synth.core.config import parse_config
    from synth.pipelines.execution import run_local

    root = VersionedRoot(tmp_path / "out")
    for _ in range(2):
        with root.lock():
            version = root.allocate(DAY)
        run_local(parse_config(PAYLOAD), version.path)
        with root.lock():
            root.publish(version, {"seed": 3, "rows": 7})
    result = CliRunner().invoke(app, ["inspect", str(tmp_path / "out"), "--rows", "0"])
    assert result.exit_code == 0, result.output
    assert "20261204-1" in result.output and "20261204-2 (latest)" in result.output
    assert "domain toy" in result.output and "versions/20261204-2" in result.output
    listed = CliRunner().invoke(app, ["inspect", str(tmp_path / "out"), "--json"])
    assert json.loads(listed.output)["latest"] == "20261204-2"


def test_a_retry_of_the_same_flow_run_resumes_its_own_unfinished_version(tmp_path):
    from synth.flows.run import _open_version

    root = VersionedRoot(tmp_path / "out")
    first = _open_version(root, "run-a")
    assert _open_version(root, "run-a").path == first.path  # the retry gets its folder back
    other = _open_version(root, "run-b")
    assert other.path != first.path and other.ordinal == first.ordinal + 1
    assert _open_version(root, "run-a").path not in (first.path, other.path)  # only the newest is resumable
