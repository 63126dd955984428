"""`synth bench dasa`: downstream exact match after matched LoRA runs on all source text, a random m-row subset,
the m source rows DASA starts from, DASA rows, GRADMM rows and random embeddings, per task and seed; paired
differences DASA − start rows and DASA − random subset with 95% t-intervals; the synthesis cost of DASA and GRADMM
(each in a fresh process) and their time to equal quality.

Time to quality: on one task, both syntheses keep snapshots (DASA: its embeddings after k Adam steps; GRADMM: its
projected ids after k ADMM outer steps) with the elapsed time inside that fresh process; each snapshot is trained on
like the final rows. The target quality is the lower of the two methods' final mean exact match (both reach it);
each method's time is the mean elapsed time of its earliest snapshot (k ≥ 1) whose mean exact match over the seeds
reaches it (or of its final rows).

Memory is the peak resident-set growth during synthesis, sampled every 10 ms from `/proc/self/statm` (torch's CPU
allocator is invisible to tracemalloc); on CUDA it would be `torch.cuda.max_memory_allocated`. With `isolated`
(the default) each synthesis runs in a fresh spawned process that has only loaded the reference model, so the growth
is not hidden by memory an earlier run left in the allocator (measured in-process, later runs read ~0 MiB).
"""

from __future__ import annotations

import functools
import hashlib
import json
import os
import statistics
import threading
import time
from collections.abc import Callable, Iterator, Sequence
from dataclasses import asdict
from pathlib import Path
from typing import Any, TypeVar

import torch

from synth.generators.dasa.base_lm import Reference, build_base_lm, encode_pairs, load_reference
from synth.generators.dasa.lora import TrainRows, rows_from_pairs, train_and_evaluate
from synth.generators.dasa.synthesize import DasaSettings, SyntheticRows, synthesize_dasa
from synth.generators.dasa.tasks import split_pairs
from synth.generators.gradmm.admm import GradmmSettings, synthesize_gradmm

T = TypeVar("T")
# the bench's DASA: one group, the `self-states` target (measured to stay above its start rows), 30 Adam steps
BENCH_DASA: dict[str, Any] = {"groups": 1, "target": "self-states", "steps": 30}
PAGE = os.sysconf("SC_PAGE_SIZE")


def _rss() -> int:
    with open("/proc/self/statm") as handle:
        return int(handle.read().split()[1]) * PAGE


def measure(fn: Callable[[], T]) -> tuple[T, float, float]:
    """Run `fn`; return its result, the wall time (s) and the peak RSS growth (MiB) while it ran."""
    base, peak, stop = _rss(), [0], threading.Event()

    def sample() -> None:
        while not stop.wait(0.01):
            peak[0] = max(peak[0], _rss())

    thread = threading.Thread(target=sample, daemon=True)
    thread.start()
    start = time.perf_counter()
    try:
        result = fn()
    finally:
        elapsed = time.perf_counter() - start
        stop.set()
        thread.join()
    return result, elapsed, (max(peak[0], _rss()) - base) / 2**20


def _synthesize(  # type: ignore[no-untyped-def]
    method: str, reference: Reference, train: list[tuple[str, str]], m: int, settings: Any, seed: int, snapshots=()
):
    run = synthesize_dasa if method == "dasa" else synthesize_gradmm
    return run(reference, train, m=m, settings=settings, seed=seed, snapshots=snapshots)


def _measured_child(args: tuple[Any, ...]) -> tuple[SyntheticRows, float, float]:
    method, model_dir, train, m, settings, seed, threads, snapshots = args
    torch.set_num_threads(threads)
    reference = load_reference(model_dir)
    return measure(lambda: _synthesize(method, reference, train, m, settings, seed, snapshots))


