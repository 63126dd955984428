"""The LLM challenger bench: models (SFT, GRPO) vs the scripted challenger on one instruction, same seeds.

Each policy answers `instruction` once per instance seed through the LLM backend protocol: local models on the
transformers backend, greedy by default (the same answer for every seed; the instance differs by seed) or
sampled at `temperature` (one draw per seed), and the scripted challenger (`scripted_challenger_policy`, one draw
per seed). Requests carry the challenger's system prompt and the instruction only, as in SFT and GRPO (no schema
note). Every answer is validated as the GRPO reward validates it (`read_challenger_answer`: LP text must also have
the asked sizes and density); valid specs are built with the seed and solved under the same SCIP settings
(`evaluate_specs`), LP answers solved as written. Per policy: valid
rate, refusals by code, the GRPO reward of each answer (median, mean), feasibility, median nodes and post-cut gap,
node deciles (`summarise_group`); then each model's ratios of the medians to the `sft` model's, and the GRPO
run's reward curve (its `metrics.jsonl`).
"""

from __future__ import annotations

import json
import os
import statistics
import time
from collections import Counter
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

from synth.core.errors import InputError

BENCH_INSTRUCTION = "a max-cut problem with 30 nodes, density 0.3"


def read_reward_curve(run: Path) -> list[dict[str, float]]:
    """(step, reward, reward_std) of each logged step of a `synth train grpo` run folder."""
    from synth.trainers.grpo.train import METRICS_LOG

    path = Path(run) / METRICS_LOG
    if not path.is_file():
        msg = f"{run}: not a GRPO run folder (no {METRICS_LOG})"
        raise InputError(msg)
    curve = []
    for line in path.read_text(encoding="utf-8").splitlines():
        entry = json.loads(line)
        if "reward" in entry:
            curve.append(
                {"step": entry["step"], "reward": round(entry["reward"], 6), "reward_std": entry.get("reward_std")}
            )
    return curve


def _answers(
    backend: Any, instruction: str, seeds: Sequence[int], *, model: str, max_tokens: int, temperature: float
) -> list[str]:
    from synth.generators.optiscribe.llm import seeded_challenger_requests

    requests = seeded_challenger_requests(
        instruction, seeds, model=model, temperature=temperature, max_tokens=max_tokens
    )
    return [result.texts[0] for result in backend.generate(requests)]


def _lp_result(text: str, *, request: Any, scip: Any) -> dict[str, Any]:
    """An LP answer solved as written, in `evaluate_specs`' result shape (its sizes were checked when read)."""
    from synth.generators.optiscribe.bench import solve_result
    from synth.validators.optiscribe.difficulty import effort_violations
    from synth.validators.optiscribe.scip import solve_model_text

    stats = solve_model_text(text, settings=scip)
    in_band = not effort_violations(request.effort(), status=stats.status, nodes=stats.nodes)
    return solve_result(stats, followed=in_band, in_band=in_band)


def evaluate_answers(
    answers: Sequence[str],
    seeds: Sequence[int],
    *,
    instruction: str,
    scip: Any,
    refused: float = -0.5,
    workers: int = 1,
) -> dict[str, Any]:
    """Validate, build (a spec, with its seed) or take (LP text), solve and summarise one policy's answers (one per
    seed); the rewards are the GRPO reward's (`optiscribe_scip` with the node cap = `scip.total_nodes`; a refused
    answer gets `refused`)."""
    from synth.generators.optiscribe.bench import evaluate_specs, summarise_group
    from synth.generators.optiscribe.llm import read_challenger_answer
    from synth.validators.optiscribe.grammar import parse_instruction
    from synth.validators.optiscribe.reward import RewardSettings, request_reward

    request = parse_instruction(instruction)
    read = [read_challenger_answer(text, instruction=instruction) for text in answers]
    specs = [a.spec if a.reason is None else None for a in read]
    results = evaluate_specs(specs, seeds, request=request, scip=scip, crosscheck=None, workers=workers)
    for index, answer in enumerate(read):
        if answer.reason is None and answer.model_text is not None:
            results[index] = _lp_result(answer.model_text, request=request, scip=scip)
    settings = RewardSettings(node_cap=scip.total_nodes)
    rewards = [request_reward(r, request.effort(), settings) if r["built"] else refused for r in results]
    summary = summarise_group(results)
    distinct = list(dict.fromkeys(answers))
    return {
        "valid_rate": sum(a.reason is None for a in read) / len(read) if read else 0.0,
        "lp_answers": sum(a.reason is None and a.model_text is not None for a in read),
        "refusals": dict(sorted(Counter(a.code for a in read if a.reason is not None).items())),
        "median_reward": statistics.median(rewards) if rewards else None,
        "mean_reward": round(statistics.fmean(rewards), 6) if rewards else None,
        **summary,
        "distinct_answers": len(distinct),
        "answers": [text[:300] for text in distinct[:3]],
        "nodes": [r.get("nodes") for r in results],
    }


