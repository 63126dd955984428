"""`synth bench pipeline`: engine overhead against a bare loop doing the same generation and verification.

All timings come from one process and one run, so the ratios compare like with like on this machine.
"""

from __future__ import annotations

import math
import os
import platform
import shutil
import tempfile
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

import psutil
import pyarrow as pa
import pyarrow.parquet as pq

import synth
from synth.core.config import PipelineConfig, parse_config
from synth.core.records import score_column, verdict_column, verdict_type
from synth.core.sink import PARQUET_OPTIONS, WriteBehind
from synth.pipelines.execution import run_local
from synth.pipelines.runner import build_pipeline

LOCAL_GOAL = 1.05
PREFECT_GOAL = 1.10


def bench_config(*, samples: int, shards: int, seed: int = 0) -> PipelineConfig:
    """The papyrus pipeline the benchmark runs: the shipped EpiDoc sample, `samples` noisy copies per level."""
    payload = {
        "domain": "papyrus",
        "seed": seed,
        "shards": shards,
        "generator": {"samples": samples, "sources": ["epidoc"]},
    }
    return parse_config(payload, source="synth bench")


def run_bare_loop(config: PipelineConfig, target: Path) -> int:
    """The baseline: call the same generator and verifiers in a plain loop and write one Parquet file (behind
    the loop on a thread, as the engines write their shards)."""
    pipeline = build_pipeline(config)
    generator = pipeline.generator
    fields = list(generator.schema)
    for verifier in pipeline.verifiers:
        fields += [pa.field(score_column(verifier.name, s), pa.float64()) for s in verifier.scores]
        fields.append(pa.field(verdict_column(verifier.name), verdict_type(verifier.scores)))
    schema = pa.schema(fields)
    rows = 0
    with pq.ParquetWriter(target, schema, **PARQUET_OPTIONS) as writer, WriteBehind() as writes:
        for index in range(config.shards):
            for batch in generator.generate(pipeline.shard_context(index)):
                table = pa.Table.from_pylist(batch.rows, schema=generator.schema)
                for verifier in pipeline.verifiers:
                    verdicts = verifier.verify(table)
                    for s in verifier.scores:
                        table = table.append_column(
                            score_column(verifier.name, s),
                            pa.array([v.scores[s] for v in verdicts], pa.float64()),
                        )
                    column = pa.array([v.to_dict() for v in verdicts], verdict_type(verifier.scores))
                    table = table.append_column(verdict_column(verifier.name), column)
                if table.num_rows:
                    writes.submit(writer.write_table, table)
                rows += table.num_rows
    return rows


def machine_info(load_before: tuple[float, ...], load_after: tuple[float, ...]) -> dict[str, Any]:
    """The machine and its load (1/5/15-minute averages) before and after the measurement."""
    return {
        "cpus": os.cpu_count(),
        "python": platform.python_version(),
        "platform": platform.platform(),
        "loadavg_before": [round(v, 2) for v in load_before],
        "loadavg_after": [round(v, 2) for v in load_after],
    }


def prefect_breakdown(flow_run_id: str, wall_seconds: float) -> dict[str, float]:
    """Where a Prefect run's wall time went, from the server's records of the flow run and its task runs."""
    from uuid import UUID

    from prefect import get_client
    from prefect.client.schemas.filters import FlowRunFilter, FlowRunFilterId

    with get_client(sync_client=True) as client:
        flow_run = client.read_flow_run(UUID(flow_run_id))
        tasks = client.read_task_runs(flow_run_filter=FlowRunFilter(id=FlowRunFilterId(any_=[UUID(flow_run_id)])))
    spans = sorted((t.start_time, t.end_time) for t in tasks if t.start_time and t.end_time)
    if not spans or flow_run.start_time is None or flow_run.end_time is None:
        return {}
    in_tasks = sum((end - start).total_seconds() for start, end in spans)
    flow_seconds = (flow_run.end_time - flow_run.start_time).total_seconds()
    setup = (spans[0][0] - flow_run.start_time).total_seconds()
    finish = (flow_run.end_time - spans[-1][1]).total_seconds()
    return {
        "wall": round(wall_seconds, 3),
        "outside_flow_run": round(wall_seconds - flow_seconds, 3),
        "flow_setup": round(setup, 3),
        "in_tasks": round(in_tasks, 3),
        "between": round(flow_seconds - setup - finish - in_tasks, 3),
        "finish": round(finish, 3),
        "tasks": len(spans),
    }