def measure_synthesis(  # type: ignore[no-untyped-def]
    method: str,
    reference: Reference,
    model_dir,
    train,
    *,
    m: int,
    settings: Any,
    seed: int,
    isolated: bool,
    snapshots: Sequence[int] = (),
) -> tuple[SyntheticRows, float, float]:
    """Synthesise with `method` and measure it (`measure`), in a fresh spawned process when `isolated`."""
    if not isolated:
        return measure(lambda: _synthesize(method, reference, train, m, settings, seed, snapshots))
    import multiprocessing

    with multiprocessing.get_context("spawn").Pool(1) as pool:
        args = (method, str(model_dir), list(train), m, settings, seed, torch.get_num_threads(), tuple(snapshots))
        return pool.apply(_measured_child, (args,))


def _random_rows(reference: Reference, like: TrainRows, *, seed: int) -> TrainRows:
    weight = reference.model.get_input_embeddings().weight.detach()
    assert like.input_ids is not None
    shape = (*like.input_ids.shape, weight.shape[1])
    noise = torch.randn(shape, generator=torch.Generator().manual_seed(seed))
    embeds = noise * weight.norm(dim=-1).mean() / shape[-1] ** 0.5
    return TrainRows(labels=like.labels, attention_mask=like.attention_mask, inputs_embeds=embeds)


T975 = (12.706, 4.303, 3.182, 2.776, 2.571, 2.447, 2.365, 2.306, 2.262, 2.228)  # Student t, 97.5%, df 1..10


def _summary(values: Sequence[float]) -> dict[str, Any]:
    sd = statistics.stdev(values) if len(values) > 1 else 0.0
    return {"mean": statistics.fmean(values), "sd": sd, "values": list(values)}


def paired(a: Sequence[float], b: Sequence[float]) -> dict[str, Any]:
    """Mean ± sd of the per-seed differences a − b and their 95% t-interval (None with one seed)."""
    diffs = [x - y for x, y in zip(a, b, strict=True)]
    out = _summary(diffs)
    n = len(diffs)
    if n > 1:
        half = (T975[n - 2] if n - 1 <= len(T975) else 1.96) * out["sd"] / n**0.5
        out["ci95"] = [out["mean"] - half, out["mean"] + half]
    else:
        out["ci95"] = None
    return out


def gradmm_diagnostics(rows: SyntheticRows, train: Sequence[tuple[str, str]], task: str, tokenizer: Any) -> dict:  # type: ignore[type-arg]
    """What GRADMM's projection did to its start rows: share of free prompt tokens and of response inputs changed,
    share of rows whose projected prompt still has the kept response as its correct answer."""
    from synth.generators.dasa.tasks import answer
    from synth.generators.gradmm.admm import free_positions

    start_ids, _, _ = encode_pairs([train[i] for i in rows.source_index], tokenizer, length=rows.input_ids.shape[1])
    same = rows.input_ids == start_ids
    free = free_positions(rows.labels, rows.attention_mask)
    response = rows.labels != -100
    valid = []
    for i, src in enumerate(rows.source_index):
        prompt_ids = rows.input_ids[i][rows.attention_mask[i].bool() & ~response[i]].tolist()[1:]
        valid.append(answer(task, tokenizer.decode(prompt_ids)) == train[src][1])
    return {
        "free_prompt_tokens_changed": float(1 - same[free].float().mean()),
        "response_inputs_changed": float(1 - same[response].float().mean()),
        "rows_still_correct_pairs": sum(valid) / len(valid),
    }


def _as_rows(method: str, like: SyntheticRows, value: torch.Tensor) -> TrainRows:
    """Training rows of a snapshot: DASA embeddings, or GRADMM ids (as tokens, like its final rows)."""
    if method == "dasa":
        return TrainRows(labels=like.labels, attention_mask=like.attention_mask, inputs_embeds=value)
    return TrainRows(labels=like.labels, attention_mask=like.attention_mask, input_ids=value)


def _earliest(by_step: dict[int, float], target: float) -> int | None:
    return min((s for s, em in by_step.items() if em >= target - 1e-12), default=None)


