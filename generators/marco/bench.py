"""Benchmark: Same-1, Same-B (feedback-guided) and best-of-B independent samples on the same sources and budget.

For each task and instruction setting, every source gets one feedback trajectory of `budget` turns (stopping at
success) and `budget` independent proposals, from the scripted proposer (guided, and unguided for independent
samples), plus `budget` uniform random mol-ga edits (the research note's local anchor). Same-b and best-of-b for
every b ≤ `budget` are prefixes of these (a feedback trajectory with budget b is the first b turns of a longer one
drawn with the same generator), which gives the SR×Sim-per-budget curve for free.

Metrics per strategy (each source scored on its picked turn, see `trajectory.pick_turn`):
`success_rate` (successes / all sources), `similarity` (mean Tanimoto over successful sources, GeLLMO),
`sr_x_sim` (= the mean over sources of the picked similarity if successful, else 0), `similarity_valid` (mean
over sources with a valid pick, RePO), `validity` (sources with ≥ 1 valid turn), `turn_validity`, `novelty`
(successful picks that are neither a source nor a ZINC250k entry), `diversity` (1 − mean pairwise Tanimoto of the
successful picks across sources), `diversity_within` (of each source's distinct valid proposals, averaged),
`oracle_calls` (graded turns per source). Same-B minus best-of-B (and minus random best-of-B) SR×Sim comes with
a paired bootstrap 95 % interval over sources. Throughput: trajectories per minute of busy time of one worker, per
strategy, and all three strategies' trajectories per wall minute.
"""

from __future__ import annotations

import hashlib
import json
import time
from collections.abc import Sequence
from concurrent.futures import ProcessPoolExecutor
from dataclasses import dataclass
from functools import cache
from pathlib import Path
from random import Random
from typing import Any, Literal

from synth.generators.marco.proposers import ProposalState, RandomEditProposer, ScriptedProposer
from synth.generators.marco.sources import MarcoSource, read_sources, zinc_smiles
from synth.generators.marco.tasks import Setting, get_task
from synth.generators.marco.trajectory import Trajectory, TrajectorySettings, pick_turn, run_trajectory
from synth.validators.marco.evaluator import MoleculeEvaluator, SuccessProtocol

Strategy = Literal["same", "best_of", "random_best_of"]
STRATEGIES: tuple[Strategy, ...] = ("same", "best_of", "random_best_of")


def trajectory_seed(*parts: object) -> int:
    """A 63-bit seed from the parts (run seed, task, setting, source id, strategy), independent of order of work."""
    key = "|".join(str(p) for p in parts)
    return int.from_bytes(hashlib.blake2b(key.encode(), digest_size=8).digest(), "little") >> 1


@dataclass(frozen=True)
class SourceRun:
    """The three strategies' trajectories for one source."""

    source_id: str
    source: str
    trajectories: dict[str, Trajectory]
    seconds: dict[str, float]


def run_source(
    source: MarcoSource, *, setting: Setting, budget: int, protocol: SuccessProtocol, seed: int
) -> SourceRun:
    """Draw the feedback trajectory, the independent proposals and the random edits of one source."""
    task = get_task(source.task)
    evaluator = _evaluator(task.properties, protocol)
    state = ProposalState(
        task,
        setting,
        task.instruction(source.smiles, setting=setting, template=source.template(setting)),
        evaluator.profile(source.smiles),
    )
    plans = {
        "same": (ScriptedProposer(guided=True), "feedback"),
        "best_of": (ScriptedProposer(guided=False), "independent"),
        "random_best_of": (RandomEditProposer(), "independent"),
    }
    trajectories, seconds = {}, {}
    for name, (proposer, mode) in plans.items():
        started = time.perf_counter()
        trajectories[name] = run_trajectory(
            state,
            proposer=proposer,
            evaluator=evaluator,
            rng=Random(trajectory_seed(seed, task.name, setting, source.source_id, name)),
            settings=TrajectorySettings(budget=budget, mode=mode),  # type: ignore[arg-type]
        )
        seconds[name] = time.perf_counter() - started
    return SourceRun(source.source_id, state.source.canonical, trajectories, seconds)


@cache
def _evaluator(properties: tuple[str, ...], protocol: SuccessProtocol) -> MoleculeEvaluator:
    return MoleculeEvaluator(properties=properties, protocol=protocol)


@cache
def _zinc_set() -> frozenset[str]:
    return frozenset(zinc_smiles())


def _mean(values: Sequence[float]) -> float | None:
    return sum(values) / len(values) if values else None