class _Clock:
    """Wall and CPU seconds of one run: this process's CPU (every thread) plus its child processes' (the
    temporary Prefect server), so a run slowed by another load on the machine can be told from real work."""

    def __init__(self) -> None:
        self.process = psutil.Process()

    def _cpu(self) -> float:
        total = time.process_time()
        for child in self.process.children(recursive=True):
            try:
                times = child.cpu_times()
            except psutil.Error:
                continue
            total += times.user + times.system
        return total

    def measure(self, action: Callable[[], Any]) -> tuple[float, float, Any]:
        """Run `action`; return (wall seconds, CPU seconds, its result)."""
        cpu, start = self._cpu(), time.perf_counter()
        result = action()
        return time.perf_counter() - start, self._cpu() - cpu, result


def _calibrate(base: Path, clock: _Clock, *, min_seconds: float, shards: int) -> tuple[PipelineConfig, float, float]:
    """Grow `samples` until the bare loop runs at least `min_seconds`; return the config and that run's times."""
    probe, _, _ = clock.measure(lambda: run_bare_loop(bench_config(samples=1, shards=shards), base / "bare.parquet"))
    samples = max(1, math.ceil(1.2 * min_seconds / max(probe, 1e-3)))
    for _ in range(4):
        config = bench_config(samples=samples, shards=shards)
        seconds, cpu, _ = clock.measure(lambda config=config: run_bare_loop(config, base / "bare.parquet"))
        if seconds >= min_seconds:
            break
        samples = math.ceil(samples * 1.15 * min_seconds / seconds)
    return config, seconds, cpu


def _ratios(best: dict[str, float]) -> dict[str, float]:
    """Each engine's best time over the bare loop's, and the Prefect runs' over the local engine's."""
    ratios = {f"{name}_vs_bare": round(value / best["bare"], 4) for name, value in best.items() if name != "bare"}
    if "local" in best:
        for name in ("prefect_warm", "prefect_cold"):
            if name in best:
                ratios[f"{name}_vs_local"] = round(best[name] / best["local"], 4)
    return ratios