def time_to_quality(curves: dict[str, dict[int, list[tuple[float, float]]]]) -> dict[str, Any]:
    """From per-method {step: [(seconds, exact match) per seed]}: the common target quality (the lower final mean)
    and each method's earliest step reaching it, with its mean time; `higher_final` does the same for the higher
    final mean, which the weaker method may never reach (its step and seconds are then None, and so is the ratio)."""
    final = {k: max(v) for k, v in curves.items()}
    means = {k: {s: statistics.fmean(e for _, e in v[s]) for s in v} for k, v in curves.items()}
    target = min(means[k][final[k]] for k in curves)
    out: dict[str, Any] = {"target_exact_match": target}
    for method, by_step in means.items():
        step = _earliest(by_step, target)
        assert step is not None  # every method reaches the lower final at its final step at the latest
        out[method] = {
            "step": step,
            "seconds": statistics.fmean(t for t, _ in curves[method][step]),
            "reached_at_start": step == 0,
            "curve": {
                str(s): {"seconds": statistics.fmean(t for t, _ in v), "exact_match": _summary([e for _, e in v])}
                for s, v in sorted(curves[method].items())
            },
        }
    out["ratio_gradmm_over_dasa"] = out["gradmm"]["seconds"] / out["dasa"]["seconds"]
    if any(out[m]["reached_at_start"] for m in means):
        out["note"] = (
            "a method reaches the target with its unchanged start rows (step 0: only its set-up ran), so this "
            "ratio times set-up, not synthesis; see `higher_final`"
        )
    high = max(means[k][final[k]] for k in curves)
    steps = {k: _earliest(by_step, high) for k, by_step in means.items()}
    seconds = {k: None if s is None else statistics.fmean(t for t, _ in curves[k][s]) for k, s in steps.items()}
    out["higher_final"] = {
        "target_exact_match": high,
        **{k: {"step": steps[k], "seconds": seconds[k]} for k in means},
        "ratio_gradmm_over_dasa": None
        if seconds["gradmm"] is None or seconds["dasa"] is None
        else seconds["gradmm"] / seconds["dasa"],
    }
    return out


