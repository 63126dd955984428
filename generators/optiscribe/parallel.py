"""Solve many model texts under fixed SCIP settings, in a few worker processes.

Results do not depend on the number of workers: each solve is one-threaded with fixed seeds and a node cap, so
status, nodes and deterministic time are the same; only wall-clock time grows when workers share a core.
"""

from __future__ import annotations

from collections.abc import Sequence
from concurrent.futures import ProcessPoolExecutor

from synth.validators.optiscribe.scip import ScipSettings, ScipStats, solve_model_text


def _solve(job: tuple[str, ScipSettings]) -> ScipStats:
    text, settings = job
    return solve_model_text(text, settings=settings)


def solve_many(jobs: Sequence[tuple[str, ScipSettings]], *, workers: int = 1) -> list[ScipStats]:
    """SCIP statistics of each (LP text, settings) job, in order."""
    if workers <= 1 or len(jobs) <= 1:
        return [_solve(job) for job in jobs]
    with ProcessPoolExecutor(max_workers=min(workers, len(jobs))) as pool:
        return list(pool.map(_solve, jobs))
