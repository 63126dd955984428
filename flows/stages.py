"""A multi-stage pipeline as a Prefect flow: one subflow per stage, so the Prefect UI shows the stage DAG.

A generate stage runs as the `synth-pipeline` subflow (a task per shard); other stages run as a `synth-stage`
subflow around the same `run_stage` the local engine calls, so both engines write the same bytes.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from prefect import flow

from synth.core.config import TaskRunner as TaskRunnerName
from synth.pipelines.stage_engine import StagesSummary, run_atomic_stage, run_stages
from synth.pipelines.stages import Stage, StagePlan, parse_stages


@flow(name="synth-stage", flow_run_name="stage-{name}", log_prints=True)
def stage_flow(config: dict[str, Any], source: str, name: str, out: str) -> dict[str, Any]:
    """Run one non-generate stage of the pipeline described by `config` into `out/<name>`."""
    plan = parse_stages(config, source=source)
    return run_atomic_stage(plan, plan.stage(name), Path(out))


def run_stages_prefect(
    plan: StagePlan,
    config: dict[str, Any],
    out: str | Path,
    *,
    task_runner: TaskRunnerName | None = None,
    workers: int | None = None,
) -> StagesSummary:
    """Run the stages as subflows of one `synth-stages` flow and return the local engine's summary."""
    from synth.flows.pipeline import flow_heartbeat, make_task_runner, synth_pipeline_flow

    def run_generate(stage: Stage, target: Path, changed: bool) -> dict[str, Any]:
        execution = stage.config.execution
        runner = make_task_runner(
            task_runner or plan.execution.task_runner,
            workers or plan.execution.workers,
            address=execution.address or plan.execution.address,
            dask_address=execution.dask_address or plan.execution.dask_address,
        )
        subflow = synth_pipeline_flow.with_options(task_runner=runner, flow_run_name=f"stage-{stage.name}")
        return subflow(stage.config.model_dump(mode="json"), str(target), changed)["manifest"]

    @flow(name="synth-stages", log_prints=True, persist_result=False)
    def synth_stages_flow() -> StagesSummary:
        return run_stages(plan, out, run_generate=run_generate, run_atomic=_atomic_subflow(config, plan.source))

    with flow_heartbeat(plan.execution.heartbeat_seconds):
        return synth_stages_flow()


def _atomic_subflow(config: dict[str, Any], source: str) -> Any:
    def run(plan: StagePlan, stage: Stage, root: Path) -> dict[str, Any]:
        return stage_flow(config, source, stage.name, str(root))

    return run
