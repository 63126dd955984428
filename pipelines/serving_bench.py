"""`synth bench serve`: requests/s of `synth serve` through the `openai` backend on loopback, at concurrency 1
(the baseline) and higher, the in-process backend on the same requests (no HTTP), and a cached rerun's calls.

Every pass sends the same greedy requests (distinct prompts, fixed `max_tokens`), so passes differ only in how
many are in flight; the server answers queued requests in batches (one `generate` per batch), which is what
concurrency buys. The load average is recorded: the figures are from a shared machine.
"""

from __future__ import annotations

import os
import tempfile
import time
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from synth.core.llm import CachedBackend, GenRequest, Message, ResponseCache, SamplingParams

PROMPT = "Propose an edit of the molecule CCOc1ccccc1 number {index} and answer as <SMILES> ... </SMILES>."


def bench_requests(count: int, *, max_tokens: int) -> list[GenRequest]:
    """`count` distinct greedy requests."""
    sampling = SamplingParams(temperature=0.0, max_tokens=max_tokens)
    return [
        GenRequest(model="bench", messages=(Message("user", PROMPT.format(index=i)),), sampling=sampling)
        for i in range(count)
    ]


def _tiny_model(folder: Path) -> Path:
    from synth.trainers.sft.tiny import build_tiny_model, build_tiny_tokenizer

    tokenizer = build_tiny_tokenizer([PROMPT.format(index=i) for i in range(64)], vocab_size=400)
    model = build_tiny_model(tokenizer, seed=0)
    tokenizer.save_pretrained(folder)
    model.save_pretrained(folder)
    return folder


def _timed(backend: Any, requests: Sequence[GenRequest], *, repeats: int = 1) -> dict[str, Any]:
    """Best wall time of `repeats` passes (the machine is shared: the least disturbed pass) and its throughput.

    A random tiny model stops at a random end-of-sequence token, and a batch runs until its longest member
    stops, so completion tokens per second is the comparable figure; requests per second is reported beside it.
    """
    best, tokens = float("inf"), 0
    for _ in range(repeats):
        started = time.perf_counter()
        results = backend.generate(requests)
        seconds = time.perf_counter() - started
        if seconds < best:
            best, tokens = seconds, sum(r.completion_tokens for r in results)
    return {
        "seconds": round(best, 4),
        "requests_per_s": round(len(requests) / best, 3),
        "completion_tokens": tokens,
        "completion_tokens_per_s": round(tokens / best, 2),
    }


def bench_serve(
    model_dir: Path | None = None,
    *,
    requests: int = 32,
    max_tokens: int = 16,
    concurrency: Sequence[int] = (1, 8),
    batch_size: int = 8,
    repeats: int = 2,
) -> dict[str, Any]:
    """Run the bench (module docstring); `model_dir=None` builds a tiny Llama (hidden 128, 2 layers) locally."""
    import torch

    from synth.core.llm_backends import OpenAIBackend, TransformersBackend
    from synth.pipelines.serving import ServeSettings, create_app, serve_in_thread

    with tempfile.TemporaryDirectory(prefix="synth-serve-bench-") as scratch:
        folder = Path(model_dir) if model_dir is not None else _tiny_model(Path(scratch) / "tiny")
        backend = TransformersBackend(folder, batch_size=batch_size)
        batch = bench_requests(requests, max_tokens=max_tokens)
        backend.generate(batch[:2])  # warm-up (first-call allocations), not timed
        calls = backend.generate_calls
        direct = _timed(backend, batch, repeats=repeats)
        direct["generate_calls_per_pass"] = (backend.generate_calls - calls) / repeats
        settings = ServeSettings(model_name="bench", batch_size=batch_size, max_tokens=max_tokens)
        passes: dict[str, Any] = {}
        with serve_in_thread(create_app(backend, settings)) as url:
            for level in concurrency:
                client = OpenAIBackend(base_url=url, model="bench", retries=0, concurrency=level)
                calls = backend.generate_calls
                passes[str(level)] = _timed(client, batch, repeats=repeats)
                passes[str(level)]["generate_calls_per_pass"] = (backend.generate_calls - calls) / repeats
            cache = ResponseCache(Path(scratch) / "cache.sqlite")
            CachedBackend(OpenAIBackend(base_url=url, model="bench", concurrency=max(concurrency)), cache).generate(
                batch
            )
            calls = backend.generate_calls
            rerun = CachedBackend(OpenAIBackend(base_url=url, model="bench"), cache)
            cached = {
                **_timed(rerun, batch),
                "model_calls": backend.generate_calls - calls,
                "hits": rerun.hits,
                "misses": rerun.misses,
            }
    baseline = passes[str(concurrency[0])]
    return {
        "bench": "serve",
        "model": str(model_dir) if model_dir is not None else "tiny-llama hidden 128, 2 layers (built locally)",
        "requests": requests,
        "max_tokens": max_tokens,
        "batch_size": batch_size,
        "repeats": repeats,
        "timing": "best of `repeats` passes",
        "baseline": f"openai backend at concurrency {concurrency[0]}",
        "openai_over_http": passes,
        "ratio_vs_baseline": {
            k: {
                "requests_per_s": round(v["requests_per_s"] / baseline["requests_per_s"], 3),
                "completion_tokens_per_s": round(v["completion_tokens_per_s"] / baseline["completion_tokens_per_s"], 3),
            }
            for k, v in passes.items()
        },
        "in_process_batched": direct,
        "cached_rerun": cached,
        "torch_threads": torch.get_num_threads(),
        "load_average_1m": round(os.getloadavg()[0], 2),
        "cpus": os.cpu_count(),
    }
