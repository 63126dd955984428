"""`synth bench dasa`: downstream exact match after matched LoRA runs on source text, a source subset, DASA rows,
GRADMM rows and random embeddings (several seeds), and the synthesis cost of DASA vs GRADMM for the same m.

Memory is the peak resident-set growth during synthesis, sampled every 10 ms from `/proc/self/statm` (torch's CPU
allocator is invisible to tracemalloc); on CUDA it would be `torch.cuda.max_memory_allocated`. With `isolated`
(the default) each synthesis runs in a fresh spawned process that has only loaded the reference model, so the growth
is not hidden by memory an earlier run left in the allocator (measured in-process, later runs read ~0 MiB).
"""

from __future__ import annotations

import os
import statistics
import threading
import time
from collections.abc import Callable, Sequence
from dataclasses import asdict
from pathlib import Path
from typing import Any, TypeVar

import torch

from synth.generators.dasa.base_lm import Reference, build_base_lm, load_reference
from synth.generators.dasa.lora import TrainRows, rows_from_pairs, train_and_evaluate
from synth.generators.dasa.synthesize import DasaSettings, SyntheticRows, synthesize_dasa
from synth.generators.dasa.tasks import split_pairs
from synth.generators.gradmm.admm import GradmmSettings, synthesize_gradmm

T = TypeVar("T")
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


def _synthesize(method: str, reference: Reference, train: list[tuple[str, str]], m: int, settings: Any, seed: int):  # type: ignore[no-untyped-def]
    if method == "dasa":
        return synthesize_dasa(reference, train, m=m, settings=settings, seed=seed)
    return synthesize_gradmm(reference, train, m=m, settings=settings, seed=seed)


def _measured_child(args: tuple[Any, ...]) -> tuple[SyntheticRows, float, float]:
    method, model_dir, train, m, settings, seed, threads = args
    torch.set_num_threads(threads)
    reference = load_reference(model_dir)
    return measure(lambda: _synthesize(method, reference, train, m, settings, seed))


def measure_synthesis(  # type: ignore[no-untyped-def]
    method: str, reference: Reference, model_dir, train, *, m: int, settings: Any, seed: int, isolated: bool
) -> tuple[SyntheticRows, float, float]:
    """Synthesise with `method` and measure it (`measure`), in a fresh spawned process when `isolated`."""
    if not isolated:
        return measure(lambda: _synthesize(method, reference, train, m, settings, seed))
    import multiprocessing

    with multiprocessing.get_context("spawn").Pool(1) as pool:
        args = (method, str(model_dir), list(train), m, settings, seed, torch.get_num_threads())
        return pool.apply(_measured_child, (args,))


def _embedding_rows(rows: SyntheticRows) -> TrainRows:
    return TrainRows(labels=rows.labels, attention_mask=rows.attention_mask, inputs_embeds=rows.inputs_embeds)


def _random_rows(reference: Reference, like: TrainRows, *, seed: int) -> TrainRows:
    weight = reference.model.get_input_embeddings().weight.detach()
    assert like.input_ids is not None
    shape = (*like.input_ids.shape, weight.shape[1])
    noise = torch.randn(shape, generator=torch.Generator().manual_seed(seed))
    embeds = noise * weight.norm(dim=-1).mean() / shape[-1] ** 0.5
    return TrainRows(labels=like.labels, attention_mask=like.attention_mask, inputs_embeds=embeds)


def _summary(values: Sequence[float]) -> dict[str, Any]:
    sd = statistics.stdev(values) if len(values) > 1 else 0.0
    return {"mean": statistics.fmean(values), "sd": sd, "values": list(values)}