def run_dasa_bench(
    *,
    model_dir: str | Path | None = None,
    cache: str | Path = "out/bench-dasa",
    tasks: Sequence[str] = ("shift", "increment", "cipher"),
    source_rows: int = 256,
    test_rows: int = 64,
    m: int = 32,
    seeds: Sequence[int] = (0, 1, 2),
    base_steps: int = 2000,
    base_hidden: int = 96,
    lora_steps: int = 200,
    lora_rank: int = 8,
    lora_lr: float = 3e-3,
    dasa: DasaSettings | None = None,
    gradmm: GradmmSettings | None = None,
    isolated: bool = True,
    quality_task: str | None = "shift",
    dasa_snapshots: Sequence[int] = (0, 10, 20),
    gradmm_snapshots: Sequence[int] = (0, 1, 5),
    threads: int | None = 1,
    on_progress: Callable[[dict[str, Any]], None] | None = None,
) -> dict[str, Any]:
    """The comparison as a JSON-able dict; `model_dir=None` builds (or reuses) the tiny base LM under `cache`.

    Defaults (measured, see README): a 2-layer d=96 base LM pre-trained 2000 steps on copy/reverse, 256 source rows
    per task, m = 32, LoRA r 8, lr 3e-3, 200 steps, 64 held-out prompts. Both synthesisers use one group (a single
    desired update / gradient target for all source rows); DASA's target is `self-states` (3 rounds, 30 steps), the
    variant measured to stay above its start rows. `quality_task` (None: skip) gets the time-to-quality
    snapshots (step counts below each method's final step). `threads` sets torch's thread count for the run and its
    synthesis processes (None leaves it): on a shared CPU more threads than free cores spin and slow every step.
    Each finished task and seed is kept under `cache/results/` (keyed by every setting), so a rerun resumes;
    `on_progress(report)` gets the report so far after each.
    """
    if threads is not None:
        arguments = {**locals(), "threads": None}
        previous = torch.get_num_threads()
        torch.set_num_threads(threads)
        try:
            return run_dasa_bench(**arguments)
        finally:
            torch.set_num_threads(previous)
    model_dir_given = model_dir
    dasa = dasa or DasaSettings(**BENCH_DASA)
    gradmm = gradmm or GradmmSettings(groups=1)
    if model_dir is None:
        name = f"base-lm-seed0-steps{base_steps}" + (f"-hidden{base_hidden}" if base_hidden != 64 else "")
        model_dir = build_base_lm(Path(cache) / name, seed=0, steps=base_steps, hidden=base_hidden)
    reference = load_reference(model_dir)
    lora = {"steps": lora_steps, "rank": lora_rank, "lr": lora_lr}
    began, load = time.perf_counter(), os.getloadavg()
    header = {
        "model": reference.model_id,
        "tasks": list(tasks),
        "source_rows": source_rows,
        "test_rows": test_rows,
        "m": m,
        "seeds": list(seeds),
        "base_lm": {"steps": base_steps, "hidden": base_hidden} if model_dir_given is None else None,
        "lora": lora,
        "dasa_settings": asdict(dasa),
        "gradmm_settings": asdict(gradmm),
        "snapshots": {"task": quality_task, "dasa": list(dasa_snapshots), "gradmm": list(gradmm_snapshots)},
        "isolated": isolated,
    }
    unit_settings = {k: v for k, v in header.items() if k not in ("tasks", "seeds")}  # a unit is one task and seed
    key = hashlib.sha256(json.dumps(unit_settings, sort_keys=True).encode()).hexdigest()[:12]
    done = Path(cache) / "results"
    done.mkdir(parents=True, exist_ok=True)
    units: dict[tuple[str, int], dict[str, Any]] = {}
    report: dict[str, Any] = {}
    resumed: list[str] = []
    for seed in seeds:  # seed-major: an interrupted run already holds every task for its first seeds
        for task in tasks:
            path = done / f"{key}-{task}-{seed}.json"
            if path.is_file():
                units[task, seed] = json.loads(path.read_text())
                resumed.append(f"{task}/{seed}")
            else:
                snaps = (dasa_snapshots, gradmm_snapshots) if task == quality_task else ((), ())
                units[task, seed] = _bench_unit(
                    reference,
                    model_dir,
                    task,
                    seed,
                    m=m,
                    source_rows=source_rows,
                    test_rows=test_rows,
                    lora=lora,
                    dasa=dasa,
                    gradmm=gradmm,
                    isolated=isolated,
                    snapshots=snaps,
                )
                tmp = path.with_suffix(".tmp")
                tmp.write_text(json.dumps(units[task, seed]))
                tmp.replace(path)
            report = {
                **header,
                **_bench_report(units, tasks, seeds, finals={"dasa": dasa.steps, "gradmm": gradmm.steps}),
                "memory": "peak RSS growth during synthesis, /proc/self/statm sampled every 10 ms (CPU)"
                + (", each synthesis in a fresh spawned process" if isolated else ", in this process"),
                "dasa_start_rows": "LoRA on the text of the m source rows DASA starts from (what DASA adds to them)",
                "threads": torch.get_num_threads(),
                "load_average_before_after": [list(load), list(os.getloadavg())],
                "total_seconds": time.perf_counter() - began,
                "resumed_units": sorted(resumed),
            }
            if on_progress is not None:
                on_progress(report)
    return report


CONDITIONS = ("source_all", "source_subset", "dasa_start_rows", "dasa", "gradmm", "random")


