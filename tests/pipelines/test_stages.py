"""Multi-stage pipelines: validation, dependency order, fingerprints, skipping, reruns of changed stages."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from stage_helpers import SumStage, three_stages

from synth.core.config import parse_config
from synth.core.dataset import read_rows
from synth.core.errors import ConfigError, OutputDirError
from synth.core.sink import sha256_file
from synth.pipelines.execution import run_local
from synth.pipelines.stage_engine import PIPELINE_FILE, run_stages_local
from synth.pipelines.stage_kinds import STAGE_KINDS
from synth.pipelines.stages import parse_stages


@pytest.fixture(autouse=True)
def sum_kind(monkeypatch):
    SumStage.runs.clear()
    monkeypatch.setitem(STAGE_KINDS, "sum", SumStage())


def data_hashes(root: Path) -> dict[str, str]:
    return {p.relative_to(root).as_posix(): sha256_file(p) for p in sorted(root.rglob("data/*.parquet"))}


def test_stages_run_in_dependency_order_and_match_single_stage_runs(tmp_path):
    plan = parse_stages(three_stages())
    assert [s.name for s in plan.stages] == ["evens", "more", "total"]
    summary = run_stages_local(plan, tmp_path / "out")
    assert summary.executed == ["evens", "more", "total"] and summary.pipeline["status"] == "complete"
    alone = run_local(
        parse_config({"domain": "toy", "seed": 3, "shards": 3, "generator": {"rows_per_shard": 12}}), tmp_path / "alone"
    )
    assert alone.manifest["status"] == "complete"
    assert data_hashes(tmp_path / "out" / "evens") == data_hashes(tmp_path / "alone")
    manifest = json.loads((tmp_path / "out" / "total" / "manifest.json").read_text())
    assert [item["name"] for item in manifest["inputs"]] == ["evens", "more"]
    for item in manifest["inputs"]:
        assert item["manifest_sha256"] == sha256_file(tmp_path / "out" / item["name"] / "manifest.json")
    assert manifest["files"][0]["path"] == "total.json" and manifest["summary"]["total"] > 0
    assert not (tmp_path / "out" / ".synth" / "work").exists()


def test_a_rerun_skips_complete_stages_and_a_change_reruns_only_downstream(tmp_path):
    out = tmp_path / "out"
    first = run_stages_local(parse_stages(three_stages()), out)
    before = {name: sha256_file(out / name / "manifest.json") for name in ("evens", "more", "total")}
    again = run_stages_local(parse_stages(three_stages()), out)
    assert again.executed == [] and again.skipped == ["evens", "more", "total"]
    changed = run_stages_local(parse_stages(three_stages(scale=2)), out)
    assert changed.executed == ["total"] and changed.skipped == ["evens", "more"]
    assert {n: sha256_file(out / n / "manifest.json") for n in ("evens", "more")} == {
        n: before[n] for n in ("evens", "more")
    }
    fingerprints = {s["name"]: s["fingerprint"] for s in first.pipeline["stages"]}
    new_fingerprints = {s["name"]: s["fingerprint"] for s in changed.pipeline["stages"]}
    assert fingerprints["evens"] == new_fingerprints["evens"] and fingerprints["total"] != new_fingerprints["total"]
    assert json.loads((out / "total" / "total.json").read_text())["total"] == 2 * first_total(out, 1)
    upstream = three_stages(scale=2)
    upstream["stages"]["more"]["generator"]["rows_per_shard"] = 7
    rerun = run_stages_local(parse_stages(upstream), out)
    assert rerun.executed == ["more", "total"] and rerun.skipped == ["evens"]
    assert read_rows(out / "more").height <= 7


def first_total(out: Path, scale: int) -> int:
    return sum(int(read_rows(out / name, columns=["value"])["value"].sum()) for name in ("evens", "more")) * scale


def test_a_failed_stage_leaves_earlier_stages_and_reruns_alone(tmp_path):
    out = tmp_path / "out"
    with pytest.raises(RuntimeError, match="half-way"):
        run_stages_local(parse_stages(three_stages(fail=True)), out)
    assert not (out / "total").exists()
    pipeline = json.loads((out / PIPELINE_FILE).read_text())
    assert {s["name"]: s["status"] for s in pipeline["stages"]} == {
        "evens": "complete",
        "more": "complete",
        "total": "pending",
    }
    SumStage.runs.clear()
    rerun = run_stages_local(parse_stages(three_stages()), out)
    assert rerun.executed == ["total"] and SumStage.runs == ["total"]


def test_an_interrupted_generate_stage_resumes_its_missing_shards(tmp_path):
    out = tmp_path / "out"
    run_stages_local(parse_stages(three_stages()), out)
    hashes = data_hashes(out)
    (out / "evens" / ".synth" / "shards" / "00001.json").unlink()
    (out / "total" / "manifest.json").unlink()
    rerun = run_stages_local(parse_stages(three_stages()), out)
    assert rerun.executed == ["evens", "total"]
    assert data_hashes(out) == hashes


@pytest.mark.parametrize(
    ("change", "message"),
    [
        (lambda d: d["stages"]["total"].update(inputs=["evens", "odds"]), "field `stages.total.inputs`: 'odds' is"),
        (
            lambda d: d["stages"]["evens"].update(kind="sum", inputs=["total"]),
            "field `stages.evens.inputs`: the stages form a cycle (total -> evens -> total)",
        ),
        (lambda d: d["stages"]["more"].update(inputs=["evens"]), "field `stages.more.inputs`: a generate stage"),
        (lambda d: d["stages"]["total"].update(kind="bake"), "field `stages.total.kind`: unknown stage kind 'bake'"),
        (lambda d: d["stages"]["total"].update(scale="x"), "field `stages.total.scale`: Input should be"),
        (lambda d: d["stages"]["more"].update(domain="nope"), "field `stages.more.domain`: unknown domain 'nope'"),
        (lambda d: d["stages"].update({"Bad Name": {"kind": "sum"}}), "field `stages.Bad Name`: a stage name"),
    ],
)
def test_bad_stage_configs_are_one_line_errors_naming_stage_and_field(tmp_path, change, message):
    data = three_stages()
    change(data)
    with pytest.raises(ConfigError) as caught:
        parse_stages(data, source="p.yaml")
    assert str(caught.value).startswith("p.yaml: ") and message in str(caught.value)
    assert "\n" not in str(caught.value)


def test_a_kind_check_names_the_stage_and_an_incomplete_external_input_is_refused(tmp_path):
    papyrus = {"domain": "papyrus", "generator": {"levels": [0.1], "variants": ["uniform"], "sources": ["epidoc"]}}
    data = {"stages": {"corpus": {"kind": "generate", **papyrus}, "total": {"kind": "sum", "inputs": ["corpus"]}}}
    with pytest.raises(
        ConfigError, match=r"field `stages.total`: a sum stage reads toy datasets \(got \['papyrus'\]\)"
    ):
        parse_stages(data)
    external = tmp_path / "ext"
    config = parse_config({"domain": "toy", "shards": 2})
    run_local(config, external)
    (external / ".synth" / "shards" / "00001.json").unlink()
    with pytest.raises(RuntimeError, match="interrupted"):
        run_local(config, external, on_start=interrupt)
    with pytest.raises(ConfigError, match=r"field `stages.total.inputs`: .*ext: dataset is incomplete \(1 of 2"):
        parse_stages({"stages": {"total": {"kind": "sum", "inputs": [str(external)]}}})


def interrupt(plan: object) -> None:
    raise RuntimeError("interrupted after the manifest was written")


def test_an_external_complete_dataset_is_an_input_fingerprinted_by_its_manifest(tmp_path):
    external = tmp_path / "ext"
    run_local(parse_config({"domain": "toy", "shards": 2}), external)
    plan = parse_stages({"stages": {"total": {"kind": "sum", "inputs": [str(external)]}}})
    summary = run_stages_local(plan, tmp_path / "out")
    assert summary.executed == ["total"]
    manifest = json.loads((tmp_path / "out" / "total" / "manifest.json").read_text())
    assert manifest["inputs"][0]["manifest_sha256"] == sha256_file(external / "manifest.json")


def test_every_shipped_config_validates():
    from synth.core.config import read_config_mapping
    from synth.pipelines.curation.config import parse_curate_config
    from synth.pipelines.stages import is_stages_config

    configs = sorted((Path(__file__).resolve().parents[2] / "configs").glob("*.yaml"))
    multi = []
    for path in configs:
        data = read_config_mapping(path)
        if is_stages_config(data):
            multi.append(parse_stages(data, source=str(path)))
        elif "operations" in data:
            parse_curate_config(data, source=str(path))
        elif "rounds" in data and "generate" in data:  # a `synth loop` config
            from synth.pipelines.learning_loop import LoopConfig, round_pipeline

            loop = LoopConfig.model_validate({k: v for k, v in data.items() if k != "out"})
            round_pipeline(loop, 0, None)
        else:
            parse_config(data, source=str(path))
    assert len(configs) >= 9 and len(multi) >= 3 and all(len(plan.stages) >= 3 for plan in multi)


def test_a_killed_first_pipeline_file_write_leaves_an_out_that_reruns(tmp_path):
    out = tmp_path / "out"
    out.mkdir()
    (out / ".pipeline.json.tmp-4242").write_text('{"form')
    assert run_stages_local(parse_stages(three_stages()), out).executed == ["evens", "more", "total"]
    (tmp_path / "foreign").mkdir()
    (tmp_path / "foreign" / "notes.txt").write_text("mine")
    with pytest.raises(OutputDirError, match="not a synth pipeline"):
        run_stages_local(parse_stages(three_stages()), tmp_path / "foreign")