def bench_pipeline(
    *,
    min_seconds: float = 20.0,
    shards: int = 4,
    repeats: int = 3,
    engines: tuple[str, ...] = ("local", "prefect"),
    work_dir: Path | None = None,
) -> dict[str, Any]:
    """Measure the local and Prefect engines against the bare loop on a run of at least `min_seconds`.

    The runs are interleaved (bare, local, Prefect, then again) so a change of load on the machine touches every
    engine alike; the best of `repeats` counts, in wall and in CPU seconds.
    """
    load_before = os.getloadavg()
    base = Path(work_dir or tempfile.mkdtemp(prefix="synth-bench-"))
    base.mkdir(parents=True, exist_ok=True)
    clock = _Clock()
    config, first_bare, first_bare_cpu = _calibrate(base, clock, min_seconds=min_seconds, shards=shards)
    wall: dict[str, list[float]] = {"bare": [first_bare]}
    cpu: dict[str, list[float]] = {"bare": [first_bare_cpu]}
    rows: dict[str, int] = {}
    breakdown: dict[str, Any] = {}
    flow_runs: list[str] = []

    def record(label: str, action: Callable[[], Any]) -> Any:
        seconds, cpu_seconds, result = clock.measure(action)
        wall.setdefault(label, []).append(seconds)
        cpu.setdefault(label, []).append(cpu_seconds)
        if label != "bare":
            rows[label] = result.manifest["totals"]["generated"]
        if label == "prefect_warm":
            breakdown.setdefault("warm_runs", []).append(prefect_breakdown(flow_runs[-1], seconds))
        return result

    if "prefect" in engines:
        os.environ.setdefault("PREFECT_SERVER_EPHEMERAL_STARTUP_TIMEOUT_SECONDS", "120")
        from synth.flows.pipeline import run_prefect

        def prefect(out: Path) -> Any:
            return run_prefect(config, out, overwrite=True, workers=1, on_flow_run=flow_runs.append)

    for attempt in range(repeats):
        if attempt:
            record("bare", lambda: run_bare_loop(config, base / "bare.parquet"))
        if "local" in engines:
            record("local", lambda attempt=attempt: run_local(config, base / f"local-{attempt}", overwrite=True))
        if "prefect" in engines:
            if attempt == 0:
                record("prefect_cold", lambda: prefect(base / "prefect-cold"))
            record("prefect_warm", lambda attempt=attempt: prefect(base / f"prefect-warm-{attempt}"))
    rows["bare"] = pq.read_metadata(base / "bare.parquet").num_rows
    load_after = os.getloadavg()
    best = {name: min(values) for name, values in wall.items()}
    best_cpu = {name: min(values) for name, values in cpu.items()}
    ratios, cpu_ratios = _ratios(best), _ratios(best_cpu)
    warm = [run for run in breakdown.get("warm_runs", []) if run]
    if warm and "local" in best:
        ratios["prefect_in_tasks_vs_local"] = round(min(run["in_tasks"] for run in warm) / best["local"], 4)
    shutil.rmtree(base, ignore_errors=work_dir is None)
    return {
        "benchmark": "pipeline",
        "synth_version": synth.__version__,
        "machine": machine_info(load_before, load_after),
        "config": config.hashed_fields(),
        "rows_generated": rows,
        "seconds": {name: [round(v, 3) for v in values] for name, values in wall.items()},
        "cpu_seconds": {name: [round(v, 3) for v in values] for name, values in cpu.items()},
        "best_seconds": {name: round(v, 3) for name, v in best.items()},
        "best_cpu_seconds": {name: round(v, 3) for name, v in best_cpu.items()},
        "ratios": ratios,
        "cpu_ratios": cpu_ratios,
        "prefect_breakdown": breakdown,
        "goal": {
            "local_vs_bare_max": LOCAL_GOAL,
            "met": ratios.get("local_vs_bare", math.inf) <= LOCAL_GOAL,
            "prefect_warm_vs_bare_max": PREFECT_GOAL,
            "prefect_met": ratios.get("prefect_warm_vs_bare", math.inf) <= PREFECT_GOAL,
            "bare_seconds_min": min_seconds,
            "bare_long_enough": best["bare"] >= min_seconds,
        },
        "notes": (
            "bare = the same generator and verifiers in a plain loop writing one Parquet file (on a background "
            "thread, as the engines do); local adds ids, provenance, filters, rejected shards, atomic renames, "
            "checksums, manifest and card; prefect_cold includes starting Prefect's temporary server, prefect_warm "
            "are later flows in the same process (no flow-run heartbeat unless the config sets one). Runs "
            "are interleaved (bare, local, Prefect; repeated), the best of each counts. cpu_seconds are this "
            "process's CPU (all threads) plus its children's (the temporary server): unlike wall time they do not "
            "grow when another load shares the cores. prefect_breakdown splits each warm run with the task runs' "
            "own start and end times from the server: flow_setup (flow start to the first shard task), in_tasks "
            "(shard tasks running), between (gaps between tasks: submission and state calls), finish (last task to "
            "the return: manifest, card, flow state); in_tasks_vs_local compares the tasks' own time with the "
            "local engine's whole run."
        ),
    }
