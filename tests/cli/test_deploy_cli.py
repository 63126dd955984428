"""`synth deploy` without a server: prefect.yaml written and updated, bad input refused in one line."""

import pytest
import yaml
from typer.testing import CliRunner

from synth.cli.app import app

CONFIG = {"domain": "papyrus", "seed": 7, "shards": 2, "generator": {"samples": 1, "sources": ["epidoc"]}}


@pytest.fixture
def project(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    monkeypatch.delenv("PREFECT_API_URL", raising=False)
    (tmp_path / "papyrus.yaml").write_text(yaml.safe_dump(CONFIG), encoding="utf-8")
    from prefect.settings import PREFECT_API_URL, temporary_settings

    with temporary_settings(restore_defaults={PREFECT_API_URL}):  # no server, even after the session's harness
        yield tmp_path


def deploy(*args):
    return CliRunner().invoke(app, ["deploy", *args])


def test_deploy_writes_then_updates_one_entry_per_name(project):
    first = deploy("papyrus.yaml", "--name", "nightly", "--cron", "0 3 * * *", "--no-register")
    assert first.exit_code == 0, first.output
    again = deploy("papyrus.yaml", "-n", "nightly", "--interval", "3600", "--param", "versions=seed", "--no-register")
    assert again.exit_code == 0, again.output
    deploy("papyrus.yaml", "--name", "hourly", "--interval", "60", "--pool", "local-proc", "--no-register")
    data = yaml.safe_load((project / "prefect.yaml").read_text())
    by_name = {d["name"]: d for d in data["deployments"]}
    assert sorted(by_name) == ["hourly", "nightly"]
    assert by_name["nightly"]["schedules"] == [{"interval": 3600.0, "active": True}]
    assert by_name["nightly"]["parameters"]["params"] == {
        "config_path": "papyrus.yaml",
        "versions": "seed",
        "out": "out/nightly",
    }
    assert by_name["hourly"]["work_pool"] == {"name": "local-proc"}
    step = data["pull"][0]["prefect.deployments.steps.set_working_directory"]
    assert step["directory"] == str(project.resolve())


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (["--cron", "every night"], "--cron 'every night': not a cron expression"),
        (["--cron", "0 3 * * *", "--interval", "60"], "give --cron or --interval, not both"),
        (["--param", "keep=0"], "field `parameters.params.keep`"),
        (["--param", "nonsense=1"], "unknown field"),
        (["--param", "generator.samples=2"], "a flow parameter has no dots"),
        (["--param", "overrides=[generator.no_such=1]"], "generator.no_such"),
        ([], "PREFECT_API_URL is not set"),
    ],
)
def test_deploy_refuses_bad_input_in_one_line(project, args, message):
    result = deploy("papyrus.yaml", "--name", "nightly", *args)
    assert result.exit_code == 2, result.output
    assert message in result.output and len(result.output.strip().splitlines()) == 1
    assert not (project / "prefect.yaml").exists()  # refused before anything is written


def test_serve_without_deployments_is_one_line(project):
    result = deploy("--serve")
    assert result.exit_code == 2 and "no deployments to serve" in result.output
