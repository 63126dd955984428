"""The DASA domain: synthetic input embeddings aligned with a source task's desired update (or GRADMM text).

`model: null` builds the tiny reference LM on first use (deterministic: same settings, same weights) in
`$SYNTH_CACHE_DIR/dasa/` (default `~/.cache/synth/dasa/`) and reuses it afterwards.
"""

from __future__ import annotations

import os
from pathlib import Path
from typing import Literal

from pydantic import Field, PositiveInt

from synth.core.config import StrictModel
from synth.core.registry import DomainSpec
from synth.core.steps import Generator, Verifier


class DasaConfig(StrictModel):
    """Generator settings of the DASA domain."""

    method: Literal["dasa", "gradmm"] = Field("dasa", description="dasa; gradmm (the baseline, readable tokens)")
    model: str | None = Field(None, description="reference LM directory; null = the tiny base LM, built once")
    base_seed: int = Field(0, description="seed of the tiny base LM (model: null)")
    base_steps: PositiveInt = Field(300, description="pre-training steps of the tiny base LM (model: null)")
    task: Literal["copy", "reverse", "shift", "sort", "add", "recall", "increment", "cipher"] = "shift"
    source_rows: PositiveInt = Field(64, description="source examples of the task (seeded by the run seed)")
    m: PositiveInt = Field(8, description="synthetic rows in all, split over shards")
    steps: PositiveInt = Field(20, description="optimisation steps (dasa) or ADMM outer steps (gradmm)")
    space: Literal["full", "lora", "lowrank"] = Field("full", description="match space (dasa)")
    rank: PositiveInt = Field(8, description="LoRA r (space lora) or SVD rank (space lowrank)")
    groups: PositiveInt = Field(2, description="per-group targets: source groups per shard")
    beta: float = Field(1e-2, ge=0.0, description="embedding-norm regulariser weight (dasa)")
    target: Literal["one-step", "trajectory", "states", "self-states"] = Field(
        "one-step",
        description="desired update (dasa): θ₀ gradient, a short source LoRA run's ΔW, states along it, or the "
        "states of LoRA runs on the synthetic rows themselves (self-states)",
    )


def cache_dir() -> Path:
    """Where built base LMs are kept."""
    return Path(os.environ.get("SYNTH_CACHE_DIR", "~/.cache/synth")).expanduser() / "dasa"


def resolve_model(config: DasaConfig) -> Path:
    """The reference model directory, building the tiny base LM when `model` is null."""
    if config.model:
        return Path(config.model).expanduser()
    from synth.generators.dasa.base_lm import build_base_lm

    target = cache_dir() / f"base-lm-seed{config.base_seed}-steps{config.base_steps}"
    target.parent.mkdir(parents=True, exist_ok=True)
    return build_base_lm(target, seed=config.base_seed, steps=config.base_steps)


def build_generator(config: DasaConfig) -> Generator:
    """The generator for a validated config; loads (or builds) the reference model before any shard starts."""
    from synth.generators.dasa.generator import DasaGenerator

    settings: dict[str, object] = {"steps": config.steps, "groups": config.groups}
    if config.method == "dasa":
        settings |= {"space": config.space, "rank": config.rank, "beta": config.beta, "target": config.target}
    generator = DasaGenerator(
        name=config.method,
        version="1",
        method=config.method,
        model_dir=resolve_model(config),
        task=config.task,
        source_rows=config.source_rows,
        m=config.m,
        settings=settings,
    )
    _ = generator.reference
    return generator


def build_verifiers(config: DasaConfig) -> dict[str, Verifier]:
    """DASA rows have no verifier: their check is downstream training (`synth bench dasa`)."""
    return {}


DOMAIN = DomainSpec(
    name="dasa",
    summary=(
        "DASA: continuous input embeddings optimised by double backprop so that the update they induce in a frozen "
        "reference LM aligns with a source task's desired update (activation gradients at the LoRA targets); "
        "GRADMM (gradient matching with ADMM and projection to readable tokens) as the baseline."
    ),
    config_model=DasaConfig,
    build_generator=build_generator,
    build_verifiers=build_verifiers,
    verifier_names=(),
    card_defaults={"pretty_name": "DASA synthetic embeddings", "license": "other", "tags": ["dasa", "synthetic"]},
)