def run_dasa_bench(
    *,
    model_dir: str | Path | None = None,
    cache: str | Path = "out/bench-dasa",
    task: str = "shift",
    source_rows: int = 256,
    test_rows: int = 100,
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
) -> dict[str, Any]:
    """The comparison as a JSON-able dict; `model_dir=None` builds (or reuses) the tiny base LM under `cache`.

    Defaults (measured, see README): a 2-layer d=96 base LM pre-trained 2000 steps on copy/reverse (the earlier
    600 steps at d=64 left it too weak: all source text reached only 0.42 exact match after LoRA, now ~0.98), 256
    source rows, m = 32 (where a 32-row subset is clearly below all source text), LoRA r 8, lr 3e-3, 200 steps.
    Both synthesisers use one group (a single desired update / gradient target for all source rows).
    """
    model_dir_given = model_dir
    dasa = dasa or DasaSettings(groups=1)
    gradmm = gradmm or GradmmSettings(groups=1)
    if model_dir is None:
        name = f"base-lm-seed0-steps{base_steps}" + (f"-hidden{base_hidden}" if base_hidden != 64 else "")
        model_dir = build_base_lm(Path(cache) / name, seed=0, steps=base_steps, hidden=base_hidden)
    reference = load_reference(model_dir)
    train, test = split_pairs(task, train=source_rows, test=test_rows, seed=1234)
    lora = {"steps": lora_steps, "rank": lora_rank, "lr": lora_lr}
    conditions = ("source_all", "source_subset", "dasa_start_rows", "dasa", "gradmm", "random")
    scores: dict[str, list[float]] = {k: [] for k in conditions}
    began = time.perf_counter()
    cost: dict[str, dict[str, list[float]]] = {k: {"seconds": [], "peak_rss_mib": []} for k in ("dasa", "gradmm")}
    for seed in seeds:
        all_rows = rows_from_pairs(train, reference.tokenizer)
        subset = torch.randperm(len(train), generator=torch.Generator().manual_seed(seed))[:m].tolist()
        synthetic = {}
        for name, settings in (("dasa", dasa), ("gradmm", gradmm)):
            synthetic[name], seconds, mib = measure_synthesis(
                name, reference, model_dir, train, m=m, settings=settings, seed=seed, isolated=isolated
            )
            cost[name]["seconds"].append(seconds)
            cost[name]["peak_rss_mib"].append(mib)
        subset_rows = rows_from_pairs([train[i] for i in subset], reference.tokenizer)
        start_rows = rows_from_pairs([train[i] for i in synthetic["dasa"].source_index], reference.tokenizer)
        runs = {
            "source_all": all_rows,
            "source_subset": subset_rows,
            "dasa_start_rows": start_rows,
            "dasa": _embedding_rows(synthetic["dasa"]),
            "gradmm": TrainRows(
                labels=synthetic["gradmm"].labels,
                attention_mask=synthetic["gradmm"].attention_mask,
                input_ids=synthetic["gradmm"].input_ids,
            ),
            "random": _random_rows(reference, subset_rows, seed=seed),
        }
        for name, rows in runs.items():
            scores[name].append(train_and_evaluate(reference, rows, test, seed=seed, **lora))
    seconds = {k: statistics.fmean(v["seconds"]) for k, v in cost.items()}
    return {
        "model": reference.model_id,
        "task": task,
        "source_rows": source_rows,
        "test_rows": test_rows,
        "m": m,
        "seeds": list(seeds),
        "base_lm": {"steps": base_steps, "hidden": base_hidden} if model_dir_given is None else None,
        "lora": lora,
        "dasa_settings": asdict(dasa),
        "gradmm_settings": asdict(gradmm),
        "exact_match": {k: _summary(v) for k, v in scores.items()},
        "synthesis": {k: {kk: _summary(vv) for kk, vv in v.items()} for k, v in cost.items()},
        "speedup_dasa_over_gradmm": seconds["gradmm"] / seconds["dasa"],
        "memory_ratio_dasa_over_gradmm": statistics.fmean(cost["dasa"]["peak_rss_mib"])
        / max(statistics.fmean(cost["gradmm"]["peak_rss_mib"]), 1e-9),
        "memory": "peak RSS growth during synthesis, /proc/self/statm sampled every 10 ms (CPU)"
        + (", each synthesis in a fresh spawned process" if isolated else ", in this process"),
        "dasa_start_rows": "LoRA on the text of the m source rows DASA starts from (what DASA adds to them)",
        "threads": torch.get_num_threads(),
        "total_seconds": time.perf_counter() - began,
    }
