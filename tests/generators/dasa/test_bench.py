import pytest

pytest.importorskip("torch")
pytest.importorskip("peft")
bench = pytest.importorskip("synth.generators.dasa.bench")


@pytest.mark.slow
def test_bench_reports_every_condition_and_the_synthesis_cost(base_lm_dir):
    from synth.generators.dasa.synthesize import DasaSettings
    from synth.generators.gradmm.admm import GradmmSettings

    report = bench.run_dasa_bench(
        model_dir=base_lm_dir,
        source_rows=12,
        test_rows=6,
        m=4,
        seeds=(0, 1),
        lora_steps=2,
        dasa=DasaSettings(steps=2, groups=2),
        gradmm=GradmmSettings(steps=1, inner_steps=1, groups=2),
    )
    conditions = {"source_all", "source_subset", "dasa_start_rows", "dasa", "gradmm", "random"}
    assert set(report["exact_match"]) == conditions
    assert all(len(v["values"]) == 2 for v in report["exact_match"].values())
    assert all(report["synthesis"][k]["seconds"]["mean"] > 0 for k in ("dasa", "gradmm"))
    # each synthesis ran in a fresh process: its memory growth is seen every time, not only on the first seed
    assert all(v > 0.5 for k in ("dasa", "gradmm") for v in report["synthesis"][k]["peak_rss_mib"]["values"])
    assert report["speedup_dasa_over_gradmm"] > 0 and report["memory_ratio_dasa_over_gradmm"] > 0
    assert "fresh spawned process" in report["memory"]


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
