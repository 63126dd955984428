"""`synth run` on the DASA domain: the tiny base LM built on first use, a dataset `load_dataset` reads and a LoRA
run trains on without text, byte-identical reruns, and the one-line error for a dataset used with another model."""

import pytest
from typer.testing import CliRunner

from synth.cli.app import app

pytest.importorskip("torch")
pytest.importorskip("peft")

runner = CliRunner()
SMALL = ["--set", "generator.base_steps=40", "--set", "generator.m=4", "--set", "generator.steps=3", "--no-progress"]


@pytest.fixture(scope="module")
def cache(tmp_path_factory):
    with pytest.MonkeyPatch.context() as patch:
        path = tmp_path_factory.mktemp("cache")
        patch.setenv("SYNTH_CACHE_DIR", str(path))
        yield path


def run_dasa(out, *extra):
    result = runner.invoke(app, ["generate", "dasa", "--out", str(out), "--shards", "2", *SMALL, *extra])
    assert result.exit_code == 0, result.output
    return out


@pytest.fixture(scope="module")
def dataset(cache, tmp_path_factory):
    return run_dasa(tmp_path_factory.mktemp("dasa") / "out")


def test_dataset_loads_and_trains_without_text(dataset, cache):
    import datasets

    from synth.generators.dasa.base_lm import load_reference
    from synth.generators.dasa.lora import train_lora
    from synth.trainers.dasa.data import load_rows

    table = datasets.load_dataset(str(dataset), split="train", cache_dir=str(cache / "hf"))
    assert table.num_rows == 4
    assert all(a > s for s, a in zip(table["alignment_start"], table["alignment"], strict=True))
    reference = load_reference(cache / "dasa" / "base-lm-seed0-steps40")
    rows = load_rows(dataset, reference)
    assert rows.inputs_embeds is not None and rows.inputs_embeds.shape[-1] == 64
    model = train_lora(reference, rows, steps=2, batch_size=2)
    assert any(n for n, p in model.named_parameters() if "lora_B" in n and p.abs().sum() > 0)


def test_same_seed_gives_byte_identical_shards(dataset, tmp_path):
    again = run_dasa(tmp_path / "again")
    first, second = sorted((dataset / "data").glob("*.parquet")), sorted((again / "data").glob("*.parquet"))
    assert len(first) == 2 and [p.read_bytes() for p in first] == [p.read_bytes() for p in second]


def test_dataset_with_another_reference_model_fails_naming_both(dataset, cache, tmp_path):
    from synth.generators.dasa.base_lm import build_base_lm, load_reference
    from synth.trainers.dasa.data import ReferenceMismatchError, load_rows

    other = load_reference(build_base_lm(tmp_path / "other", seed=1, steps=1))
    with pytest.raises(ReferenceMismatchError) as error:
        load_rows(dataset, other)
    message = str(error.value)
    assert "\n" not in message
    assert "base-lm-seed0-steps40@" in message and f"other@{other.embedding_hash}" in message


def test_train_base_lm_and_lora_embeds_commands(dataset, cache, tmp_path):
    reference = cache / "dasa" / "base-lm-seed0-steps40"
    trained = runner.invoke(
        app, ["train", "lora-embeds", str(dataset), "--model", str(reference), "--steps", "2", "--test-rows", "3"]
    )
    assert trained.exit_code == 0, trained.output
    assert '"exact_match"' in trained.stdout and '"task"' in trained.stdout
    other = tmp_path / "other"
    built = runner.invoke(app, ["train", "base-lm", "--out", str(other), "--seed", "1", "--steps", "1"])
    assert built.exit_code == 0, built.output
    refused = runner.invoke(app, ["train", "lora-embeds", str(dataset), "--model", str(other), "--steps", "1"])
    assert refused.exit_code == 2
    assert "made with reference model" in refused.output and "other@" in refused.output
