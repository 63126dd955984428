"""Benchmark: self-played instances vs the Ecole-style default generator at the same fixed size.

For each family (capacitated facility location and max-cut by default) the CEM challenger self-plays
`rounds` × `candidates` proposals on one fixed-size instruction; then `eval_instances` instances are drawn from
the trained policy and as many from the default parameterisation, with the same instance seeds, and all are
solved under the same SCIP settings. Reported per group: feasibility rate before any filter, instruction-
following rate (sizes and density measured from the model), median nodes and post-cut gap, node deciles,
trivial share, OR-Tools agreement; and the self-play / default ratios of the medians.
"""

from __future__ import annotations

import json
import statistics
import time
from collections import Counter
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any, Literal

import numpy as np

from synth.generators.optiscribe.build import build_model_text
from synth.generators.optiscribe.selfplay import Policy, SelfPlaySettings, run_selfplay
from synth.validators.optiscribe.crosscheck import CrossCheckSettings, agreement, crosscheck_model_text
from synth.validators.optiscribe.grammar import parse_instruction
from synth.validators.optiscribe.reading import read_model_text
from synth.validators.optiscribe.request import InstanceRequest
from synth.validators.optiscribe.reward import is_trivial
from synth.validators.optiscribe.scip import ScipSettings, solve_model_text
from synth.validators.optiscribe.spec import InstanceSpec, SpecError
from synth.validators.optiscribe.structure import instruction_violations, measure_structure

BENCH_INSTRUCTIONS: dict[str, str] = {
    "facility_location": "a capacitated facility location problem with 30 customers and 10 facilities, hard",
    "max_cut": "a max-cut problem with 30 nodes, density 0.3, hard",
}
DECILES = tuple(round(0.1 * k, 1) for k in range(1, 10))


def _evaluate_instance(
    spec: InstanceSpec | None,
    *,
    request: InstanceRequest,
    seed: int,
    scip: ScipSettings,
    crosscheck: CrossCheckSettings | None,
) -> dict[str, Any]:
    """Build, solve, check instruction following and (optionally) cross-check one instance."""
    if spec is None:
        return {"built": False, "feasible": False, "followed": False}
    text = build_model_text(spec, seed=seed)
    stats = solve_model_text(text, settings=scip)
    measured = measure_structure(read_model_text(text), spec.family)
    result: dict[str, Any] = {
        "built": True,
        "feasible": stats.feasible,
        "followed": not instruction_violations(measured, request.asked()),
        "nodes": stats.nodes,
        "postcut_gap": stats.postcut_gap,
        "status": stats.status,
        "wall_seconds": stats.wall_seconds,
        "deterministic_time": stats.deterministic_time,
        "knobs": dict(spec.knobs),
    }
    if crosscheck is not None:
        check = crosscheck_model_text(text, settings=crosscheck)
        reason = agreement(
            check, scip_status=stats.status, scip_feasible=stats.feasible, scip_objective=stats.primal_bound
        )
        result["crosscheck"] = (
            "unchecked" if check.status in {"skipped", "not_solved"} else ("agree" if reason is None else "disagree")
        )
    return result


def _quantiles(values: Sequence[float]) -> dict[str, float] | None:
    if not values:
        return None
    points = np.quantile(np.asarray(values, dtype=float), DECILES)
    return {
        "min": float(min(values)),
        **{f"p{int(q * 100)}": float(v) for q, v in zip(DECILES, points, strict=True)},
        "max": float(max(values)),
    }


def summarise_group(results: Sequence[Mapping[str, Any]]) -> dict[str, Any]:
    """Rates, medians and node deciles of one group of evaluated instances."""
    total = len(results)
    feasible = [r for r in results if r["feasible"]]
    nodes = [r["nodes"] for r in feasible]
    gaps = [r["postcut_gap"] for r in feasible if r["postcut_gap"] is not None]
    checks = [r.get("crosscheck") for r in results if r.get("crosscheck") in {"agree", "disagree"}]
    return {
        "instances": total,
        "feasibility_rate": len(feasible) / total if total else 0.0,
        "instruction_following_rate": sum(r["followed"] for r in results) / total if total else 0.0,
        "median_nodes": statistics.median(nodes) if nodes else None,
        "median_postcut_gap": statistics.median(gaps) if gaps else None,
        "trivial_rate": sum(is_trivial(r["nodes"], r["postcut_gap"]) for r in feasible) / total if total else 0.0,
        "node_deciles": _quantiles(nodes),
        "crosscheck_agreement": (checks.count("agree") / len(checks)) if checks else None,
        "crosschecked": len(checks),
        "statuses": dict(sorted(Counter(r.get("status", "not_built") for r in results).items())),
        "median_deterministic_time": statistics.median([r["deterministic_time"] for r in feasible])
        if feasible
        else None,
        "wall_seconds": round(sum(r.get("wall_seconds", 0.0) for r in results), 2),
    }


