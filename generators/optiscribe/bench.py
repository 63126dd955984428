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
from collections.abc import Callable, Mapping, Sequence
from dataclasses import asdict, dataclass, replace
from pathlib import Path
from typing import Any, TypeVar

import numpy as np

from synth.core.errors import ConfigError, InputError, read_json_file
from synth.core.sink import write_text_atomic
from synth.generators.optiscribe.archive import (
    PARENT_MODELS,
    Instance,
    InstanceArchive,
    ParentModel,
    evolve,
    in_band,
    solve_instances,
)
from synth.generators.optiscribe.build import Mutation, build_model_text
from synth.generators.optiscribe.parallel import solve_many
from synth.generators.optiscribe.policy import sample_uniform_specs
from synth.generators.optiscribe.selfplay import (
    Candidate,
    LearnerKind,
    Policy,
    SelfPlaySettings,
    policy_from_dict,
    run_selfplay,
)
from synth.generators.optiscribe.spec_search import best_uniform_specs
from synth.validators.optiscribe.crosscheck import CrossCheckSettings, agreement, crosscheck_model_text
from synth.validators.optiscribe.difficulty import (
    CAPPED_STATUSES,
    BandTable,
    EffortBand,
    calibrate_bands_under_cap,
    seed_spread,
)
from synth.validators.optiscribe.grammar import parse_instruction
from synth.validators.optiscribe.reading import read_model_text
from synth.validators.optiscribe.request import InstanceRequest
from synth.validators.optiscribe.reward import REWARD_VERSION, RewardSettings, is_trivial
from synth.validators.optiscribe.scip import ScipSettings, ScipStats
from synth.validators.optiscribe.spec import InstanceSpec, SpecError
from synth.validators.optiscribe.structure import instruction_violations, measure_structure

BENCH_INSTRUCTIONS: dict[str, str] = {  # Ecole's CFL (splittable demands) and a sparse max-cut of 200 nodes
    "facility_location": (
        "a capacitated facility location problem with 100 customers and 100 facilities, splittable demands, hard"
    ),
    "max_cut": "a max-cut problem with 200 nodes, density 0.015, hard",
}
BENCH_CURRICULA: dict[str, tuple[str, ...]] = {  # proxy self-play sizes; the policy is then used at the real size
    # CFL self-plays at 50x50 (seconds a solve; 100x100 takes 10-100 s on a free core; `--selfplay-size real`
    # self-plays there). At both sizes one parameterisation spreads over decades of nodes across instance seeds
    # (`--instance-seeds` scores a spec over several). Max-cut self-plays at its real size (seconds per solve),
    # because at 40-100 nodes unit +-1 weights and the default weights need the same few nodes (measured 2-16), so
    # smaller sizes cannot show the knob that makes 200-node graphs hard
    "facility_location": (
        "a capacitated facility location problem with 50 customers and 50 facilities, splittable demands, hard",
    ),
    "max_cut": (BENCH_INSTRUCTIONS["max_cut"],),
}
SMALL_BENCH_INSTRUCTIONS: dict[str, str] = {  # the sizes tests use: every solve well under a second
    "facility_location": "a capacitated facility location problem with 15 customers and 8 facilities",
    "max_cut": "a max-cut problem with 14 nodes, density 0.4",
}
T = TypeVar("T")
DECILES = tuple(round(0.1 * k, 1) for k in range(1, 10))


def solve_result(stats: ScipStats, *, followed: bool, in_band: bool) -> dict[str, Any]:
    """One solved instance's entry in a bench's results: feasibility, instruction following and SCIP's effort."""
    return {
        "built": True,
        "feasible": stats.feasible,
        "followed": followed,
        "in_band": in_band,
        "nodes": stats.nodes,
        "postcut_gap": stats.postcut_gap,
        "gap": stats.gap,
        "status": stats.status,
        "wall_seconds": stats.wall_seconds,
        "deterministic_time": stats.deterministic_time,
        "variables": stats.variables,
    }


