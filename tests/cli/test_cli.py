"""The `synth` commands end to end on the papyrus domain, through typer's test runner."""

import json
import shutil

import pyarrow as pa
import pyarrow.parquet as pq
import pytest
from typer.testing import CliRunner

from synth.cli.app import app
from synth.core.sink import sha256_file, write_json_atomic
from synth.generators.papyrus.corpus import SAMPLE_ROOT

runner = CliRunner()
SMALL = ["--set", "generator.levels=[0.05, 0.2]", "--set", "generator.variants=[uniform, confusable]"]
SMALL += ["--set", "generator.sources=[epidoc]"]  # the EpiDoc sample alone keeps these runs small


def invoke(*args):
    return runner.invoke(app, [str(a) for a in args])


@pytest.fixture(scope="module")
def dataset(tmp_path_factory):
    out = tmp_path_factory.mktemp("cli") / "papyrus"
    result = invoke("generate", "papyrus", "--out", out, "--shards", "2", "--seed", "4", "--no-progress", *SMALL)
    assert result.exit_code == 0, result.output
    return out


def test_generate_then_inspect_describes_the_dataset(dataset):
    result = invoke("inspect", dataset, "--json", "--rows", "2")
    assert result.exit_code == 0, result.output
    info = json.loads(result.stdout)
    assert info["domain"] == "papyrus" and info["status"] == "complete"
    assert info["rows"] > 0 and len(info["sample"]) == 2
    assert info["verdicts"]["cer"]["pass_rate"] == 1.0
    assert {"text_noisy", "edit_distance", "k", "verdict_cer", "provenance"} <= {f["name"] for f in info["schema"]}
    table = invoke("inspect", dataset)
    assert table.exit_code == 0 and "verifier pass rates" in table.stdout


def test_every_kept_row_hits_its_edit_budget_exactly(dataset):
    table = pq.read_table(dataset / "data").to_pydict()
    assert table["edit_distance"] == table["k"]
    assert all(v["passed"] for v in table["verdict_cer"])


def test_verify_passes_then_catches_a_tampered_row(dataset, tmp_path):
    ok = invoke("verify", dataset, "--json")
    assert ok.exit_code == 0, ok.output
    assert json.loads(ok.stdout)["ok"] is True

    copy = tmp_path / "tampered"
    shutil.copytree(dataset, copy)
    manifest = json.loads((copy / "manifest.json").read_text())
    first = manifest["shards"][0]["files"][0]  # a papyrus shard has one kept-row file per split
    shard = copy / first["path"]
    table = pq.read_table(shard)
    noisy = table.column("text_noisy").to_pylist()
    noisy[0] = noisy[0] + "α"
    table = table.set_column(table.schema.get_field_index("text_noisy"), "text_noisy", pa.array(noisy))
    pq.write_table(table, shard)
    broken = invoke("verify", copy, "--json")
    assert broken.exit_code == 1
    assert json.loads(broken.stdout)["integrity_errors"]  # checksum no longer matches the manifest
    first["sha256"] = sha256_file(shard)
    write_json_atomic(copy / "manifest.json", manifest)
    report = json.loads(invoke("verify", copy, "--json").stdout)
    assert report["verifiers"]["cer"]["mismatched"] == 1
    assert report["examples"][0]["fresh"]["reasons"] == ["distance_mismatch"]


def test_domains_lists_papyrus():
    result = invoke("domains", "--json")
    assert result.exit_code == 0
    entries = {entry["name"]: entry for entry in json.loads(result.stdout)}
    assert entries["papyrus"]["verifiers"] == ["cer"]


def test_unknown_config_field_is_a_one_line_error_with_exit_code_2(tmp_path):
    config = tmp_path / "bad.yaml"
    config.write_text("domain: papyrus\ngenerator:\n  levls: [0.1]\n", encoding="utf-8")
    result = invoke("run", config, "--out", tmp_path / "out")
    assert result.exit_code == 2
    lines = [line for line in result.stderr.splitlines() if line.strip()]
    assert len(lines) == 1
    assert str(config) in lines[0] and "generator.levls" in lines[0]
    assert not (tmp_path / "out").exists()


def test_wrong_type_and_missing_input_are_refused(tmp_path):
    config = tmp_path / "bad.yaml"
    config.write_text("domain: papyrus\nshards: two\n", encoding="utf-8")
    wrong = invoke("run", config)
    assert wrong.exit_code == 2 and "field `shards`" in wrong.stderr
    missing = invoke("generate", "papyrus", "--input", tmp_path / "nowhere", "--out", tmp_path / "o")
    assert missing.exit_code == 2 and "input directory not found" in missing.stderr


def test_malformed_xml_goes_to_rejected_and_the_run_goes_on(tmp_path):
    corpus = tmp_path / "corpus"
    shutil.copytree(SAMPLE_ROOT / "DCLP", corpus / "DCLP")
    broken = corpus / "DCLP" / "99" / "98001.xml"
    broken.parent.mkdir(parents=True)
    broken.write_text("<TEI><text><body><div type='edition'><ab>αβγ</div></TEI>", encoding="utf-8")
    out = tmp_path / "out"
    result = invoke("generate", "papyrus", "--input", corpus, "--out", out, "--no-progress", *SMALL)
    assert result.exit_code == 0, result.output
    rejected = pq.read_table(out / "rejected").to_pylist()
    bad = [row for row in rejected if row["path"] == "DCLP/99/98001.xml"]
    assert len(bad) == 1 and bad[0]["filter_reason"] == "invalid_xml"
    assert bad[0]["filter_detail"] and "\n" not in bad[0]["filter_detail"]
    assert pq.read_metadata(out / "data" / "train-00000-of-00001.parquet").num_rows > 0


def test_other_config_on_existing_out_is_refused(dataset):
    result = invoke("generate", "papyrus", "--out", dataset, "--shards", "2", "--seed", "5", *SMALL)
    assert result.exit_code == 3 and "another config" in result.stderr


@pytest.mark.parametrize(
    "command", [[], ["run"], ["generate"], ["inspect"], ["verify"], ["domains"], ["bench", "pipeline"]]
)
def test_every_command_has_help(command):
    result = invoke(*command, "--help")
    assert result.exit_code == 0
    assert "Usage" in result.stdout
