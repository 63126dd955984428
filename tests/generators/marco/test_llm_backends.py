"""MARCO's `llm` proposer on a model backend: one batched generate call per turn, a cached rerun calls nothing."""

from __future__ import annotations

import math

import pytest
from tiny_models import save_tiny_chat_model

from synth.core.llm_backends import LLMBackendConfig
from synth.core.steps import ShardContext
from synth.generators.marco.generator import MarcoLLMSettings, MarcoTrajectoryGenerator

pytest.importorskip("transformers")


def _generator(model, cache, *, batch_size: int) -> MarcoTrajectoryGenerator:
    backend = LLMBackendConfig(backend="transformers", model=str(model), cache=str(cache), batch_size=batch_size)
    return MarcoTrajectoryGenerator(
        name="marco-llm",
        task="PQS",
        settings=("seen",),
        sources=3,
        group_size=2,
        budget=2,
        proposer="llm",
        llm=MarcoLLMSettings(backend, temperature=1.0, max_tokens=12),
    )


def _rows(generator: MarcoTrajectoryGenerator) -> list[dict]:
    ctx = ShardContext(seed=3, shard_index=0, num_shards=1, config_hash="x")
    return [row for batch in generator.generate(ctx) for row in batch.rows]


def test_transformers_backend_batches_turns_and_the_cache_answers_a_rerun(tmp_path) -> None:
    model = save_tiny_chat_model(tmp_path / "tiny")
    first = _generator(model, tmp_path / "cache.sqlite", batch_size=4)
    rows = _rows(first)
    assert len(rows) == 6 and {r["proposer"] for r in rows} == {"llm"}
    inner = first.proposer_impl.backend.backend
    turns = max(r["n_turns"] for r in rows)
    # 6 trajectories per turn in batches of 4: at most 2 generate calls per turn, never one per request
    assert inner.generate_calls <= turns * math.ceil(6 / 4)
    assert first.proposer_impl.backend.misses == sum(r["n_turns"] for r in rows)
    rerun = _generator(model, tmp_path / "cache.sqlite", batch_size=4)
    assert _rows(rerun) == rows
    assert rerun.proposer_impl.backend.backend.generate_calls == 0
    assert rerun.proposer_impl.backend.misses == 0


def test_backend_config_is_checked_when_built() -> None:
    with pytest.raises(ValueError, match="needs `model`"):
        LLMBackendConfig(backend="transformers")
    with pytest.raises(ValueError, match="needs `model` and `base_url`"):
        LLMBackendConfig(backend="openai", model="m")
