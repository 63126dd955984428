"""`synth bench scale` and the Prefect breakdown of `synth bench pipeline`, on tiny runs."""

import json

import pytest
from typer.testing import CliRunner

from synth.cli.app import app


@pytest.mark.slow
def test_bench_scale_times_1_and_2_workers_on_the_same_shards(tmp_path):
    from synth.flows.scale_bench import bench_scale

    report = bench_scale(shards=2, shard_seconds=0.02, noops=5, engines=("local",))
    local = report["engines"]["local"]
    assert [run["workers"] for run in local["runs"]] == [1, 2]
    assert report["same_rows_everywhere"] and local["runs"][0]["rows"] > 0
    first, second = local["runs"]
    assert local["speedup"] == pytest.approx(second["shards_per_second"] / first["shards_per_second"], rel=0.01)
    assert local["noop_task_ms"] > 0 and 0 < first["cpu_share"] <= 1.5
    assert len(report["machine"]["loadavg_before"]) == 3


def test_bench_scale_refuses_an_unknown_engine(tmp_path):
    result = CliRunner().invoke(app, ["bench", "scale", "--engines", "local,spark", "--out", str(tmp_path / "s.json")])
    assert result.exit_code == 2 and "unknown engine 'spark'" in result.output
    assert not (tmp_path / "s.json").exists()


@pytest.mark.slow
@pytest.mark.prefect
def test_bench_pipeline_splits_the_prefect_runs_time_by_the_servers_task_runs(tmp_path, prefect_server):
    from synth.flows.bench import bench_pipeline

    report = bench_pipeline(min_seconds=0.3, shards=2, repeats=1, work_dir=tmp_path)
    (run,) = report["prefect_breakdown"]["warm_runs"]
    assert run["tasks"] == 2 and run["in_tasks"] > 0
    parts = run["outside_flow_run"] + run["flow_setup"] + run["in_tasks"] + run["between"] + run["finish"]
    assert parts == pytest.approx(run["wall"], abs=0.01)
    assert report["rows_generated"]["prefect_warm"] == report["rows_generated"]["bare"]
    assert "prefect_in_tasks_vs_local" in report["ratios"]
    json.dumps(report)
