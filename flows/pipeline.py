"""The pipeline as a Prefect 3 flow: one task per shard, a selectable task runner, the same runner code.

Without `PREFECT_API_URL` Prefect starts a temporary local server; with it, runs report to that server.
"""

from __future__ import annotations

import importlib
import os
from collections.abc import Callable
from contextlib import AbstractContextManager
from pathlib import Path
from typing import Any

from prefect import flow, runtime, task
from prefect.cache_policies import NO_CACHE
from prefect.settings import PREFECT_FLOWS_HEARTBEAT_FREQUENCY, temporary_settings
from prefect.states import State
from prefect.task_runners import ProcessPoolTaskRunner, TaskRunner, ThreadPoolTaskRunner

from synth.core.config import PipelineConfig, parse_config
from synth.core.config import TaskRunner as TaskRunnerName
from synth.core.errors import MissingDependencyError
from synth.pipelines.execution import RunSummary, execute_shard, finalize_run, open_run

os.environ.setdefault("PREFECT_SERVER_ANALYTICS_ENABLED", "false")


def _is_io_error(task: Any, task_run: Any, state: State) -> bool:
    """Retry a shard only when it failed on I/O; a deterministic error would fail again."""
    return isinstance(state.result(raise_on_failure=False), OSError)


@task(
    name="write-shard",
    task_run_name="shard-{index}",
    retries=2,
    retry_delay_seconds=[1, 5],
    retry_condition_fn=_is_io_error,
    cache_policy=NO_CACHE,
    persist_result=False,
)
def write_shard_task(config_payload: dict[str, Any], out: str, index: int) -> dict[str, Any]:
    """Generate, verify, filter and write one shard; return its completion record."""
    return execute_shard(config_payload, out, index)


@flow(name="synth-pipeline", log_prints=True, persist_result=False)
def synth_pipeline_flow(config_payload: dict[str, Any], out: str, overwrite: bool = False) -> dict[str, Any]:
    """Run every pending shard of a pipeline as a task, then write the manifest and the dataset card."""
    config = parse_config(config_payload, source="<flow parameters>")
    with open_run(config, out, overwrite=overwrite) as plan:
        futures = [write_shard_task.submit(plan.config_payload, out, index) for index in plan.pending]
        for future in futures:
            record = future.result()
            plan.records[record["index"]] = record
            plan.write_manifest()
        manifest = finalize_run(plan)
    return {"manifest": manifest, "executed": plan.pending, "flow_run_id": str(runtime.flow_run.id)}


def make_task_runner(
    name: TaskRunnerName,
    workers: int | None,
    *,
    address: str | None = None,
    dask_address: str | None = None,
    dashboard_address: str | None = None,
) -> TaskRunner:
    """A Prefect task runner by name: threads (default), processes, dask (prefect-dask) or ray (prefect-ray).

    `address` (or the older `dask_address`) connects to an existing cluster: a Dask scheduler
    (`tcp://host:8786`) or a Ray head (`host:6379`, `ray://host:10001`). Without one, a local cluster of
    `workers` single-threaded workers starts on 127.0.0.1 with no dashboard unless `dashboard_address` asks for
    one (e.g. `127.0.0.1:8787`; Dask's own default would serve it on every interface).
    """
    workers = workers or os.cpu_count() or 1
    if name == "dask":
        dask_runner = _import_runner("prefect_dask", "DaskTaskRunner", "dask")
        if address or dask_address:
            return dask_runner(address=address or dask_address)
        cluster = {
            "n_workers": workers,
            "threads_per_worker": 1,
            "processes": True,
            "host": "127.0.0.1",
            "dashboard_address": dashboard_address,
        }
        return dask_runner(cluster_kwargs=cluster)
    if name == "ray":
        ray_runner = _import_runner("prefect_ray", "RayTaskRunner", "ray")
        if address:
            return ray_runner(address=address)
        local = {"num_cpus": workers, "include_dashboard": False, "_node_ip_address": "127.0.0.1"}
        return ray_runner(init_kwargs=local | {"log_to_driver": False})
    if name == "processes":
        return ProcessPoolTaskRunner(max_workers=workers)
    return ThreadPoolTaskRunner(max_workers=workers)


def _import_runner(module: str, name: str, runner: str) -> Any:
    try:
        return getattr(importlib.import_module(module), name)
    except ImportError:
        msg = f"task runner `{runner}` needs {module.replace('_', '-')}; install it with `pip install 'synth[dist]'`"
        raise MissingDependencyError(msg) from None


def flow_heartbeat(seconds: int | None) -> AbstractContextManager[Any]:
    """Prefect settings for the flow runs started inside the block: a heartbeat every `seconds`, or none.

    Prefect 3.9's heartbeat thread sleeps in 1 s steps and is joined when each flow run ends (0-1 s a run); a run in
    the calling process reports its own failure, so synth sends none unless `execution.heartbeat_seconds` asks.
    """
    return temporary_settings({PREFECT_FLOWS_HEARTBEAT_FREQUENCY: seconds})


def run_prefect(
    config: PipelineConfig,
    out: str | Path,
    *,
    overwrite: bool = False,
    task_runner: TaskRunnerName | None = None,
    workers: int | None = None,
    on_flow_run: Callable[[str], None] | None = None,
) -> RunSummary:
    """Run the pipeline as a Prefect flow and return the same summary as the local engine.

    `on_flow_run` receives the flow run's id (the benchmark reads its task runs' timings from the server).
    """
    runner = make_task_runner(
        task_runner or config.execution.task_runner,
        workers or config.execution.workers,
        address=config.execution.address,
        dask_address=config.execution.dask_address,
    )
    configured = synth_pipeline_flow.with_options(task_runner=runner)
    all_shards = set(range(config.shards))
    with flow_heartbeat(config.execution.heartbeat_seconds):
        result = configured(config.model_dump(mode="json"), str(out), overwrite)
    executed = list(result["executed"])
    if on_flow_run is not None:
        on_flow_run(result["flow_run_id"])
    return RunSummary(
        out=Path(out),
        manifest=result["manifest"],
        skipped=sorted(all_shards - set(executed)),
        executed=executed,
    )