def evaluate_specs(
    specs: Sequence[InstanceSpec | None],
    seeds: Sequence[int],
    *,
    request: InstanceRequest,
    scip: ScipSettings,
    crosscheck: CrossCheckSettings | None,
    workers: int = 1,
) -> list[dict[str, Any]]:
    """Build and solve each instance (in `workers` processes), check instruction following (sizes, density and the
    asked effort band) and, optionally, cross-check it; one result per spec (an unbuilt spec is infeasible)."""
    texts = [
        None if spec is None else build_model_text(spec, seed=seed) for spec, seed in zip(specs, seeds, strict=True)
    ]
    solved = iter(solve_many([(t, scip) for t in texts if t is not None], workers=workers))
    band = request.effort()
    results = []
    for spec, text in zip(specs, texts, strict=True):
        if spec is None or text is None:
            results.append({"built": False, "feasible": False, "followed": False, "in_band": False})
            continue
        stats = next(solved)
        measured = measure_structure(read_model_text(text), spec.family)
        landed = in_band(band, stats)
        followed = not instruction_violations(measured, request.asked()) and landed
        result = solve_result(stats, followed=followed, in_band=landed) | {"knobs": dict(spec.knobs)}
        if crosscheck is not None:
            check = crosscheck_model_text(text, settings=crosscheck)
            reason = agreement(
                check, scip_status=stats.status, scip_feasible=stats.feasible, scip_objective=stats.primal_bound
            )
            result["crosscheck"] = (
                "unchecked"
                if check.status in {"skipped", "not_solved"}
                else ("agree" if reason is None else "disagree")
            )
        results.append(result)
    return results


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
        "in_band_rate": sum(r["in_band"] for r in results) / total if total else 0.0,
        "capped_rate": sum(r.get("status") in CAPPED_STATUSES for r in results) / total if total else 0.0,
        "median_gap_at_cap": _median([r["gap"] for r in results if r.get("status") in CAPPED_STATUSES]),
        "median_wall_seconds": _median([r["wall_seconds"] for r in feasible]),
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


def _median(values: Sequence[float | None]) -> float | None:
    present = [v for v in values if v is not None]
    return statistics.median(present) if present else None


def _ratio(numerator: float | None, denominator: float | None) -> float | None:
    if numerator is None or denominator is None or denominator == 0:
        return None
    return numerator / denominator


def median_ratio_interval(
    played: Sequence[Mapping[str, Any]], default: Sequence[Mapping[str, Any]], *, confidence: float = 0.9
) -> list[float] | None:
    """A paired percentile-bootstrap interval of median(played nodes) / median(default nodes) over the instance seeds
    both groups share (a seed's two solves are resampled together; seeds where either is infeasible are left out);
    None under 3 such seeds. A node count at the cap is a lower bound, so an interval touching it is one too."""
    from scipy.stats import bootstrap

    pairs = [(a["nodes"], b["nodes"]) for a, b in zip(played, default, strict=True) if a["feasible"] and b["feasible"]]
    if len(pairs) < 3:
        return None
    ours, theirs = (np.array(side, dtype=float) for side in zip(*pairs, strict=True))

    def ratio(x: np.ndarray, y: np.ndarray, axis: int = -1) -> np.ndarray:
        return np.median(x, axis=axis) / np.maximum(np.median(y, axis=axis), 1.0)  # SCIP counts the root: ≥ 1

    result = bootstrap(
        (ours, theirs), ratio, paired=True, vectorized=True, n_resamples=4000, confidence_level=confidence,
        method="percentile", rng=np.random.default_rng(0),
    )  # fmt: skip
    interval = result.confidence_interval
    return [round(float(interval.low), 4), round(float(interval.high), 4)]


def _sample_policy(policy: Policy, request: InstanceRequest, rng: np.random.Generator) -> InstanceSpec | None:
    try:
        return policy.sample(request, rng).spec
    except SpecError:
        return None


