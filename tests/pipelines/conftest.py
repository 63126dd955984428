"""Tiny real datasets shared by the stage-kind tests (built once per session, on first use)."""

from __future__ import annotations

from pathlib import Path

import pytest
from stage_datasets import make_dataset


@pytest.fixture(scope="session")
def toolforge_dataset(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return make_dataset("toolforge", tmp_path_factory.mktemp("stage-data") / "dialogues")


@pytest.fixture(scope="session")
def papyrus_dataset(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return make_dataset("papyrus", tmp_path_factory.mktemp("stage-data") / "corpus")


@pytest.fixture(scope="session")
def optiscribe_dataset(tmp_path_factory: pytest.TempPathFactory) -> Path:
    pytest.importorskip("pyscipopt")
    pytest.importorskip("ortools")
    return make_dataset("optiscribe", tmp_path_factory.mktemp("stage-data") / "milps")


@pytest.fixture(scope="session")
def lob_dataset(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return make_dataset("lob", tmp_path_factory.mktemp("stage-data") / "rollouts")


@pytest.fixture(scope="session")
def dasa_dataset(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """Two DASA rows against an untrained tiny reference LM (one pre-training step: a model, not a good one)."""
    pytest.importorskip("peft")
    from synth.generators.dasa.base_lm import build_base_lm

    root = tmp_path_factory.mktemp("stage-data")
    model = build_base_lm(root / "base-lm", seed=0, steps=1)
    return make_dataset("dasa", root / "embeddings", model=str(model))
