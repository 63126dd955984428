"""Tiny real datasets for stage-kind tests: each made by its domain's generator through the local engine."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from synth.core.config import parse_config
from synth.core.stage import StageContext, StageInput
from synth.pipelines.execution import run_local

TINY_GENERATORS: dict[str, dict[str, Any]] = {
    "toolforge": {
        "limit": 4,
        "dialogues_per_seed": 1,
        "variants_per_family": 0,
        "distractors": [0, 0],
        "top_k": [1, 1],
    },
    "papyrus": {"levels": [0.05, 0.2], "variants": ["uniform"], "sources": ["epidoc"]},
    "optiscribe": {
        "curriculum": ["a max-cut problem with 12 nodes, density 0.4"],
        "rounds": 1,
        "candidates": 3,
        "advance_reward": 0.2,
        "scip": {"total_nodes": 1000},
    },
    "lob": {"windows": 2, "horizon": 120},
    "dasa": {"m": 2, "steps": 1, "source_rows": 8},
}


def tiny_payload(domain: str, **generator: Any) -> dict[str, Any]:
    """A one-shard config of `domain` small enough for a test (generator settings override the tiny ones)."""
    return {"domain": domain, "seed": 1, "shards": 1, "generator": {**TINY_GENERATORS[domain], **generator}}


def make_dataset(domain: str, out: Path, **generator: Any) -> Path:
    """Run the tiny config of `domain` into `out` and return `out`."""
    summary = run_local(parse_config(tiny_payload(domain, **generator)), out)
    assert summary.manifest["status"] == "complete" and summary.manifest["totals"]["rows"] > 0
    return out


def dataset_input(path: Path, domain: str | None, *, name: str | None = None) -> StageInput:
    """A generate stage's dataset as a later stage sees it."""
    return StageInput(name=name or path.name, path=path, kind="generate", domain=domain)


def stage_context(work: Path, *inputs: StageInput, seed: int = 0, name: str = "stage") -> StageContext:
    """A context as the engine builds it: a fresh, empty work folder."""
    work.mkdir(parents=True)
    return StageContext(name=name, work=work, inputs=inputs, seed=seed)
