"""`synth bench scale`: shards/s with 1 and 2 workers on the local process pool, Dask and Ray, same work.

Every engine runs the same CPU-bound shards (the papyrus pipeline's generation and verification of one shard,
nothing written) after its workers are started and warmed up (each has built the pipeline once), so the
figures are steady-state throughput; start-up is reported apart. A second measurement sends no-op tasks to one
worker: the per-task overhead of the engine itself. Each task also reports the CPU seconds it used, so a
ratio below 2 on a busy machine can be told apart from an engine that does not scale (`cpu_share`).
"""

from __future__ import annotations

import functools
import json
import os
import time
from collections.abc import Callable, Iterator
from concurrent.futures import ProcessPoolExecutor
from contextlib import contextmanager
from multiprocessing import get_context
from typing import Any

import synth
from synth.core.config import parse_config
from synth.core.records import canonical_json
from synth.core.shard import ShardStats
from synth.flows.bench import bench_config, machine_info
from synth.pipelines.runner import Pipeline, build_pipeline

ENGINES = ("local", "dask", "ray")
SCALE_GOAL = 1.8
Submit = Callable[[Callable[..., Any], list[tuple[Any, ...]]], list[Any]]


@functools.lru_cache(maxsize=2)
def _pipeline(config_json: str) -> Pipeline:
    return build_pipeline(parse_config(json.loads(config_json), source="synth bench scale"))


def shard_work(config_json: str, index: int) -> tuple[int, float]:
    """Generate and verify shard `index` in memory; return (rows, CPU seconds used)."""
    start = time.process_time()
    rows = sum(output.kept.num_rows for output in _pipeline(config_json).run_shard(index, ShardStats()))
    return rows, time.process_time() - start


def noop(index: int) -> int:
    """A task that does nothing: what is left of its time is the engine's overhead."""
    return index


@contextmanager
def local_pool(workers: int) -> Iterator[Submit]:
    """A spawn-context process pool (what `synth run --workers N` uses)."""
    with ProcessPoolExecutor(max_workers=workers, mp_context=get_context("spawn")) as pool:
        yield lambda fn, args: [f.result() for f in [pool.submit(fn, *a) for a in args]]


@contextmanager
def dask_cluster(workers: int) -> Iterator[Submit]:
    """A local Dask cluster of single-threaded worker processes on 127.0.0.1 (what `--task-runner dask` starts)."""
    from distributed import Client, LocalCluster

    cluster = LocalCluster(
        n_workers=workers, threads_per_worker=1, processes=True, host="127.0.0.1", dashboard_address=None
    )
    with cluster, Client(cluster) as client:
        yield lambda fn, args: client.gather([client.submit(fn, *a, pure=False) for a in args])


@contextmanager
def ray_cluster(workers: int) -> Iterator[Submit]:
    """A local Ray instance with `workers` CPUs on 127.0.0.1, no dashboard (what `--task-runner ray` starts)."""
    import ray

    ray.init(num_cpus=workers, include_dashboard=False, _node_ip_address="127.0.0.1", log_to_driver=False)
    try:
        remotes: dict[Callable[..., Any], Any] = {}

        def submit(fn: Callable[..., Any], args: list[tuple[Any, ...]]) -> list[Any]:
            remote = remotes.setdefault(fn, ray.remote(num_cpus=1)(fn))
            return ray.get([remote.remote(*a) for a in args])

        yield submit
    finally:
        ray.shutdown()


STARTERS = {"local": local_pool, "dask": dask_cluster, "ray": ray_cluster}


def _measure(engine: str, workers: int, config_json: str, shards: int, noops: int) -> dict[str, Any]:
    start = time.perf_counter()
    with STARTERS[engine](workers) as submit:
        submit(shard_work, [(config_json, shards + i) for i in range(workers * 2)])  # start and warm every worker
        started = time.perf_counter() - start
        begin = time.perf_counter()
        results = submit(shard_work, [(config_json, i) for i in range(shards)])
        seconds = time.perf_counter() - begin
        overhead = None
        if workers == 1 and noops:
            submit(noop, [(i,) for i in range(min(noops, 10))])
            begin = time.perf_counter()
            submit(noop, [(i,) for i in range(noops)])
            overhead = (time.perf_counter() - begin) / noops
    cpu = sum(c for _, c in results)
    return {
        "workers": workers,
        "startup_seconds": round(started, 3),
        "seconds": round(seconds, 3),
        "shards_per_second": round(shards / seconds, 4),
        "rows": sum(r for r, _ in results),
        "task_cpu_seconds": round(cpu, 3),
        "cpu_share": round(cpu / (seconds * workers), 3),
        "noop_task_ms": None if overhead is None else round(1000 * overhead, 3),
    }


def calibrate(shard_seconds: float, total_shards: int) -> tuple[dict[str, Any], float]:
    """A papyrus config of `total_shards` whose shards take about `shard_seconds` of CPU each (shard 0 measured
    in this process)."""
    samples = 1
    for _ in range(4):
        payload = bench_config(samples=samples, shards=total_shards).model_dump(mode="json")
        _, cpu = shard_work(canonical_json(payload), 0)
        if cpu >= 0.8 * shard_seconds:
            break
        samples = max(samples + 1, round(samples * shard_seconds / max(cpu, 1e-3)))
    return payload, cpu


def bench_scale(
    *,
    shards: int = 8,
    shard_seconds: float = 0.75,
    noops: int = 200,
    engines: tuple[str, ...] = ENGINES,
    worker_counts: tuple[int, ...] = (1, 2),
) -> dict[str, Any]:
    """Throughput with 1 and 2 workers per engine on the same shards, and each engine's per-task overhead."""
    load_before = os.getloadavg()
    payload, probe = calibrate(shard_seconds, shards + 2 * max(worker_counts))
    config_json = canonical_json(payload)
    results: dict[str, Any] = {}
    for engine in engines:
        runs = [_measure(engine, workers, config_json, shards, noops) for workers in worker_counts]
        first, last = runs[0], runs[-1]
        results[engine] = {
            "runs": runs,
            "speedup": round(last["shards_per_second"] / first["shards_per_second"], 3),
            "noop_task_ms": first["noop_task_ms"],
        }
    rows = {engine: [run["rows"] for run in r["runs"]] for engine, r in results.items()}
    return {
        "benchmark": "scale",
        "synth_version": synth.__version__,
        "machine": machine_info(load_before, os.getloadavg()),
        "config": {key: payload[key] for key in ("domain", "seed", "generator")},
        "shards": shards,
        "probe_shard_cpu_seconds": round(probe, 3),
        "engines": results,
        "ratios": {f"{engine}_{max(worker_counts)}_vs_1": r["speedup"] for engine, r in results.items()},
        "same_rows_everywhere": len({tuple(v) for v in rows.values()}) == 1
        and len({n for v in rows.values() for n in v}) == 1,
        "goal": {
            "speedup_min": SCALE_GOAL,
            "met": {engine: r["speedup"] >= SCALE_GOAL for engine, r in results.items()},
        },
        "notes": (
            "Each engine: start it, run 2 warm-up shards per worker (excluded), then time `shards` shards with 1 "
            "and with 2 workers; shards/s and the ratio come from the same run. cpu_share = task CPU seconds / "
            "(wall seconds x workers): below ~0.9 the workers did not get their cores (another load on the "
            "machine; see loadavg), not engine overhead. noop_task_ms: wall per no-op task on 1 worker."
        ),
    }
