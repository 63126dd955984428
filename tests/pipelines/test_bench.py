from synth.flows.bench import bench_pipeline


def test_bench_reports_ratios_against_a_bare_loop_doing_the_same_work(tmp_path):
    report = bench_pipeline(min_seconds=0.5, shards=2, repeats=2, engines=("local",), work_dir=tmp_path)
    assert report["rows_generated"]["bare"] == report["rows_generated"]["local"] > 0
    assert report["best_seconds"]["bare"] >= 0.5 and report["goal"]["bare_long_enough"]
    best = report["best_seconds"]
    assert abs(report["ratios"]["local_vs_bare"] - best["local"] / best["bare"]) < 0.01
    assert "prefect_cold_vs_bare" not in report["ratios"]
    assert report["config"]["generator"]["samples"] >= 1
    # interleaved rounds: every engine measured `repeats` times, in wall and in CPU seconds
    assert len(report["seconds"]["bare"]) == len(report["seconds"]["local"]) == 2
    assert len(report["cpu_seconds"]["local"]) == 2 and min(report["cpu_seconds"]["local"]) > 0
    best_cpu = report["best_cpu_seconds"]
    assert abs(report["cpu_ratios"]["local_vs_bare"] - best_cpu["local"] / best_cpu["bare"]) < 0.01
