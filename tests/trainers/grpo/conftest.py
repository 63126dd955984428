"""A tiny MARCO dataset (the real generator, scripted proposer) and a tiny chat model for the GRPO tests."""

from __future__ import annotations

from pathlib import Path

import pytest
from tiny_models import save_tiny_chat_model

from synth.core.config import parse_config
from synth.pipelines.execution import run_local


def make_marco_dataset(out: Path, *, sources: int = 3, budget: int = 2) -> Path:
    """PQS trajectories of the scripted proposer: `sources` sources, seen setting, 2 per group."""
    generator = {"task": "PQS", "sources": sources, "settings": ["seen"], "group_size": 2, "budget": budget}
    run_local(parse_config({"domain": "marco", "seed": 1, "shards": 1, "generator": generator}), out)
    return out


@pytest.fixture(scope="session")
def marco_dataset(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return make_marco_dataset(tmp_path_factory.mktemp("marco") / "data")


@pytest.fixture(scope="session")
def tiny_model(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return save_tiny_chat_model(tmp_path_factory.mktemp("tiny") / "model")