def bench_family(
    instruction: str,
    *,
    curriculum: Sequence[str],
    seed: int,
    settings: SelfPlaySettings,
    eval_scip: ScipSettings,
    eval_instances: int,
    crosscheck: CrossCheckSettings | None,
    state_path: Path | None = None,
    bands: BandTable | None = None,
    on_selfplay: Callable[[Sequence[Candidate]], object] | None = None,
) -> dict[str, Any]:
    """Self-play over `curriculum` (smaller sizes of the same family, easiest first), then evaluate the trained
    policy at `instruction`'s size against the default parameterisation, same instance seeds, under `eval_scip`
    (difficulty words mean the calibrated `bands` when given). `on_selfplay` receives the solved candidates of the
    rounds played in this call."""
    request = parse_instruction(instruction)
    if bands is not None:
        request = replace(request, bands=dict(bands))
    start = time.perf_counter()
    selfplayed, state = run_selfplay(list(curriculum), settings=settings, seed=seed, state_path=state_path, bands=bands)
    training_seconds = time.perf_counter() - start
    if on_selfplay is not None:
        on_selfplay(selfplayed)
    resumed_from = min((c.round for c in selfplayed), default=state.round)  # the first round this call played
    rng = np.random.Generator(np.random.PCG64([seed, 10_000]))
    seeds = [int(s) for s in rng.integers(2**62, size=eval_instances)]
    generator = state.policy.trained()
    specs = [_sample_policy(generator, request, rng) for _ in seeds]
    options = {"request": request, "scip": eval_scip, "crosscheck": crosscheck, "workers": settings.workers}
    start = time.perf_counter()
    played = evaluate_specs(specs, seeds, **options)
    default = evaluate_specs([request.make_spec()] * len(seeds), seeds, **options)
    played_summary, default_summary = summarise_group(played), summarise_group(default)
    return {
        "instruction": instruction,
        "curriculum": list(curriculum),
        "eval_scip": eval_scip.to_dict(),
        "selfplay": played_summary,
        "default": default_summary,
        "median_nodes_ratio": _ratio(played_summary["median_nodes"], default_summary["median_nodes"]),
        "median_nodes_ratio_90ci": median_ratio_interval(played, default),
        "postcut_gap_ratio": _ratio(played_summary["median_postcut_gap"], default_summary["median_postcut_gap"]),
        "default_spec": request.make_spec().to_dict(),
        "selfplay_knobs": [r.get("knobs") for r in played],
        "selfplay_nodes": [r.get("nodes") for r in played],
        "default_nodes": [r.get("nodes") for r in default],
        "training": {
            "rounds": state.history,
            "policy": state.policy.to_dict(),
            "resumed_from_round": resumed_from,
            "solves": len(selfplayed),  # proposals solved in the rounds played in this call
            "seconds": round(training_seconds, 2),  # of the rounds played in this call
        },
        "evaluation_seconds": round(time.perf_counter() - start, 2),
    }


STATE_SETTINGS_FILE = "selfplay-settings.json"


def selfplay_fingerprint(
    settings: SelfPlaySettings, *, seed: int, curricula: Mapping[str, Sequence[str]]
) -> dict[str, Any]:
    """What a saved self-play state depends on: everything but the number of rounds, the worker count (results do
    not depend on it) and the LLM backend (the bench's learners never ask one), so a state may be resumed to more
    rounds but never under other settings."""
    fields = asdict(settings)
    del fields["rounds"], fields["workers"], fields["llm"]
    return json.loads(
        json.dumps({"seed": seed, "curricula": dict(curricula), "reward_version": REWARD_VERSION, "selfplay": fields})
    )


def claim_state_dir(directory: Path, fingerprint: Mapping[str, Any]) -> None:
    """Make `directory` hold self-play states for `fingerprint`: record it in a fresh directory, or check that the
    directory's record matches (a `ConfigError` naming the first differing setting otherwise)."""
    record = directory / STATE_SETTINGS_FILE
    if not record.is_file():
        directory.mkdir(parents=True, exist_ok=True)
        write_text_atomic(record, json.dumps(fingerprint, indent=2, sort_keys=True) + "\n")
        return
    saved = read_json_file(record)
    if not isinstance(saved, dict):
        raise InputError(f"{record}: not a self-play settings record (a JSON object)")
    recorded = _flatten(saved)
    for key, value in _flatten(fingerprint).items():
        old = recorded.get(key)
        if old != value:
            raise ConfigError(
                f"{record}: the saved self-play states were played with {key}={old!r}, not {value!r}; "
                "resume with the same settings or use another state directory"
            )


def _flatten(value: Mapping[str, Any], prefix: str = "") -> dict[str, Any]:
    flat: dict[str, Any] = {}
    for key, item in value.items():
        name = f"{prefix}{key}"
        if isinstance(item, Mapping):
            flat.update(_flatten(item, f"{name}."))
        else:
            flat[name] = item
    return flat


