"""`synth deploy CONFIG --name N [--cron EXPR | --interval S]`: a scheduled Prefect deployment of a pipeline."""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any

import typer
from rich.markup import escape

from synth.cli._common import cli_errors, console
from synth.core.config import apply_overrides
from synth.core.errors import ConfigError

PARAM_HELP = (
    "A flow parameter KEY=VALUE (value as YAML; repeatable): versions=date|seed|off, keep=N, seed=S, "
    "task_runner=dask|ray, address=..., workers=N, overrides=[generator.samples=2]."
)


def _parameters(config: Path, out: str | None, name: str, project: Path, assignments: list[str]) -> dict[str, Any]:
    """The deployment's `params`: the config path as the run will see it, OUT, and the --param values."""
    from synth.core.config import read_config_mapping

    data = read_config_mapping(config)
    resolved = config.resolve()
    try:
        config_path = str(resolved.relative_to(project.resolve()))
    except ValueError:
        config_path = str(resolved)
    params: dict[str, Any] = {"config_path": config_path}
    for assignment in assignments:
        key = assignment.partition("=")[0]
        if "." in key:
            msg = f"--param {assignment!r}: a flow parameter has no dots; set config fields with overrides=[a.b=v]"
            raise ConfigError(msg)
    params = apply_overrides(params, assignments)
    params["out"] = out or params.get("out") or f"out/{name}"  # not execution.out: `synth run` writes that one
    _check_config(data, params, source=str(config))
    return params


def _check_config(data: dict[str, Any], params: dict[str, Any], *, source: str) -> None:
    """Refuse parameters or a config the scheduled runs would reject, before anything is registered."""
    from synth.flows.deploy import check_parameters
    from synth.flows.run import check_config

    checked = check_parameters(params, source="--param")
    check_config(apply_overrides(data, list(checked.get("overrides", []))), source)


def deploy_command(
    config: Path | None = typer.Argument(None, help="Pipeline config (YAML) the deployment runs.", metavar="CONFIG"),
    name: str | None = typer.Option(None, "--name", "-n", help="Deployment name (default: the config's stem)."),
    cron: str | None = typer.Option(None, "--cron", help="Cron schedule in UTC, e.g. '0 3 * * *'."),
    interval: float | None = typer.Option(None, "--interval", min=1, help="Run every S seconds."),
    pool: str | None = typer.Option(None, "--pool", help="Work pool (e.g. a `process` pool) that runs it."),
    params: list[str] | None = typer.Option(None, "--param", help=PARAM_HELP),
    out: str | None = typer.Option(None, "--out", "-o", help="Output root; each run adds OUT/versions/<date>-<n>/."),
    file: Path = typer.Option(Path("prefect.yaml"), "--file", help="The prefect.yaml to write or update."),
    register: bool = typer.Option(True, "--register/--no-register", help="Register at PREFECT_API_URL."),
    serve: bool = typer.Option(False, "--serve", help="Then serve every deployment of the file (blocks)."),
    limit: int | None = typer.Option(None, "--limit", min=1, help="With --serve: at most N runs at once."),
) -> None:
    """Write or update a deployment of CONFIG in prefect.yaml and register it; --serve runs the schedules.

    Each run writes a new dataset version under OUT and moves OUT/latest.json only once it is complete.
    """
    from synth.flows import deploy

    project = file.resolve().parent
    if config is not None:
        chosen = name or config.stem
        entry = deploy.deployment_entry(
            chosen,
            _parameters(config, out, chosen, project, list(params or [])),
            schedules=deploy.schedule_entry(cron=cron, interval=interval),
            pool=pool,
        )
        if register and not serve:
            deploy.api_url()  # refuse before prefect.yaml changes when there is no server to register with
        deploy.write_deployment(file, entry)
        console.print(f"wrote deployment [bold]{escape(chosen)}[/] to {escape(str(file))}")
        if register and not serve:
            deployment_id = deploy.register(entry, project_dir=project)
            console.print(f"registered synth-run/{escape(chosen)} ({deployment_id}) at {escape(deploy.api_url())}")
    elif not serve:
        msg = "give a CONFIG to deploy, or --serve to serve the deployments of prefect.yaml"
        raise ConfigError(msg)
    if serve:
        os.chdir(project)
        deploy.serve(file.resolve(), names=[name] if name and config is None else None, limit=limit)


def register(app: typer.Typer) -> None:
    """Add `deploy` to the root app."""
    app.command("deploy")(cli_errors(deploy_command))
