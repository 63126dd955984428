"""synth bench curate at toy sizes: every figure is present and each size is measured in its own process."""

import pytest

from synth.pipelines.curation.bench import bench_curate


@pytest.mark.slow
def test_bench_curate_reports_rates_memory_and_library_ratios(tmp_path):
    report = bench_curate(sizes=(2000, 6000), work=tmp_path / "work", near_docs=400, words=24)
    near = report["near_dup"]
    assert set(near["docs_per_s"]) == {"synth", "datasketch", "rensa"} and near["ratio_vs_rensa"] > 0
    small, large = report["sizes"]
    assert (small["rows"], large["rows"]) == (2000, 6000) and large["rows_per_s"] > 0
    assert small["dropped"]["exact_dedup"] > 0 and 0 < small["peak_rss_mb"] < 2000
    assert report["peak_rss_ratio_largest_vs_smallest"] == round(large["peak_rss_mb"] / small["peak_rss_mb"], 3)