def bench_optiscribe(
    *,
    seed: int = 0,
    rounds: int = 8,
    candidates: int = 12,
    eval_instances: int = 16,
    smoothing: float = 0.5,
    min_std: float = 0.1,
    initial_std: float = 0.5,
    challenger: LearnerKind = "cem",
    instructions: Mapping[str, str] | None = None,
    curricula: Mapping[str, Sequence[str]] | None = None,
    instance_seeds: int = 1,
    total_nodes: int = 5000,
    time_limit: float = 60.0,
    eval_total_nodes: int | None = None,
    eval_time_limit: float | None = None,
    workers: int = 1,
    crosscheck: bool = True,
    state_dir: str | Path | None = None,
    reward: RewardSettings | None = None,
) -> dict[str, Any]:
    """Self-played vs default instances per family at fixed sizes, as a JSON-able dict.

    Args:
        smoothing: the CEM step towards the elite; `min_std` the floor on its spreads and `initial_std` their start.
        instructions: family → evaluation instruction; default `BENCH_INSTRUCTIONS` (CFL 100×100, max-cut 200).
        curricula: family → self-play instructions (easiest first); default `BENCH_CURRICULA` for the default
            instructions, else the evaluation instruction alone.
        instance_seeds: instances solved per proposed spec in self-play (the learner scores a spec by their mean).
        total_nodes, time_limit: SCIP's caps during self-play; `eval_total_nodes`, `eval_time_limit` at evaluation
            (default: the same).
        workers: processes solving the instances of a round / group (results do not depend on it).
        crosscheck: also solve every evaluated instance with OR-Tools/HiGHS (≤ 1000 variables, 20 s).
        state_dir: save each family's self-play state there after every round (and resume from it).
        reward: the self-play reward (default `RewardSettings()`).
    """
    import os

    load_before = os.getloadavg()
    chosen = dict(instructions or BENCH_INSTRUCTIONS)
    curricula = dict(curricula or {})
    for family, instruction in chosen.items():
        if family not in curricula:
            standard = instructions is None or instruction == BENCH_INSTRUCTIONS.get(family)
            curricula[family] = BENCH_CURRICULA[family] if standard else (instruction,)
    scip = ScipSettings(seed=0, total_nodes=total_nodes, time_limit=time_limit)
    eval_scip = ScipSettings(
        seed=0, total_nodes=eval_total_nodes or total_nodes, time_limit=eval_time_limit or time_limit
    )
    settings = SelfPlaySettings(
        rounds=rounds,
        candidates=candidates,
        instance_seeds=instance_seeds,
        smoothing=smoothing,
        min_std=min_std,
        initial_std=initial_std,
        challenger=challenger,
        scip=scip,
        workers=workers,
        reward=reward or RewardSettings(),
    )
    check = CrossCheckSettings() if crosscheck else None
    directory = Path(state_dir) if state_dir is not None else None
    if directory is not None:
        claim_state_dir(directory, selfplay_fingerprint(settings, seed=seed, curricula=curricula))
    start = time.perf_counter()
    families = {
        family: bench_family(
            instruction,
            curriculum=curricula[family],
            seed=seed,
            settings=settings,
            eval_scip=eval_scip,
            eval_instances=eval_instances,
            crosscheck=check,
            state_path=directory / f"{family}.json" if directory is not None else None,
        )
        for family, instruction in chosen.items()
    }
    return {
        "bench": "optiscribe",
        "seed": seed,
        "settings": {
            "challenger": challenger,
            "rounds": rounds,
            "candidates": candidates,
            "instance_seeds": instance_seeds,
            "eval_instances": eval_instances,
            "smoothing": smoothing,
            "min_std": min_std,
            "initial_std": initial_std,
            "scip": scip.to_dict(),
            "eval_scip": eval_scip.to_dict(),
            "reward": settings.reward.to_dict(),
            "reward_version": REWARD_VERSION,
            "workers": workers,
            "crosscheck": check.to_dict() if check else None,
        },
        "scip_version": _scip_version(),
        "families": families,
        "load_average": {"before": [round(x, 2) for x in load_before], "after": [round(x, 2) for x in os.getloadavg()]},
        "seconds": round(time.perf_counter() - start, 2),
    }


