"""--task-runner ray: a local Ray cluster (prefect-ray) writes the local engine's bytes."""

import pytest
from shard_files import SMALL_PAPYRUS_PAYLOAD, parquet_hashes

from synth.core.config import parse_config
from synth.pipelines.execution import run_local


def test_the_ray_runner_starts_a_local_cluster_of_the_asked_size_on_loopback():
    pytest.importorskip("prefect_ray")
    from synth.flows.pipeline import make_task_runner

    runner = make_task_runner("ray", 2)
    assert runner.address is None
    assert runner.init_kwargs | {"namespace": None} == {
        "num_cpus": 2,
        "include_dashboard": False,
        "_node_ip_address": "127.0.0.1",
        "log_to_driver": False,
        "namespace": None,
    }
    assert make_task_runner("ray", 2, address="ray://head:10001").address == "ray://head:10001"


@pytest.mark.slow
@pytest.mark.prefect
def test_ray_task_runner_on_a_local_cluster_gives_the_same_bytes(tmp_path, prefect_server):
    pytest.importorskip("prefect_ray")
    from synth.flows.pipeline import run_prefect

    config = parse_config(SMALL_PAPYRUS_PAYLOAD)
    run_local(config, tmp_path / "local")
    flow = run_prefect(config, tmp_path / "ray", task_runner="ray", workers=2)
    assert flow.manifest["status"] == "complete" and flow.executed == [0, 1, 2]
    assert parquet_hashes(tmp_path / "ray") == parquet_hashes(tmp_path / "local")
    assert (tmp_path / "ray" / "README.md").read_text() == (tmp_path / "local" / "README.md").read_text()
