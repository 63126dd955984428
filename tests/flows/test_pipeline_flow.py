"""The Prefect engine: same bytes as the local engine, with thread and process task runners."""

import pytest

from synth.core.config import parse_config
from synth.core.sink import sha256_file
from synth.pipelines.execution import run_local

pytestmark = pytest.mark.prefect

PAYLOAD = {
    "domain": "papyrus",
    "seed": 11,
    "shards": 3,
    "generator": {"levels": [0.02, 0.1, 0.3], "variants": ["uniform", "word"], "sources": ["epidoc"]},
}


def hashes(out):
    return {p.name: sha256_file(p) for d in ("data", "rejected") for p in sorted((out / d).glob("*.parquet"))}


@pytest.mark.parametrize("task_runner", ["threads", "processes"])
def test_prefect_engine_matches_local_engine_byte_for_byte(tmp_path, prefect_server, task_runner):
    from synth.flows.pipeline import run_prefect

    config = parse_config(PAYLOAD)
    local = run_local(config, tmp_path / "local")
    flow = run_prefect(config, tmp_path / "prefect", task_runner=task_runner, workers=2)
    assert flow.manifest["status"] == "complete"
    assert flow.executed == [0, 1, 2]
    assert hashes(tmp_path / "prefect") == hashes(tmp_path / "local")
    assert flow.manifest["totals"] == local.manifest["totals"]
    assert (tmp_path / "prefect" / "README.md").read_text() == (tmp_path / "local" / "README.md").read_text()


def test_prefect_engine_resumes_from_the_shard_records(tmp_path, prefect_server):
    from synth.flows.pipeline import run_prefect

    config = parse_config(PAYLOAD)
    run_local(config, tmp_path / "out")
    (tmp_path / "out" / ".synth" / "shards" / "00002.json").unlink()
    again = run_prefect(config, tmp_path / "out")
    assert again.executed == [2]
    assert again.skipped == [0, 1]


def test_dask_task_runner_on_a_local_cluster_gives_the_same_bytes(tmp_path, prefect_server):
    pytest.importorskip("prefect_dask")
    from synth.flows.pipeline import run_prefect

    config = parse_config(PAYLOAD)
    run_local(config, tmp_path / "local")
    flow = run_prefect(config, tmp_path / "dask", task_runner="dask", workers=2)
    assert flow.manifest["status"] == "complete"
    assert hashes(tmp_path / "dask") == hashes(tmp_path / "local")
