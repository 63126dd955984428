"""Held-out MARCO evaluation of policies on the same sources and budget: Same-1 and Same-B SR×Sim, validity.

Each policy (a local model through the `llm` proposer on the batched transformers backend, or the scripted
proposer) runs one feedback trajectory of `budget` turns per held-out source (all of a policy's trajectories in
lockstep, so each turn is one batch of backend calls); Same-b is the first b turns. Scores are
`generators.marco.bench.score_strategy`'s (picked turn per source), and each pair of policies gets a paired
bootstrap 95 % interval of its SR×Sim difference over the sources (`paired_difference`).
"""

from __future__ import annotations

import time
from collections.abc import Mapping
from pathlib import Path
from random import Random
from typing import Any


def evaluate_policies(
    models: Mapping[str, Path],
    *,
    task: str = "BPQ",
    start: int = 300,
    count: int = 200,
    budget: int = 5,
    seed: int = 0,
    temperature: float = 0.0,
    max_tokens: int = 160,
    batch_size: int = 32,
    include_scripted: bool = True,
) -> dict[str, Any]:
    """Scores of each model in `models` (name → folder) and of the scripted proposer on sources [start, start+count)."""
    from synth.core.llm_backends import TransformersBackend
    from synth.generators.marco.bench import SourceRun, paired_difference, score_strategy, trajectory_seed
    from synth.generators.marco.proposers import LLMProposer, ProposalState, ScriptedProposer
    from synth.generators.marco.sources import read_sources
    from synth.generators.marco.tasks import get_task
    from synth.generators.marco.trajectory import TrajectorySettings, run_trajectories
    from synth.trainers.grpo.marco_reward import marco_evaluator

    marco_task = get_task(task)
    sources = read_sources(task)[start : start + count]
    evaluator = marco_evaluator(task, "gellmo", "reject")
    states = []
    for source in sources:
        instruction = marco_task.instruction(source.smiles, setting="seen", template=source.template("seen"))
        states.append(ProposalState(marco_task, "seen", instruction, evaluator.profile(source.smiles)))
    proposers: dict[str, Any] = {}
    if include_scripted:
        proposers["scripted"] = ScriptedProposer(guided=True)
    for name, folder in models.items():
        backend = TransformersBackend(folder, batch_size=batch_size)
        proposers[name] = LLMProposer(backend, model=name, temperature=temperature, max_tokens=max_tokens)
    settings = TrajectorySettings(budget=budget, mode="feedback")
    trajectories: dict[str, list[Any]] = {}
    seconds: dict[str, float] = {}
    for name, proposer in proposers.items():
        started = time.perf_counter()
        starts = [
            (s, Random(trajectory_seed(seed, task, src.source_id, name)))
            for s, src in zip(states, sources, strict=True)
        ]
        trajectories[name] = run_trajectories(starts, proposer=proposer, evaluator=evaluator, settings=settings)
        seconds[name] = round(time.perf_counter() - started, 2)
    runs = [
        SourceRun(src.source_id, state.source.canonical, {n: t[i] for n, t in trajectories.items()}, {})
        for i, (src, state) in enumerate(zip(sources, states, strict=True))
    ]
    names = list(proposers)
    report: dict[str, Any] = {
        "task": task,
        "sources": {"start": start, "count": len(sources)},
        "budget": budget,
        "temperature": temperature,
        "policies": {
            n: {
                "same_1": score_strategy(runs, n, budget=1),
                f"same_{budget}": score_strategy(runs, n, budget=budget),
                "seconds": seconds[n],
            }
            for n in names
        },
        "paired": {},
    }
    for i, first in enumerate(names):
        for second in names[i + 1 :]:
            for b in (1, budget):
                key = f"{second}_minus_{first}_same_{b}"
                report["paired"][key] = paired_difference(runs, second, first, budget=b)
    return report
