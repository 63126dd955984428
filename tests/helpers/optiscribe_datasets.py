"""A tiny OptiScribe dataset over a two-size curriculum (12 then 14 nodes), made by the real generator: 3 rows."""

from __future__ import annotations

from pathlib import Path

from stage_datasets import make_dataset

CURRICULUM = ("a max-cut problem with 12 nodes, density 0.4", "a max-cut problem with 14 nodes, density 0.4")


def make_curriculum_dataset(out: Path) -> Path:
    """Two rounds of three proposals, one curriculum level per round (trivial instances are filtered out)."""
    return make_dataset("optiscribe", out, curriculum=list(CURRICULUM), rounds=2, candidates=3, advance_reward=0.0)
