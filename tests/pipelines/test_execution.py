"""End-to-end behaviour of the local engine and the sink on the in-process toy domain."""

import json

import datasets
import pyarrow.parquet as pq
import pytest
import yaml

from synth.core.config import parse_config
from synth.core.errors import OutputDirError
from synth.core.sink import DatasetDir, sha256_file
from synth.pipelines.execution import run_local


def shard_hashes(out):
    return {p.name: sha256_file(p) for p in sorted((out / "data").glob("*.parquet"))}


def test_run_writes_shards_manifest_rejected_and_card(tmp_path, toy_payload):
    out = tmp_path / "out"
    summary = run_local(parse_config(toy_payload), out)
    names = sorted(p.name for p in (out / "data").iterdir())
    assert names == [f"train-0000{i}-of-00003.parquet" for i in range(3)]
    manifest = json.loads((out / "manifest.json").read_text())
    assert manifest["status"] == "complete" and summary.executed == [0, 1, 2]
    for shard in manifest["shards"]:
        assert shard["sha256"] == sha256_file(out / shard["path"])
        assert pq.read_metadata(out / shard["path"]).num_rows == shard["rows"]
    kept = pq.read_table(out / "data").to_pylist()
    rejected = pq.read_table(out / "rejected").to_pylist()
    assert manifest["totals"]["rows"] == len(kept) > 0
    assert all(row["value"] % 2 == 0 and row["verdict_even"]["passed"] for row in kept)
    reasons = {row["filter_reason"] for row in rejected}
    assert reasons <= {"even:odd", "multiple_of_five"} and "even:odd" in reasons
    assert len(kept) + len(rejected) == 3 * 12
    assert manifest["totals"]["rejected"] == {r: sum(x["filter_reason"] == r for x in rejected) for r in reasons}
    row = kept[0]
    assert row["provenance"]["generator"] == "toy" and row["provenance"]["seed"] == 3
    assert row["provenance"]["config_hash"] == manifest["config_hash"]
    assert row["provenance"]["parent_ids"] == [f"v{row['value']}"]
    header = yaml.safe_load((out / "README.md").read_text().split("---")[1])
    assert header["license"] == "mit"
    assert header["configs"][0]["data_files"][0]["path"] == "data/train-*.parquet"


def test_load_dataset_reads_the_directory_with_declared_features(tmp_path, toy_payload):
    out = tmp_path / "out"
    summary = run_local(parse_config(toy_payload), out)
    loaded = datasets.load_dataset(str(out), cache_dir=str(tmp_path / "cache"))
    train = loaded["train"]
    schema = pq.read_schema(out / "data" / "train-00000-of-00003.parquet")
    assert train.num_rows == summary.manifest["totals"]["rows"]
    assert train.features == datasets.Features.from_arrow_schema(schema)
    rejected = datasets.load_dataset(str(out), "rejected", cache_dir=str(tmp_path / "cache"))["train"]
    assert "filter_reason" in rejected.column_names


def test_same_seed_same_bytes_and_other_seed_other_bytes(tmp_path, toy_payload):
    run_local(parse_config(toy_payload), tmp_path / "a")
    run_local(parse_config(toy_payload), tmp_path / "b")
    run_local(parse_config({**toy_payload, "seed": 4}), tmp_path / "c")
    assert shard_hashes(tmp_path / "a") == shard_hashes(tmp_path / "b")
    assert shard_hashes(tmp_path / "a") != shard_hashes(tmp_path / "c")


def test_parallel_workers_give_the_same_bytes(tmp_path, toy_payload, monkeypatch):
    # Spawned workers cannot see the in-process toy domain, so compare on the registered papyrus domain.
    payload = {
        "domain": "papyrus",
        "seed": 1,
        "shards": 2,
        "generator": {"levels": [0.05, 0.2], "variants": ["uniform"], "sources": ["epidoc"]},
    }
    run_local(parse_config(payload), tmp_path / "serial")
    run_local(parse_config(payload), tmp_path / "pool", workers=2)
    assert shard_hashes(tmp_path / "serial") == shard_hashes(tmp_path / "pool")


def test_rerun_skips_complete_shards_and_redoes_damaged_ones(tmp_path, toy_payload):
    out = tmp_path / "out"
    first = run_local(parse_config(toy_payload), out)
    before = shard_hashes(out)
    again = run_local(parse_config(toy_payload), out)
    assert again.executed == [] and again.skipped == [0, 1, 2]
    victim = out / first.manifest["shards"][1]["path"]
    victim.write_bytes(victim.read_bytes()[:-10])
    (out / "data" / f".{victim.name}.tmp-999").write_bytes(b"partial")
    repaired = run_local(parse_config(toy_payload), out)
    assert repaired.executed == [1]
    assert shard_hashes(out) == before
    assert not list((out / "data").glob(".*tmp*"))


def test_other_config_on_same_out_is_refused_and_nothing_changes(tmp_path, toy_payload):
    out = tmp_path / "out"
    run_local(parse_config(toy_payload), out)
    before = shard_hashes(out)
    manifest_before = (out / "manifest.json").read_text()
    with pytest.raises(OutputDirError, match="another config"):
        run_local(parse_config({**toy_payload, "seed": 99}), out)
    assert shard_hashes(out) == before
    assert (out / "manifest.json").read_text() == manifest_before
    replaced = run_local(parse_config({**toy_payload, "seed": 99}), out, overwrite=True)
    assert replaced.executed == [0, 1, 2] and shard_hashes(out) != before


def test_second_run_on_a_locked_out_is_refused(tmp_path, toy_payload):
    out = tmp_path / "out"
    with DatasetDir(out).lock(), pytest.raises(OutputDirError, match="in use by another synth run"):
        run_local(parse_config(toy_payload), out)
    assert not (out / "data").exists()


def test_foreign_non_empty_out_is_refused(tmp_path, toy_payload):
    out = tmp_path / "out"
    out.mkdir()
    (out / "notes.txt").write_text("mine")
    with pytest.raises(OutputDirError, match="holds no synth manifest"):
        run_local(parse_config(toy_payload), out)
    assert (out / "notes.txt").read_text() == "mine"
