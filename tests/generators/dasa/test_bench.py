import pytest

pytest.importorskip("torch")
pytest.importorskip("peft")
bench = pytest.importorskip("synth.generators.dasa.bench")


@pytest.mark.slow
def test_bench_reports_every_condition_and_the_synthesis_cost_and_resumes(base_lm_dir, tmp_path):
    from synth.generators.dasa.synthesize import DasaSettings
    from synth.generators.gradmm.admm import GradmmSettings

    progress = []
    arguments = dict(
        model_dir=base_lm_dir,
        cache=tmp_path,
        tasks=("shift", "cipher"),
        source_rows=12,
        test_rows=6,
        m=4,
        seeds=(0, 1),
        lora_steps=2,
        dasa=DasaSettings(steps=3, groups=1),
        gradmm=GradmmSettings(steps=2, inner_steps=1, groups=1),
        dasa_snapshots=(1,),
        gradmm_snapshots=(1,),
    )
    report = bench.run_dasa_bench(**arguments, on_progress=progress.append)
    conditions = {"source_all", "source_subset", "dasa_start_rows", "dasa", "gradmm", "random"}
    for task in ("shift", "cipher"):
        result = report["per_task"][task]
        assert set(result["exact_match"]) == conditions
        assert all(len(v["values"]) == 2 for v in result["exact_match"].values())
        diff = result["paired"]["dasa_minus_start_rows"]
        assert diff["ci95"][0] <= diff["mean"] <= diff["ci95"][1]
        assert 0 <= result["gradmm_projection"]["rows_still_correct_pairs"]["mean"] <= 1
    ttq = report["time_to_quality"]
    assert set(ttq["dasa"]["curve"]) == {"1", "3"} and set(ttq["gradmm"]["curve"]) == {"1", "2"}
    assert ttq["dasa"]["curve"]["1"]["seconds"] < ttq["dasa"]["curve"]["3"]["seconds"]
    assert ttq["ratio_gradmm_over_dasa"] > 0
    assert all(report["synthesis"][k]["seconds"]["mean"] > 0 for k in ("dasa", "gradmm"))
    # each synthesis ran in a fresh process: its memory growth is seen every time, not only on the first seed
    assert all(v > 0.5 for k in ("dasa", "gradmm") for v in report["synthesis"][k]["peak_rss_mib"]["values"])
    assert report["full_run_speedup_dasa_over_gradmm"] > 0 and report["memory_ratio_dasa_over_gradmm"] > 0
    assert "fresh spawned process" in report["memory"]
    # one progress report per finished task and seed, seed-major; a rerun reads them all back
    assert [sorted(p["per_task"]) for p in progress] == [["shift"]] + [["cipher", "shift"]] * 3
    assert report["resumed_units"] == []
    again = bench.run_dasa_bench(**arguments)
    assert again["resumed_units"] == ["cipher/0", "cipher/1", "shift/0", "shift/1"]
    assert again["per_task"] == report["per_task"]


def test_isolated_synthesis_returns_the_same_rows_as_in_process(reference, base_lm_dir):
    from synth.generators.dasa.synthesize import DasaSettings
    from synth.generators.dasa.tasks import make_pairs

    train = make_pairs("shift", 8, seed=0)
    settings = DasaSettings(steps=1, groups=1)
    args = {"m": 2, "settings": settings, "seed": 0}
    here, _, _ = bench.measure_synthesis("dasa", reference, base_lm_dir, train, isolated=False, **args)
    there, seconds, _ = bench.measure_synthesis("dasa", reference, base_lm_dir, train, isolated=True, **args)
    assert seconds > 0
    assert here.inputs_embeds.numpy().tobytes() == there.inputs_embeds.numpy().tobytes()


def test_measure_sees_a_large_allocation():
    import torch

    result, seconds, mib = bench.measure(lambda: torch.ones(64 * 2**20 // 4).sum())
    assert float(result) == 64 * 2**20 // 4 and seconds >= 0 and mib > 32


def test_paired_differences_and_their_interval():
    diff = bench.paired([0.5, 0.7, 0.6], [0.4, 0.4, 0.4])
    assert diff["values"] == pytest.approx([0.1, 0.3, 0.2]) and diff["mean"] == pytest.approx(0.2)
    half = 4.303 * 0.1 / 3**0.5
    assert diff["ci95"] == pytest.approx([0.2 - half, 0.2 + half])
    assert bench.paired([1.0], [0.0])["ci95"] is None


def test_time_to_quality_takes_the_earliest_step_reaching_the_lower_final_quality():
    curves = {
        "dasa": {5: [(1.0, 0.8), (1.2, 0.6)], 20: [(3.0, 0.9), (3.0, 0.9)]},
        "gradmm": {1: [(2.0, 0.5), (2.0, 0.5)], 10: [(9.0, 0.7), (11.0, 0.7)]},
    }
    out = bench.time_to_quality(curves)
    assert out["target_exact_match"] == pytest.approx(0.7)
    assert out["dasa"]["step"] == 5 and out["dasa"]["seconds"] == pytest.approx(1.1)
    assert out["gradmm"]["step"] == 10 and out["gradmm"]["seconds"] == pytest.approx(10.0)
    assert out["ratio_gradmm_over_dasa"] == pytest.approx(10.0 / 1.1)
    assert "note" not in out and not out["dasa"]["reached_at_start"]
    high = out["higher_final"]
    assert high["target_exact_match"] == pytest.approx(0.9) and high["dasa"] == {"step": 20, "seconds": 3.0}
    assert high["gradmm"] == {"step": None, "seconds": None} and high["ratio_gradmm_over_dasa"] is None


def test_time_to_quality_says_when_a_method_is_there_at_its_start_rows():
    curves = {"dasa": {0: [(4.0, 0.5)], 30: [(9.0, 0.8)]}, "gradmm": {0: [(0.5, 0.6)], 10: [(6.0, 0.4)]}}
    out = bench.time_to_quality(curves)
    assert out["dasa"]["step"] == 0 and out["gradmm"]["step"] == 0 and "set-up" in out["note"]
    assert out["higher_final"]["gradmm"]["step"] is None and out["higher_final"]["dasa"]["step"] == 30


def test_search_reports_heldout_loss_along_both_lora_runs(reference):
    rows = list(
        bench.search_dasa(
            reference,
            task="shift",
            m=2,
            seeds=(0,),
            configs=[{"steps": 1}],
            source_rows=8,
            test_rows=4,
            lora={"steps": 10, "rank": 4, "lr": 3e-3},
        )
    )
    (row,) = rows
    assert row["model"] == reference.model_id and row["config"] == {"steps": 1}
    assert set(row["heldout_loss"]) == {"dasa", "start_rows"}
    assert all(set(curve) == {"1", "10"} for curve in row["heldout_loss"].values())
    assert row["heldout_loss"]["start_rows"]["10"] < row["heldout_loss"]["start_rows"]["1"]