def _within_diversity(smiles: Sequence[str]) -> float | None:
    from rdkit import Chem

    from synth.validators.marco.similarity import mean_pairwise_distance

    distinct = sorted(set(smiles))
    return mean_pairwise_distance([Chem.MolFromSmiles(s) for s in distinct]) if len(distinct) > 1 else None


def score_strategy(runs: Sequence[SourceRun], strategy: str, *, budget: int) -> dict[str, Any]:
    """Metrics of one strategy over all sources, using the first `budget` turns of each trajectory."""
    from rdkit import Chem

    from synth.validators.marco.similarity import mean_pairwise_distance

    sources = {run.source for run in runs}
    successes, valid_sims, within, turns, valid_turns, any_valid = [], [], [], 0, 0, 0
    for run in runs:
        prefix = run.trajectories[strategy].turns[:budget]
        turns += len(prefix)
        valid_turns += sum(t.evaluation.valid for t in prefix)
        any_valid += any(t.evaluation.valid for t in prefix)
        picked = pick_turn(prefix)
        if picked is not None:
            valid_sims.append(picked.evaluation.similarity or 0.0)
            if picked.evaluation.success:
                successes.append(picked)
        div = _within_diversity([t.evaluation.canonical for t in prefix if t.evaluation.canonical])
        if div is not None:
            within.append(div)
    count = len(runs)
    sims = [t.evaluation.similarity or 0.0 for t in successes]
    picked_smiles = [t.evaluation.canonical or "" for t in successes]
    novel = [s for s in picked_smiles if s not in sources and s not in _zinc_set()]
    success_rate = len(successes) / count if count else 0.0
    similarity = _mean(sims)
    return {
        "sources": count,
        "success_rate": success_rate,
        "similarity": similarity,
        "sr_x_sim": success_rate * (similarity or 0.0),
        "similarity_valid": _mean(valid_sims),
        "validity": any_valid / count if count else 0.0,
        "turn_validity": valid_turns / turns if turns else 0.0,
        "novelty": len(novel) / len(successes) if successes else None,
        "diversity": mean_pairwise_distance([Chem.MolFromSmiles(s) for s in picked_smiles]),
        "diversity_within": _mean(within),
        "oracle_calls": turns / count if count else 0.0,
    }


def source_scores(runs: Sequence[SourceRun], strategy: str, *, budget: int) -> list[float]:
    """Each source's share of SR×Sim: the similarity of its picked turn if it succeeded, else 0 (mean = SR×Sim)."""
    scores = []
    for run in runs:
        picked = pick_turn(run.trajectories[strategy].turns[:budget])
        success = picked is not None and picked.evaluation.success
        scores.append((picked.evaluation.similarity or 0.0) if success else 0.0)  # type: ignore[union-attr]
    return scores


def paired_difference(
    runs: Sequence[SourceRun], first: str, second: str, *, budget: int, resamples: int = 2000, seed: int = 0
) -> dict[str, Any]:
    """SR×Sim of `first` minus `second` on the same sources, with a paired bootstrap 95 % interval."""
    import numpy as np

    diffs = np.asarray(source_scores(runs, first, budget=budget)) - np.asarray(
        source_scores(runs, second, budget=budget)
    )
    rng = np.random.Generator(np.random.PCG64(seed))
    means = diffs[rng.integers(0, len(diffs), size=(resamples, len(diffs)))].mean(axis=1)
    low, high = np.quantile(means, [0.025, 0.975])
    return {
        "difference": float(diffs.mean()),
        "ci95": [float(low), float(high)],
        "first_better": int((diffs > 0).sum()),
        "second_better": int((diffs < 0).sum()),
        "ties": int((diffs == 0).sum()),
    }


def _run_chunk(args: tuple[list[MarcoSource], Setting, int, SuccessProtocol, int]) -> list[SourceRun]:
    sources, setting, budget, protocol, seed = args
    return [run_source(s, setting=setting, budget=budget, protocol=protocol, seed=seed) for s in sources]


def run_sources(
    sources: Sequence[MarcoSource], *, setting: Setting, budget: int, protocol: SuccessProtocol, seed: int, workers: int
) -> list[SourceRun]:
    """All sources' runs in source order (a process pool when `workers` > 1)."""
    chunks = [list(sources[i::workers]) for i in range(workers)] if workers > 1 else [list(sources)]
    jobs = [(chunk, setting, budget, protocol, seed) for chunk in chunks]
    if workers > 1:
        with ProcessPoolExecutor(max_workers=workers) as pool:
            results = list(pool.map(_run_chunk, jobs))
    else:
        results = [_run_chunk(job) for job in jobs]
    by_id = {run.source_id: run for runs in results for run in runs}
    return [by_id[s.source_id] for s in sources]


