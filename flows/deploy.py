"""Deployments of the `synth-run` flow: a `prefect.yaml` the user keeps in git, registration, and serving.

`prefect.yaml` is the source of truth: `write_deployment` adds or replaces one entry, `register` sends an entry
to the server at `PREFECT_API_URL` (for a work pool, e.g. a `process` pool and `prefect worker start`), and
`serve` runs every entry's schedule from one long-running process (`prefect.serve`, no work pool). The file
follows the layout `prefect deploy` reads.
"""

from __future__ import annotations

from collections.abc import Mapping
from pathlib import Path
from typing import Any
from uuid import UUID

import yaml
from prefect.deployments.runner import EntrypointType, RunnerDeployment
from prefect.schedules import Cron, Interval, Schedule
from pydantic import ValidationError

from synth.core.config import format_validation_error, parse_yaml
from synth.core.errors import ConfigError, SynthError, read_text_file
from synth.core.sink import write_text_atomic
from synth.flows.run import RunParams, synth_run_flow

ENTRYPOINT = "synth.flows.run.synth_run_flow"
HEADER = (
    "# Deployments of synth's `synth-run` flow, written by `synth deploy` (keep it in git; edit it or rerun\n"
    "# `synth deploy`, which also registers them). Serve them without a work pool: `synth deploy --serve`.\n"
)


class ServerUnavailableError(SynthError):
    """No Prefect server to register with (exit 2)."""

    exit_code = 2


def schedule_entry(*, cron: str | None, interval: float | None, timezone: str = "UTC") -> list[dict[str, Any]]:
    """The `schedules:` list of one deployment (empty for a deployment that runs only when triggered)."""
    if cron is not None and interval is not None:
        msg = "give --cron or --interval, not both"
        raise ConfigError(msg)
    if cron is not None:
        _check_cron(cron)
        return [{"cron": cron, "timezone": timezone, "active": True}]
    if interval is not None:
        return [{"interval": interval, "active": True}]
    return []


def _check_cron(expression: str) -> None:
    try:
        Cron(expression)
    except (ValueError, TypeError, ValidationError) as error:
        first = str(error).splitlines()[0]
        msg = f"--cron {expression!r}: not a cron expression ({first}); e.g. --cron '0 3 * * *'"
        raise ConfigError(msg) from None


def check_parameters(parameters: Mapping[str, Any], *, source: str) -> dict[str, Any]:
    """Validate a deployment's `params` against `RunParams` (one-line `ConfigError`) and return them as JSON."""
    try:
        return RunParams.model_validate(dict(parameters)).model_dump(mode="json", exclude_defaults=True)
    except ValidationError as error:
        raise ConfigError(format_validation_error(error, source=source, prefix="parameters.params")) from None


def read_project(path: Path) -> dict[str, Any]:
    """The contents of a `prefect.yaml` (an empty project when the file does not exist yet)."""
    if not path.exists():
        return {"name": path.resolve().parent.name or "synth", "pull": [], "deployments": []}
    data = parse_yaml(read_text_file(path, hint="a prefect.yaml", error=ConfigError), source=str(path))
    if not isinstance(data, dict) or not isinstance(data.get("deployments", []), list):
        msg = f"{path}: not a prefect.yaml (expected a mapping with a `deployments` list)"
        raise ConfigError(msg)
    return data


def write_deployment(path: Path, entry: dict[str, Any]) -> dict[str, Any]:
    """Add `entry` to `prefect.yaml` at `path`, replacing a deployment of the same name; return the project."""
    project = read_project(path)
    project["pull"] = [{"prefect.deployments.steps.set_working_directory": {"directory": str(path.resolve().parent)}}]
    others = [d for d in project.get("deployments") or [] if d.get("name") != entry["name"]]
    project["deployments"] = [*others, entry]
    project["deployments"].sort(key=lambda d: str(d.get("name")))
    write_text_atomic(path, HEADER + yaml.safe_dump(project, sort_keys=False, allow_unicode=True))
    return project


def deployment_entry(
    name: str,
    params: dict[str, Any],
    *,
    schedules: list[dict[str, Any]],
    pool: str | None,
    description: str | None = None,
) -> dict[str, Any]:
    """One `deployments:` item of `prefect.yaml`."""
    entry: dict[str, Any] = {
        "name": name,
        "entrypoint": ENTRYPOINT,
        "description": description or f"synth run into {params['out']} (a new dataset version per run)",
        "parameters": {"params": params},
        "schedules": schedules,
        "enforce_parameter_schema": True,
    }
    if pool:
        entry["work_pool"] = {"name": pool}
    return entry


def _schedules(entry: Mapping[str, Any]) -> list[Schedule]:
    built = []
    for item in entry.get("schedules") or []:
        active = bool(item.get("active", True))
        if "cron" in item:
            built.append(Cron(item["cron"], timezone=item.get("timezone", "UTC"), active=active))
        elif "interval" in item:
            built.append(Interval(float(item["interval"]), active=active))
    return built


def to_runner_deployment(entry: Mapping[str, Any]) -> RunnerDeployment:
    """A `RunnerDeployment` of `synth-run` for one `prefect.yaml` entry (module-path entrypoint)."""
    params = check_parameters(entry.get("parameters", {}).get("params", {}), source=f"deployment {entry['name']}")
    return synth_run_flow.to_deployment(
        name=entry["name"],
        description=entry.get("description"),
        parameters={"params": params},
        schedules=_schedules(entry),
        entrypoint_type=EntrypointType.MODULE_PATH,
        enforce_parameter_schema=True,
    )


def api_url() -> str:
    """The Prefect server deployments go to; a one-line error when `PREFECT_API_URL` is not set."""
    from prefect.settings import get_current_settings

    url = get_current_settings().api.url
    if not url:
        msg = (
            "PREFECT_API_URL is not set: start a server (`prefect server start`) and export "
            "PREFECT_API_URL=http://127.0.0.1:4200/api, or pass --no-register to only write prefect.yaml"
        )
        raise ServerUnavailableError(msg)
    return url


def register(entry: Mapping[str, Any], *, project_dir: Path) -> UUID:
    """Create or update the deployment on the server at `PREFECT_API_URL`; return its id."""
    api_url()
    deployment = to_runner_deployment(entry)
    pool = (entry.get("work_pool") or {}).get("name")
    if pool:
        deployment.work_pool_name = pool
        deployment.pull_steps = [
            {"prefect.deployments.steps.set_working_directory": {"directory": str(project_dir.resolve())}}
        ]
    try:
        return deployment.apply(work_pool_name=pool)
    except Exception as error:  # the client raises httpx and Prefect errors; say which server refused
        first = (str(error).splitlines() or [type(error).__name__])[0]
        msg = f"could not register deployment {entry['name']!r} at {api_url()}: {first}"
        raise ServerUnavailableError(msg) from None


def serve(path: Path, *, names: list[str] | None = None, limit: int | None = None) -> None:
    """Serve the deployments of `prefect.yaml` (all, or those named) from this process until interrupted."""
    from prefect import serve as prefect_serve

    entries = [d for d in read_project(path).get("deployments") or [] if not names or d.get("name") in names]
    if not entries:
        msg = f"{path}: no deployments to serve{' named ' + ', '.join(names) if names else ''}; run `synth deploy`"
        raise ConfigError(msg)
    api_url()
    prefect_serve(*(to_runner_deployment(entry) for entry in entries), limit=limit, print_starting_message=True)
