"""`synth deploy` against a real Prefect server: a scheduled deployment served by `synth deploy --serve`.

Two triggered runs give two complete, distinct dataset versions and move `latest` to the second.
"""

import json
import os
import signal
import subprocess
import sys

import pytest
import yaml
from typer.testing import CliRunner

from synth.cli.app import app
from synth.core.dataset import open_dataset
from synth.core.sink import sha256_file
from synth.core.versions import VersionedRoot

pytestmark = [pytest.mark.prefect, pytest.mark.slow]  # 40 s to several minutes: a served subprocess, two flow runs

CONFIG = {"domain": "papyrus", "seed": 7, "shards": 2, "generator": {"samples": 1, "sources": ["epidoc"]}}


def data_hashes(folder):
    return {p.name: sha256_file(p) for p in sorted((folder / "data").glob("*.parquet"))}


@pytest.fixture
def served(tmp_path, prefect_server):
    """prefect.yaml with one scheduled deployment, registered, and a `synth deploy --serve` process serving it."""
    from prefect.settings import PREFECT_API_URL

    (tmp_path / "papyrus.yaml").write_text(yaml.safe_dump(CONFIG), encoding="utf-8")
    command = ["deploy", "papyrus.yaml", "--name", "nightly", "--cron", "0 0 1 1 *", "--out", "out"]
    command += ["--param", "versions=seed", "--param", "keep=5", "--file", str(tmp_path / "prefect.yaml")]
    cwd = os.getcwd()
    os.chdir(tmp_path)
    try:
        result = CliRunner().invoke(app, command)
    finally:
        os.chdir(cwd)
    assert result.exit_code == 0, result.output
    env = os.environ | {"PREFECT_API_URL": PREFECT_API_URL.value(), "PREFECT_RUNNER_POLL_FREQUENCY": "1"}
    serve_cmd = [sys.executable, "-m", "synth.cli.app", "deploy", "--serve", "--file", str(tmp_path / "prefect.yaml")]
    process = subprocess.Popen(serve_cmd, env=env, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)
    yield tmp_path
    process.send_signal(signal.SIGINT)
    try:
        process.wait(timeout=20)
    except subprocess.TimeoutExpired:
        process.kill()
        process.wait()


def test_two_triggered_runs_of_a_scheduled_deployment_write_two_versions(served):
    from prefect import get_client
    from prefect.client.schemas.objects import StateType
    from prefect.deployments import run_deployment

    project = yaml.safe_load((served / "prefect.yaml").read_text())
    (entry,) = project["deployments"]
    assert entry["entrypoint"] == "synth.flows.run.synth_run_flow"
    assert entry["schedules"] == [{"cron": "0 0 1 1 *", "timezone": "UTC", "active": True}]
    assert entry["parameters"]["params"] == {"config_path": "papyrus.yaml", "versions": "seed", "keep": 5, "out": "out"}

    with get_client(sync_client=True) as client:
        deployment = client.read_deployment_by_name("synth-run/nightly")
    assert [s.schedule.cron for s in deployment.schedules] == ["0 0 1 1 *"]
    assert "params" in deployment.parameter_openapi_schema["properties"]

    runs = [run_deployment("synth-run/nightly", timeout=180, poll_interval=0.5) for _ in range(2)]
    assert [run.state.type for run in runs] == [StateType.COMPLETED] * 2

    root = VersionedRoot(served / "out")
    versions = root.versions()
    assert [v.status for v in versions] == ["complete", "complete"]
    assert [v.ordinal for v in versions] == [1, 2]
    assert [v.entry["seed"] for v in versions] == [7, 8]
    first, second = (open_dataset(v.path) for v in versions)
    assert first.complete and second.complete
    assert data_hashes(versions[0].path) != data_hashes(versions[1].path)
    latest = json.loads((served / "out" / "latest.json").read_text())
    assert latest["version"] == versions[1].name and latest["path"] == f"versions/{versions[1].name}"
    assert open_dataset(served / "out").root == versions[1].path  # a versioned root opens its latest version