def _throughput(runs: Sequence[SourceRun], *, wall_seconds: float, workers: int) -> dict[str, Any]:
    """Trajectories per minute of each strategy (busy CPU seconds of one worker), and of the whole group."""
    per_strategy = {}
    for name in STRATEGIES:
        busy = sum(run.seconds[name] for run in runs)
        per_strategy[name] = len(runs) / (busy / 60) if busy else None
    return {
        "per_worker_minute": per_strategy,
        "group_wall_per_minute": 3 * len(runs) / (wall_seconds / 60) if wall_seconds else None,
        "workers": workers,
    }


def _group_report(runs: Sequence[SourceRun], *, budget: int) -> dict[str, Any]:
    curves = {
        name: [score_strategy(runs, name, budget=b)["sr_x_sim"] for b in range(1, budget + 1)] for name in STRATEGIES
    }
    return {
        "same_1": score_strategy(runs, "same", budget=1),
        f"same_{budget}": score_strategy(runs, "same", budget=budget),
        f"best_of_{budget}": score_strategy(runs, "best_of", budget=budget),
        "random_same_1": score_strategy(runs, "random_best_of", budget=1),
        f"random_best_of_{budget}": score_strategy(runs, "random_best_of", budget=budget),
        "sr_x_sim_by_budget": curves,
        f"same_{budget}_minus_best_of_{budget}": paired_difference(runs, "same", "best_of", budget=budget),
        f"same_{budget}_minus_random_best_of_{budget}": paired_difference(
            runs, "same", "random_best_of", budget=budget
        ),
        "stop_reasons": {
            reason: sum(r.trajectories["same"].stop_reason == reason for r in runs) for reason in ("success", "budget")
        },
    }


def plot_curves(report: dict[str, Any], path: Path) -> None:
    """A PNG of SR×Sim against the budget, one line per strategy and group."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    figure, axis = plt.subplots(figsize=(7, 4.5))
    styles = {"same": "-o", "best_of": "--s", "random_best_of": ":^"}
    colours = plt.rcParams["axes.prop_cycle"].by_key()["color"]
    for index, (group, result) in enumerate(report["groups"].items()):
        for name, values in result["sr_x_sim_by_budget"].items():
            budgets = range(1, len(values) + 1)
            axis.plot(budgets, values, styles[name], color=colours[index % len(colours)], label=f"{group} {name}")
    axis.set_xticks(range(1, report["budget"] + 1))
    axis.set_xlabel("budget (graded responses per source)")
    axis.set_ylabel("SR × Sim")
    axis.set_title("MARCO: feedback-guided Same-b vs best-of-b independent")
    axis.grid(alpha=0.3)
    axis.legend(fontsize=7)
    figure.tight_layout()
    path.parent.mkdir(parents=True, exist_ok=True)
    figure.savefig(path, dpi=120)
    plt.close(figure)


def bench_marco(
    *,
    tasks: Sequence[str] = ("BPQ",),
    settings: Sequence[Setting] = ("seen", "unseen"),
    sources: int | None = 500,
    budget: int = 5,
    protocol: SuccessProtocol = "gellmo",
    seed: int = 0,
    workers: int = 1,
    plot: Path | None = None,
) -> dict[str, Any]:
    """Run the benchmark (module docstring) and return a JSON-able report; write the PNG to `plot` if given.

    `sources` caps the sources per task (file order; None = all shipped). The scripted proposer does not read
    the instruction wording, so seen and unseen differ only by their random draws.
    """
    report: dict[str, Any] = {
        "protocol": protocol,
        "budget": budget,
        "seed": seed,
        "workers": workers,
        "definitions": __doc__,
        "groups": {},
    }
    started = time.perf_counter()
    for name in tasks:
        task = get_task(name)
        chosen = list(read_sources(task.name))[: sources if sources is not None else None]
        evaluator = _evaluator(task.properties, protocol)
        for setting in settings if task.origin == "mumoinstruct" else ("seen",):
            group_started = time.perf_counter()
            runs = run_sources(chosen, setting=setting, budget=budget, protocol=protocol, seed=seed, workers=workers)
            group = _group_report(runs, budget=budget)
            group["trajectories_per_minute"] = _throughput(
                runs, wall_seconds=time.perf_counter() - group_started, workers=workers
            )
            group["unavailable_properties"] = list(evaluator.unavailable())
            group["scored_properties"] = [k for k in evaluator.counted() if k not in evaluator.unavailable()]
            report["groups"][f"{task.name}/{setting}"] = group
    report["wall_seconds"] = time.perf_counter() - started
    if plot is not None:
        plot_curves(report, plot)
        report["plot"] = str(plot)
    return json.loads(json.dumps(report))