def _scip_version() -> str:
    from pyscipopt import Model

    return str(Model().version())


BAND_BASES: dict[str, str] = {  # sizes where one solve takes seconds, so every band can be trained and measured
    "max_cut": "a max-cut problem with 30 nodes, density 0.3",
    "facility_location": "a capacitated facility location problem with 20 customers and 20 facilities",
}
BAND_WORDS = ("easy", "medium", "hard")


def measure_band_calibration(
    base: str,
    *,
    samples: int,
    seed: int,
    scip: ScipSettings,
    workers: int = 1,
    spread_specs: int = 6,
    spread_seeds: int = 6,
) -> dict[str, Any]:
    """Solve `samples` uniformly drawn specs of the `base` instruction (its size, no difficulty) and calibrate the
    easy / medium / hard node bands at that size from their node counts; with `spread_specs`, the first that many
    specs are also solved under `spread_seeds` − 1 more instance seeds, and the medium band is made at least as wide
    as that seed noise (`seed_spread`) unless that would put the hard band's edge within a factor of 3 of the node
    cap (then the fixed least width is kept and `widened_to_seed_spread` is false)."""
    request = parse_instruction(base)
    rng = np.random.Generator(np.random.PCG64([seed, 20_000]))
    specs = sample_uniform_specs(request, samples, rng)
    seeds = [int(s) for s in rng.integers(2**62, size=samples)]
    jobs = [(build_model_text(spec, seed=instance), scip) for spec, instance in zip(specs, seeds, strict=True)]
    solved = solve_many(jobs, workers=workers)
    nodes = [s.nodes for s in solved if s.feasible]
    spread, groups = None, []
    if spread_specs and spread_seeds > 1:
        repeats = [
            [
                int(s)
                for s in np.random.Generator(np.random.PCG64([seed, 20_001, k])).integers(2**62, size=spread_seeds - 1)
            ]
            for k in range(min(spread_specs, samples))
        ]
        extra = [(build_model_text(specs[k], seed=r), scip) for k, more in enumerate(repeats) for r in more]
        resolved = iter(solve_many(extra, workers=workers))
        for k, more in enumerate(repeats):
            group = [solved[k], *(next(resolved) for _ in more)]
            groups.append([s.nodes for s in group if s.feasible])
        spread = seed_spread(groups)
    bands, widened = calibrate_bands_under_cap(nodes, spread=spread, node_cap=scip.total_nodes)
    return {
        "base": base,
        "samples": samples,
        "feasible": len(nodes),
        "nodes": [s.nodes for s in solved],
        "node_deciles": _quantiles(nodes),
        "seed_groups": groups,
        "seed_spread_decades": spread,
        "widened_to_seed_spread": widened,
        "bands": {word: list(band) for word, band in bands.items()},
    }


def draw_until_landed(
    requests: int,
    max_draws: int,
    draw: Callable[[Sequence[int], int], Sequence[T]],
    landed: Callable[[T], bool],
) -> list[tuple[T, int, bool]]:
    """Generate-then-verify: `draw(pending, k)` makes draw k of each pending request (in one batch, so it can be
    solved in parallel); a request whose draw did not land is drawn again, up to `max_draws` draws. Per request:
    the delivered draw, the draws it used, and whether its first draw landed."""
    delivered: dict[int, tuple[T, int]] = {}
    first: dict[int, bool] = {}
    pending = list(range(requests))
    for k in range(max_draws):
        if not pending:
            break
        for index, outcome in zip(pending, draw(pending, k), strict=True):
            first.setdefault(index, landed(outcome))
            delivered[index] = (outcome, k + 1)
        pending = [i for i in pending if not landed(delivered[i][0])]
    return [(*delivered[i], first[i]) for i in range(requests)]