def _ratio(numerator: float | None, denominator: float | None) -> float | None:
    return None if numerator is None or not denominator else round(numerator / denominator, 6)


def evaluate_challengers(
    models: Mapping[str, Path],
    *,
    grpo_runs: Mapping[str, Path] | None = None,
    instruction: str = BENCH_INSTRUCTION,
    seeds: Sequence[int] = tuple(range(16)),
    total_nodes: int = 1000,
    time_limit: float = 20.0,
    scip_seed: int = 0,
    max_tokens: int = 128,
    temperature: float = 0.0,
    include_scripted: bool = True,
    workers: int = 1,
) -> dict[str, Any]:
    """The report of each model in `models` (name → folder; each model other than `sft` gets its ratios to `sft`)
    and the scripted challenger on `instruction` with instance `seeds`. `grpo_runs` (name → `synth train grpo` run
    folder) adds each run's `model/` under its name, with the run's reward curve and settings."""
    from synth.core.llm import ScriptedBackend
    from synth.core.llm_backends import TransformersBackend
    from synth.generators.optiscribe.llm import scripted_challenger_policy
    from synth.validators.optiscribe.grammar import parse_instruction
    from synth.validators.optiscribe.scip import ScipSettings

    parse_instruction(instruction)  # a bad instruction or run folder fails before any model loads
    from synth.trainers.grpo.train import CONFIG_FILE, MODEL_DIR

    runs: dict[str, Any] = {}
    for name, folder in (grpo_runs or {}).items():
        config_path = Path(folder) / CONFIG_FILE
        runs[name] = {
            "path": str(folder),
            "reward_curve": read_reward_curve(Path(folder)),
            "config": json.loads(config_path.read_text(encoding="utf-8")) if config_path.is_file() else None,
        }
    models = {**models, **{name: Path(folder) / MODEL_DIR for name, folder in (grpo_runs or {}).items()}}
    started, load_before = time.perf_counter(), os.getloadavg()
    scip = ScipSettings(seed=scip_seed, total_nodes=total_nodes, time_limit=time_limit)
    backends: dict[str, Any] = {}
    if include_scripted:
        backends["scripted"] = ScriptedBackend(scripted_challenger_policy)
    for name, folder in models.items():
        backends[name] = TransformersBackend(folder, batch_size=8)
    policies: dict[str, Any] = {}
    for name, backend in backends.items():
        began = time.perf_counter()
        answers = _answers(backend, instruction, seeds, model=name, max_tokens=max_tokens, temperature=temperature)
        policies[name] = evaluate_answers(answers, seeds, instruction=instruction, scip=scip, workers=workers)
        policies[name]["seconds"] = round(time.perf_counter() - began, 2)
    report: dict[str, Any] = {
        "instruction": instruction,
        "seeds": list(seeds),
        "temperature": temperature,
        "scip": scip.to_dict(),
        "models": {name: str(folder) for name, folder in models.items()},
        "policies": policies,
    }
    if "sft" in policies:
        sft = policies["sft"]
        report["vs_sft"] = {
            name: {
                "median_nodes_ratio": _ratio(other["median_nodes"], sft["median_nodes"]),
                "median_postcut_gap_ratio": _ratio(other["median_postcut_gap"], sft["median_postcut_gap"]),
                "mean_reward": {"sft": sft["mean_reward"], name: other["mean_reward"]},
                "feasibility": {"sft": sft["feasibility_rate"], name: other["feasibility_rate"]},
            }
            for name, other in policies.items()
            if name not in ("sft", "scripted")
        }
    if runs:
        report["grpo_runs"] = runs
    report["load_average"] = {
        "before": [round(x, 2) for x in load_before],
        "after": [round(x, 2) for x in os.getloadavg()],
    }
    report["seconds"] = round(time.perf_counter() - started, 2)
    return report
