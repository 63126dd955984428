"""--task-runner ray: a local Ray cluster (prefect-ray) writes the local engine's bytes."""

import pytest

from synth.core.config import parse_config
from synth.core.sink import sha256_file
from synth.pipelines.execution import run_local

PAYLOAD = {
    "domain": "papyrus",
    "seed": 11,
    "shards": 3,
    "generator": {"levels": [0.02, 0.1, 0.3], "variants": ["uniform", "word"], "sources": ["epidoc"]},
}


def hashes(out):
    return {p.name: sha256_file(p) for d in ("data", "rejected") for p in sorted((out / d).glob("*.parquet"))}


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

    config = parse_config(PAYLOAD)
    run_local(config, tmp_path / "local")
    flow = run_prefect(config, tmp_path / "ray", task_runner="ray", workers=2)
    assert flow.manifest["status"] == "complete" and flow.executed == [0, 1, 2]
    assert hashes(tmp_path / "ray") == hashes(tmp_path / "local")
    assert (tmp_path / "ray" / "README.md").read_text() == (tmp_path / "local" / "README.md").read_text()
