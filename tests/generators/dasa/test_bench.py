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
    assert set(report["exact_match"]) == {"source_all", "source_subset", "dasa", "gradmm", "random"}
    assert all(len(v["values"]) == 2 for v in report["exact_match"].values())
    assert all(report["synthesis"][k]["seconds"]["mean"] > 0 for k in ("dasa", "gradmm"))
    assert report["speedup_dasa_over_gradmm"] > 0


def test_measure_sees_a_large_allocation():
    import torch

    result, seconds, mib = bench.measure(lambda: torch.ones(64 * 2**20 // 4).sum())
    assert float(result) == 64 * 2**20 // 4 and seconds >= 0 and mib > 32