def verified_draws(
    policy: Policy,
    request: InstanceRequest,
    *,
    instances: int,
    max_draws: int,
    seed: int,
    scip: ScipSettings,
    workers: int = 1,
) -> list[dict[str, Any]]:
    """Generate-then-verify, as the pipeline does: for each of `instances` requests, draw a spec from the policy and
    an instance seed and solve it; a solve outside the asked band is drawn again, up to `max_draws` solves. Draw k
    of request i is seeded by (seed, 30_000, i, k), so the first draws are the same whatever `max_draws` is. One
    entry per request: the delivered result plus `draws` (solves used) and `first_in_band`."""

    def draw(pending: Sequence[int], k: int) -> list[dict[str, Any]]:
        rngs = [np.random.Generator(np.random.PCG64([seed, 30_000, i, k])) for i in pending]
        seeds = [int(rng.integers(2**62)) for rng in rngs]
        specs = [_sample_policy(policy, request, rng) for rng in rngs]
        return evaluate_specs(specs, seeds, request=request, scip=scip, crosscheck=None, workers=workers)

    outcomes = draw_until_landed(instances, max_draws, draw, lambda result: bool(result["in_band"]))
    return [result | {"draws": draws, "first_in_band": first} for result, draws, first in outcomes]


@dataclass(frozen=True, kw_only=True)
class MutationSettings:
    """The mutation challenger of the bands bench: evolution rounds and children per round, the objective jitter,
    and the requests generated after training (each drawn again while outside the band, up to the bench's
    `max_draws` solves)."""

    rounds: int = 16
    children: int = 16
    sigma: float = 0.01
    eval_instances: int = 40
    min_children: int = 2
    parent_model: ParentModel = "beta"

    def __post_init__(self) -> None:
        if self.rounds < 1 or self.children < 1 or self.eval_instances < 1 or self.min_children < 0:
            msg = "mutation: `rounds`, `children` and `eval_instances` must be >= 1 and `min_children` >= 0"
            raise ConfigError(msg)
        if self.parent_model not in PARENT_MODELS:
            msg = f"mutation: parent model {self.parent_model!r}; choose {', '.join(PARENT_MODELS)}"
            raise ConfigError(msg)
        Mutation(0, self.sigma)  # raises on a sigma outside (0, 1]


def _share_interval(hits: int, total: int) -> list[float] | None:
    """The Clopper-Pearson 90 % interval of a share."""
    if not total:
        return None
    from scipy.stats import binomtest

    interval = binomtest(hits, total).proportion_ci(confidence_level=0.9)
    return [round(float(interval.low), 4), round(float(interval.high), 4)]


def bench_mutation(
    candidates: Sequence[Candidate],
    band: EffortBand,
    *,
    settings: MutationSettings,
    max_draws: int,
    seed: int,
    scip: ScipSettings,
    workers: int = 1,
) -> dict[str, Any]:
    """The mutation challenger on one asked band: seed the archive with the in-band instances among a knob
    challenger's self-play `candidates`, evolve it (round r seeded by (seed, 50_001, r)), then generate
    `settings.eval_instances` children of trained parents, each drawn again while outside the band (draw k of
    request i seeded by (seed, 50_000, i, k)). Reports the first-draw and delivered in-band shares (with 90 %
    intervals), solves, and the lineage diversity of what was delivered (distinct root instances and parents,
    mutation depth)."""
    archive = InstanceArchive(
        band, sigma=settings.sigma, min_children=settings.min_children, parent_model=settings.parent_model
    )
    seeded = archive.extend(
        (Instance(c.spec, c.seed), c.stats) for c in candidates if c.spec is not None and c.stats is not None
    )
    report: dict[str, Any] = {"settings": asdict(settings), "seed_instances": seeded}
    if not seeded:
        return report | {"first_draw_in_band": None, "delivered_in_band": None}
    history = evolve(
        archive, rounds=settings.rounds, children=settings.children, key=(seed, 50_001), scip=scip, workers=workers
    )

    def draw(pending: Sequence[int], k: int) -> list[tuple[int, Instance, ScipStats]]:
        rngs = [np.random.Generator(np.random.PCG64([seed, 50_000, i, k])) for i in pending]
        proposals = [archive.propose(1, rng, trained=True)[0] for rng in rngs]
        solved = solve_instances([child for _, child in proposals], scip=scip, workers=workers)
        return [(parent, child, stats) for (parent, child), stats in zip(proposals, solved, strict=True)]

    outcomes = draw_until_landed(settings.eval_instances, max_draws, draw, lambda d: in_band(band, d[2]))
    count = settings.eval_instances
    kept = [outcome for outcome, _, _ in outcomes]
    hits_first, hits = sum(first for _, _, first in outcomes), sum(in_band(band, stats) for _, _, stats in kept)
    return report | {
        "evolution": history,
        "archive_size": len(archive.entries),
        "training_solves": settings.rounds * settings.children,
        "first_draw_in_band": hits_first / count,
        "first_draw_in_band_90ci": _share_interval(hits_first, count),
        "delivered_in_band": hits / count,
        "delivered_in_band_90ci": _share_interval(hits, count),
        "mean_solves": sum(draws for _, draws, _ in outcomes) / count,
        "delivered_nodes": [stats.nodes for _, _, stats in kept],
        "distinct_roots": len({child.root() for _, child, _ in kept}),
        "distinct_parents": len({parent for parent, _, _ in kept}),
        "mean_depth": statistics.fmean(len(child.mutations) for _, child, _ in kept),
        "delivered": [child.to_dict() for _, child, _ in kept],
    }


