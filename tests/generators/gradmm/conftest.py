"""A tiny base LM built once per session (a few seconds of pre-training)."""

import pytest

pytest.importorskip("torch")
pytest.importorskip("transformers")


@pytest.fixture(scope="session")
def base_lm_dir(tmp_path_factory):
    from synth.trainers.dasa.base_lm import build_base_lm

    return build_base_lm(tmp_path_factory.mktemp("dasa") / "base-lm", seed=0, steps=150)


@pytest.fixture
def reference(base_lm_dir):
    from synth.trainers.dasa.base_lm import load_reference

    return load_reference(base_lm_dir)
