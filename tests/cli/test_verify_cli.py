"""`synth verify` on the in-process toy domain: checksums of both parts, stray files, mismatches, incomplete."""

import json
import shutil

import pyarrow as pa
import pyarrow.parquet as pq
import pytest
import yaml
from typer.testing import CliRunner

from synth.cli.app import app
from synth.core.config import parse_config
from synth.core.sink import sha256_file, write_json_atomic
from synth.pipelines.execution import execute_shard, open_run

runner = CliRunner()
TOY = {"domain": "toy", "seed": 3, "shards": 3, "generator": {"rows_per_shard": 12, "batch_size": 5}}


def verify(out, *args):
    result = runner.invoke(app, ["verify", str(out), *args])
    assert result.exception is None or isinstance(result.exception, SystemExit), result.exception
    return result


@pytest.fixture(scope="module")
def toy_dataset(tmp_path_factory):
    root = tmp_path_factory.mktemp("verify")
    config = root / "toy.yaml"
    config.write_text(yaml.safe_dump(TOY), encoding="utf-8")
    out = root / "toy"
    result = runner.invoke(app, ["run", str(config), "--out", str(out), "--no-progress"])
    assert result.exit_code == 0, result.output
    return out


@pytest.fixture
def copy(toy_dataset, tmp_path):
    target = tmp_path / "copy"
    shutil.copytree(toy_dataset, target)
    return target


def test_a_whole_dataset_is_ok(toy_dataset):
    result = verify(toy_dataset, "--json")
    assert result.exit_code == 0
    report = json.loads(result.stdout)
    assert report["ok"] and report["complete"] and report["shards"] == {"complete": 3, "total": 3}
    assert verify(toy_dataset).stdout.splitlines()[-1] == "ok"


def test_a_tampered_rejected_shard_is_caught(copy):
    shard = copy / "rejected" / "train-00001-of-00003.parquet"
    table = pq.read_table(shard)
    pq.write_table(table.slice(1), shard)
    result = verify(copy)
    assert result.exit_code == 1
    assert (
        "integrity rejected/train-00001-of-00003.parquet: sha256 differs from the manifest (shard 1)" in result.stdout
    )
    assert result.stdout.splitlines()[-1] == "mismatches found"


def test_an_unlisted_parquet_file_in_data_is_caught(copy):
    shutil.copy(copy / "data" / "train-00000-of-00003.parquet", copy / "data" / "train-extra.parquet")
    result = verify(copy, "--json")
    assert result.exit_code == 1
    report = json.loads(result.stdout)
    assert report["integrity_errors"] == [
        "data/train-extra.parquet: not listed in the manifest (load_dataset would read it); remove it"
    ]


def test_a_verdict_mismatch_names_the_shard_and_the_row(copy):
    manifest = json.loads((copy / "manifest.json").read_text(encoding="utf-8"))
    entry = manifest["shards"][2]
    shard = copy / entry["path"]
    table = pq.read_table(shard)
    verdicts = table.column("verdict_even").to_pylist()
    verdicts[1] = {**verdicts[1], "passed": False}
    index = table.schema.get_field_index("verdict_even")
    table = table.set_column(index, table.schema.field(index), pa.array(verdicts, table.schema.field(index).type))
    pq.write_table(table, shard)
    entry["sha256"] = sha256_file(shard)
    write_json_atomic(copy / "manifest.json", manifest)
    result = verify(copy, "--json")
    assert result.exit_code == 1
    example = json.loads(result.stdout)["examples"][0]
    assert (example["shard"], example["row"], example["verifier"]) == (entry["path"], 1, "even")
    text = verify(copy).stdout
    assert f"  {entry['path']} row 1 (id {example['id']}), verifier even: stored" in text


def test_an_incomplete_dataset_is_reported_as_incomplete_not_as_mismatched(tmp_path):
    out = tmp_path / "partial"
    with open_run(parse_config(TOY), out) as plan:
        for index in plan.pending[:2]:
            plan.records[index] = execute_shard(plan.config_payload, str(out), index, pipeline=plan.pipeline)
            plan.write_manifest()
    result = verify(out)
    assert result.exit_code == 4
    last = result.stdout.splitlines()[-1]
    assert last == f"incomplete: 2 of 3 shards; rerun the command that made {out} to finish it, then verify again"
    report = json.loads(verify(out, "--json").stdout)
    assert report["integrity_errors"] == [] and not report["ok"] and not report["complete"]