def bench_bands(
    *,
    bases: Mapping[str, str] | None = None,
    bands: Sequence[str] = BAND_WORDS,
    seed: int = 0,
    rounds: int = 4,
    candidates: int = 8,
    instance_seeds: int = 1,
    eval_instances: int = 10,
    min_std: float = 0.05,
    total_nodes: int = 3000,
    time_limit: float = 120.0,
    workers: int = 1,
    calibration_samples: int | None = 24,
    spread_specs: int = 6,
    spread_seeds: int = 6,
    max_draws: int = 3,
    hard_margin: float | None = None,
    challenger: LearnerKind = "cem",
    search_specs: int = 0,
    search_seeds: int = 8,
    search_holdout: int = 16,
    mutation: MutationSettings | None = None,
    compare_parents: Sequence[ParentModel] = (),
    effort_seeds: int = 1,
) -> dict[str, Any]:
    """Difficulty following: for each family and asked band (a difficulty word, or `about N` for a node target),
    self-play on "<base>, <band>" with the band reward, then the share of the trained challenger's instances (and
    of the default parameterisation's, same seeds) whose SCIP node count lies in the asked band.

    With `calibration_samples`, the words' bands are first calibrated at the base size (`measure_band_calibration`,
    the medium band no narrower than the seed noise of `spread_specs` specs under `spread_seeds` seeds); None keeps
    the fixed `DIFFICULTY_BANDS`. `max_draws` > 1 also measures generate-then-verify (`verified_draws`): the share
    delivered inside the band when an instance outside it is drawn again, and the solves that took.
    `hard_margin` (decades) pays a hard request the band reward with that margin (`margin_band_reward`); None uses
    the measured seed spread (0, the hardness reward, when it was not measured). `instance_seeds` k > 1 solves each
    proposed spec under k instance seeds in self-play, so the learner scores a spec by its mean band reward over
    them (close to its in-band rate) rather than by one seed's luck. `search_specs` > 0 also measures the random-search
    baseline per asked band (`best_uniform_specs`: the best of that many uniform specs, each under `search_seeds`
    seeds, re-solved under `search_holdout` fresh ones). `mutation` also runs the mutation challenger on each asked
    band (`bench_mutation`), its archive seeded from that band's self-play; each of `compare_parents` runs it again
    with that parent model on the same seed instances and random streams (a paired comparison), reported under
    `mutation_<model>`. `effort_seeds` k > 1 measures every solve's effort as the median over SCIP seeds 0 … k-1
    (`ScipSettings.effort_seeds`): calibration, self-play, evaluation and the in-band checks all count it."""
    import os

    load_before = os.getloadavg()
    scip = ScipSettings(seed=0, total_nodes=total_nodes, time_limit=time_limit, effort_seeds=effort_seeds)
    settings = SelfPlaySettings(
        rounds=rounds,
        candidates=candidates,
        instance_seeds=instance_seeds,
        min_std=min_std,
        challenger=challenger,
        scip=scip,
        workers=workers,
    )
    start = time.perf_counter()
    families: dict[str, Any] = {}
    calibrations: dict[str, Any] = {}
    searched: dict[str, Any] = {}
    for family, base in dict(bases or BAND_BASES).items():
        families[family] = {}
        table = None
        if calibration_samples:
            calibrations[family] = measure_band_calibration(
                base,
                samples=calibration_samples,
                seed=seed,
                scip=scip,
                workers=workers,
                spread_specs=spread_specs,
                spread_seeds=spread_seeds,
            )
            table = {w: tuple(b) for w, b in calibrations[family]["bands"].items()}
        spread = calibrations.get(family, {}).get("seed_spread_decades")
        margin = hard_margin if hard_margin is not None else (spread or 0.0)
        played = replace(settings, reward=replace(settings.reward, hard_margin=margin))
        if family in calibrations:
            calibrations[family]["hard_margin"] = margin
        efforts: dict[str, EffortBand] = {}
        for band in bands:
            words = f"needing about {band.split()[-1]} B&B nodes" if band.startswith("about") else band
            instruction = f"{base}, {words}"
            trained: list[Candidate] = []
            result = bench_family(
                instruction,
                curriculum=(instruction,),
                seed=seed,
                settings=played,
                eval_scip=scip,
                eval_instances=eval_instances,
                crosscheck=None,
                bands=table,  # type: ignore[arg-type]
                on_selfplay=trained.extend,
            )
            asked = replace(parse_instruction(instruction), bands=table)
            efforts[band] = asked.effort()  # type: ignore[assignment]
            policy = policy_from_dict(result["training"]["policy"]).trained()
            options = {"instances": eval_instances, "max_draws": max_draws, "seed": seed, "scip": scip}
            verified = verified_draws(policy, asked, **options, workers=workers)
            families[family][band] = {
                "instruction": instruction,
                "effort_band": asked.effort().to_list(),  # type: ignore[union-attr]
                "selfplay_in_band": result["selfplay"]["in_band_rate"],
                "default_in_band": result["default"]["in_band_rate"],
                "selfplay_feasibility": result["selfplay"]["feasibility_rate"],
                "selfplay_nodes": result["selfplay_nodes"],
                "default_nodes": result["default_nodes"],
                "selfplay_knobs": result["selfplay_knobs"],
                "training": result["training"]["rounds"],
                "training_solves": result["training"]["solves"],
                "verified": {
                    "max_draws": max_draws,
                    "first_draw_in_band": sum(r["first_in_band"] for r in verified) / eval_instances,
                    "delivered_in_band": sum(r["in_band"] for r in verified) / eval_instances,
                    "mean_solves": sum(r["draws"] for r in verified) / eval_instances,
                    "delivered_nodes": [r.get("nodes") for r in verified],
                },
            }
            if mutation is not None:
                runs = {"mutation": mutation} | {
                    f"mutation_{model}": replace(mutation, parent_model=model) for model in compare_parents
                }
                for key, run in runs.items():
                    families[family][band][key] = bench_mutation(
                        trained, efforts[band], settings=run, max_draws=max_draws, seed=seed, scip=scip,
                        workers=workers,
                    )  # fmt: skip
        if search_specs:
            search = {"specs": search_specs, "seeds": search_seeds, "holdout": search_holdout, "seed": seed}
            searched[family] = best_uniform_specs(base, efforts, **search, scip=scip, workers=workers)
    shares = [b["selfplay_in_band"] for f in families.values() for b in f.values()]
    delivered = [b["verified"]["delivered_in_band"] for f in families.values() for b in f.values()]
    return {
        "bench": "optiscribe-bands",
        "seed": seed,
        "settings": {
            "rounds": rounds,
            "candidates": candidates,
            "instance_seeds": instance_seeds,
            "eval_instances": eval_instances,
            "min_std": min_std,
            "scip": scip.to_dict(),
            "workers": workers,
            "calibration_samples": calibration_samples,
            "spread_specs": spread_specs,
            "spread_seeds": spread_seeds,
            "max_draws": max_draws,
            "hard_margin": hard_margin,
            "challenger": challenger,
            "search_specs": search_specs,
            "search_seeds": search_seeds,
            "search_holdout": search_holdout,
            "mutation": None if mutation is None else asdict(mutation),
            "compare_parents": list(compare_parents),
        },
        "calibration": calibrations,
        "uniform_search": searched,
        "families": families,
        "min_in_band_share": min(shares) if shares else None,
        "min_delivered_in_band_share": min(delivered) if delivered else None,
        "load_average": {"before": [round(x, 2) for x in load_before], "after": [round(x, 2) for x in os.getloadavg()]},
        "seconds": round(time.perf_counter() - start, 2),
    }