def _bench_unit(  # type: ignore[no-untyped-def]
    reference: Reference,
    model_dir,
    task: str,
    seed: int,
    *,
    m,
    source_rows,
    test_rows,
    lora,
    dasa,
    gradmm,
    isolated,
    snapshots,
) -> dict[str, Any]:
    """One task and seed: both syntheses (measured), the six LoRA runs, GRADMM's diagnostics, snapshot scores."""
    load = os.getloadavg()
    train, test = split_pairs(task, train=source_rows, test=test_rows, seed=1234)
    synthetic, cost, curve = {}, {}, {}
    for (name, settings), snaps in zip((("dasa", dasa), ("gradmm", gradmm)), snapshots, strict=True):
        synthetic[name], seconds, mib = measure_synthesis(
            name, reference, model_dir, train, m=m, settings=settings, seed=seed, isolated=isolated, snapshots=snaps
        )
        cost[name] = {"seconds": seconds, "peak_rss_mib": mib}
    subset = torch.randperm(len(train), generator=torch.Generator().manual_seed(seed))[:m].tolist()
    subset_rows = rows_from_pairs([train[i] for i in subset], reference.tokenizer)
    runs = {
        "source_all": rows_from_pairs(train, reference.tokenizer),
        "source_subset": subset_rows,
        "dasa_start_rows": rows_from_pairs([train[i] for i in synthetic["dasa"].source_index], reference.tokenizer),
        "dasa": _as_rows("dasa", synthetic["dasa"], synthetic["dasa"].inputs_embeds),
        "gradmm": _as_rows("gradmm", synthetic["gradmm"], synthetic["gradmm"].input_ids),
        "random": _random_rows(reference, subset_rows, seed=seed),
    }
    scores = {name: train_and_evaluate(reference, rows, test, seed=seed, **lora) for name, rows in runs.items()}
    for method, rows in synthetic.items():
        curve[method] = {
            str(step): [seconds, train_and_evaluate(reference, _as_rows(method, rows, value), test, seed=seed, **lora)]
            for step, (seconds, value) in sorted(rows.snapshots.items())
        }
    return {
        "scores": scores,
        "gradmm_projection": gradmm_diagnostics(synthetic["gradmm"], train, task, reference.tokenizer),
        "cost": cost,
        "curve": curve,
        "load_average_before_after": [list(load), list(os.getloadavg())],
    }


def _bench_report(
    units: dict[tuple[str, int], dict[str, Any]], tasks: Sequence[str], seeds: Sequence[int], *, finals: dict[str, int]
) -> dict[str, Any]:
    """Summaries over the finished units (every seed of a task that has one)."""
    per_task: dict[str, Any] = {}
    for task in tasks:
        have = [units[task, s] for s in seeds if (task, s) in units]
        if not have:
            continue
        scores = {k: [u["scores"][k] for u in have] for k in CONDITIONS}
        per_task[task] = {
            "seeds_done": [s for s in seeds if (task, s) in units],
            "exact_match": {k: _summary(v) for k, v in scores.items()},
            "paired": {
                "dasa_minus_start_rows": paired(scores["dasa"], scores["dasa_start_rows"]),
                "dasa_minus_source_subset": paired(scores["dasa"], scores["source_subset"]),
                "start_rows_minus_source_subset": paired(scores["dasa_start_rows"], scores["source_subset"]),
                "gradmm_minus_random": paired(scores["gradmm"], scores["random"]),
                "gradmm_minus_source_subset": paired(scores["gradmm"], scores["source_subset"]),
            },
            "gradmm_projection": {
                k: _summary([u["gradmm_projection"][k] for u in have]) for k in have[0]["gradmm_projection"]
            },
        }
    done = list(units.values())
    cost = {k: {kk: [u["cost"][k][kk] for u in done] for kk in ("seconds", "peak_rss_mib")} for k in finals}
    curves: dict[str, dict[int, list[tuple[float, float]]]] = {k: {} for k in finals}
    for u in done:
        if not u["curve"]["dasa"] and not u["curve"]["gradmm"]:
            continue
        for method in finals:
            for step, (seconds, em) in u["curve"][method].items():
                curves[method].setdefault(int(step), []).append((seconds, em))
            if str(finals[method]) not in u["curve"][method]:
                final = (u["cost"][method]["seconds"], u["scores"][method])
                curves[method].setdefault(finals[method], []).append(final)
    seconds = {k: statistics.fmean(v["seconds"]) for k, v in cost.items()}
    memory = {k: statistics.fmean(v["peak_rss_mib"]) for k, v in cost.items()}
    return {
        "per_task": per_task,
        "synthesis": {k: {kk: _summary(vv) for kk, vv in v.items()} for k, v in cost.items()},
        "full_run_speedup_dasa_over_gradmm": seconds["gradmm"] / seconds["dasa"],
        "time_to_quality": time_to_quality(curves) if curves["dasa"] else None,
        "memory_ratio_dasa_over_gradmm": memory["dasa"] / max(memory["gradmm"], 1e-9),
        "unit_load_average_1min": _summary(loads) if (loads := _unit_loads(done)) else None,
    }