def _ratio(numerator: float | None, denominator: float | None) -> float | None:
    if numerator is None or denominator is None or denominator == 0:
        return None
    return numerator / denominator


def _sample_policy(policy: Policy, request: InstanceRequest, rng: np.random.Generator) -> InstanceSpec | None:
    try:
        return policy.sample(request, rng).spec
    except SpecError:
        return None


def bench_family(
    instruction: str,
    *,
    seed: int,
    settings: SelfPlaySettings,
    eval_instances: int,
    crosscheck: CrossCheckSettings | None,
    state_path: Path | None = None,
) -> dict[str, Any]:
    """Self-play on one instruction, then evaluate the trained policy against the default parameterisation."""
    request = parse_instruction(instruction)
    start = time.perf_counter()
    _, state = run_selfplay([instruction], settings=settings, seed=seed, state_path=state_path)
    training_seconds = time.perf_counter() - start
    rng = np.random.Generator(np.random.PCG64([seed, 10_000]))
    seeds = [int(s) for s in rng.integers(2**62, size=eval_instances)]
    specs = [_sample_policy(state.policy, request, rng) for _ in seeds]
    options = {"request": request, "scip": settings.scip, "crosscheck": crosscheck}
    played = [_evaluate_instance(spec, seed=s, **options) for spec, s in zip(specs, seeds, strict=True)]
    default = [_evaluate_instance(request.make_spec(), seed=s, **options) for s in seeds]
    played_summary, default_summary = summarise_group(played), summarise_group(default)
    return {
        "instruction": instruction,
        "selfplay": played_summary,
        "default": default_summary,
        "median_nodes_ratio": _ratio(played_summary["median_nodes"], default_summary["median_nodes"]),
        "postcut_gap_ratio": _ratio(played_summary["median_postcut_gap"], default_summary["median_postcut_gap"]),
        "default_spec": request.make_spec().to_dict(),
        "selfplay_knobs": [r.get("knobs") for r in played],
        "training": {"rounds": state.history, "policy": state.policy.to_dict(), "seconds": round(training_seconds, 2)},
    }


def bench_optiscribe(
    *,
    seed: int = 0,
    rounds: int = 8,
    candidates: int = 12,
    eval_instances: int = 16,
    smoothing: float = 0.5,
    min_std: float = 0.1,
    initial_std: float = 0.5,
    challenger: Literal["cem", "bandit"] = "cem",
    instructions: Mapping[str, str] | None = None,
    total_nodes: int = 5000,
    time_limit: float = 60.0,
    crosscheck: bool = True,
    state_dir: str | Path | None = None,
) -> dict[str, Any]:
    """Self-played vs default instances per family at fixed sizes, as a JSON-able dict.

    Args:
        smoothing: the CEM step towards the elite; `min_std` the floor on its spreads and `initial_std` their start.
        instructions: family → fixed-size instruction; default `BENCH_INSTRUCTIONS` (CFL 30×10, max-cut 30 nodes).
        crosscheck: also solve every evaluated instance with OR-Tools/HiGHS (≤ 1000 variables, 20 s).
        state_dir: save each family's self-play state there after every round (and resume from it).
    """
    instructions = dict(instructions or BENCH_INSTRUCTIONS)
    scip = ScipSettings(seed=0, total_nodes=total_nodes, time_limit=time_limit)
    settings = SelfPlaySettings(
        rounds=rounds,
        candidates=candidates,
        smoothing=smoothing,
        min_std=min_std,
        initial_std=initial_std,
        challenger=challenger,
        scip=scip,
    )
    check = CrossCheckSettings() if crosscheck else None
    directory = Path(state_dir) if state_dir is not None else None
    if directory is not None:
        directory.mkdir(parents=True, exist_ok=True)
    start = time.perf_counter()
    families = {
        family: bench_family(
            instruction,
            seed=seed,
            settings=settings,
            eval_instances=eval_instances,
            crosscheck=check,
            state_path=directory / f"{family}.json" if directory is not None else None,
        )
        for family, instruction in instructions.items()
    }
    return {
        "bench": "optiscribe",
        "seed": seed,
        "settings": {
            "challenger": challenger,
            "rounds": rounds,
            "candidates": candidates,
            "eval_instances": eval_instances,
            "smoothing": smoothing,
            "min_std": min_std,
            "initial_std": initial_std,
            "scip": scip.to_dict(),
            "crosscheck": check.to_dict() if check else None,
        },
        "scip_version": _scip_version(),
        "families": families,
        "seconds": round(time.perf_counter() - start, 2),
    }


def _scip_version() -> str:
    from pyscipopt import Model

    return str(Model().version())


def write_bench(report: Mapping[str, Any], path: str | Path) -> None:
    """Write a bench report as indented JSON."""
    Path(path).write_text(json.dumps(report, indent=2, sort_keys=True) + "\n", encoding="utf-8")