def _unit_loads(units: Sequence[dict[str, Any]]) -> list[float]:
    """The 1-minute load average at the start of each unit that recorded one (units cached by older code did not)."""
    return [u["load_average_before_after"][0][0] for u in units if "load_average_before_after" in u]


LOSS_STEPS = (1, 10, 20, 50, 100, 200)


def heldout_loss_recorder(reference: Reference, test: Sequence[tuple[str, str]]) -> tuple[dict[str, float], Any]:
    """An empty {LoRA step: held-out loss} dict and the `on_step(k, model)` callback filling it at `LOSS_STEPS`."""
    from synth.generators.dasa.lora import source_loss

    found: dict[str, float] = {}

    def record(step: int, model: Any) -> None:
        if step in LOSS_STEPS:
            found[str(step)] = source_loss(model, reference.tokenizer, test)

    return found, record


def search_dasa(
    reference: Reference,
    *,
    task: str,
    m: int,
    seeds: Sequence[int],
    configs: Sequence[dict[str, Any]],
    source_rows: int = 256,
    test_rows: int = 100,
    lora: dict[str, Any] | None = None,
) -> Iterator[dict[str, Any]]:
    """For each seed and DASA settings override (on `groups=1`): exact match of DASA rows and of their start rows
    (trained once per distinct start), the held-out loss along both LoRA runs (`LOSS_STEPS`), the alignment
    before/after and the synthesis time (in this process)."""
    lora = lora or {"steps": 200, "rank": 8, "lr": 3e-3}
    train, test = split_pairs(task, train=source_rows, test=test_rows, seed=1234)
    starts: dict[tuple[int, ...], tuple[float, dict[str, float]]] = {}
    for seed in seeds:
        for config in configs:
            settings = DasaSettings(**{"groups": 1, **config})
            run = functools.partial(synthesize_dasa, reference, train, m=m, settings=settings, seed=seed)
            rows, seconds, _ = measure(run)
            key = tuple(rows.source_index)
            if key not in starts:
                start_rows = rows_from_pairs([train[i] for i in key], reference.tokenizer)
                curve, record = heldout_loss_recorder(reference, test)
                em = train_and_evaluate(reference, start_rows, test, seed=seed, on_step=record, **lora)
                starts[key] = (em, curve)
            curve, record = heldout_loss_recorder(reference, test)
            dasa_rows = _as_rows("dasa", rows, rows.inputs_embeds)
            em = train_and_evaluate(reference, dasa_rows, test, seed=seed, on_step=record, **lora)
            yield {
                "task": task,
                "m": m,
                "seed": seed,
                "model": reference.model_id,
                "config": config,
                "dasa": em,
                "start_rows": starts[key][0],
                "heldout_loss": {"dasa": curve, "start_rows": starts[key][1]},
                "seconds": seconds,
                "alignment": [statistics.fmean(rows.alignment_start), statistics.fmean(rows.alignment)],
            }
