"""The Prefect engine: same bytes as the local engine, with thread and process task runners."""

import pytest
from shard_files import SMALL_PAPYRUS_PAYLOAD, parquet_hashes

from synth.core.config import parse_config
from synth.pipelines.execution import run_local

pytestmark = pytest.mark.prefect


@pytest.mark.parametrize("task_runner", ["threads", "processes"])
def test_prefect_engine_matches_local_engine_byte_for_byte(tmp_path, prefect_server, task_runner):
    from synth.flows.pipeline import run_prefect

    config = parse_config(SMALL_PAPYRUS_PAYLOAD)
    local = run_local(config, tmp_path / "local")
    flow = run_prefect(config, tmp_path / "prefect", task_runner=task_runner, workers=2)
    assert flow.manifest["status"] == "complete"
    assert flow.executed == [0, 1, 2]
    assert parquet_hashes(tmp_path / "prefect") == parquet_hashes(tmp_path / "local")
    assert flow.manifest["totals"] == local.manifest["totals"]
    assert (tmp_path / "prefect" / "README.md").read_text() == (tmp_path / "local" / "README.md").read_text()


def test_prefect_engine_resumes_from_the_shard_records(tmp_path, prefect_server):
    from synth.flows.pipeline import run_prefect

    config = parse_config(SMALL_PAPYRUS_PAYLOAD)
    run_local(config, tmp_path / "out")
    (tmp_path / "out" / ".synth" / "shards" / "00002.json").unlink()
    again = run_prefect(config, tmp_path / "out")
    assert again.executed == [2]
    assert again.skipped == [0, 1]


def test_dask_task_runner_on_a_local_cluster_gives_the_same_bytes(tmp_path, prefect_server):
    pytest.importorskip("prefect_dask")
    from synth.flows.pipeline import run_prefect

    config = parse_config(SMALL_PAPYRUS_PAYLOAD)
    run_local(config, tmp_path / "local")
    flow = run_prefect(config, tmp_path / "dask", task_runner="dask", workers=2)
    assert flow.manifest["status"] == "complete"
    assert parquet_hashes(tmp_path / "dask") == parquet_hashes(tmp_path / "local")


@pytest.mark.parametrize(("heartbeat", "started"), [(None, 0), (30, 1)])
def test_flow_run_heartbeat_thread_only_when_the_config_asks(tmp_path, prefect_server, heartbeat, started):
    """Prefect's heartbeat thread is joined at the end of a flow run (0-1 s); a synth run starts it only when
    `execution.heartbeat_seconds` is set. Read from the flow engine's own debug log."""
    import logging

    from synth.flows.pipeline import run_prefect

    messages: list[str] = []
    handler = logging.Handler(logging.DEBUG)
    handler.emit = lambda record: messages.append(record.getMessage())  # type: ignore[method-assign]
    logger = logging.getLogger("prefect.flow_runs")
    level = logger.level
    logger.addHandler(handler)
    logger.setLevel(logging.DEBUG)
    try:
        payload = SMALL_PAPYRUS_PAYLOAD | {"shards": 1, "execution": {"heartbeat_seconds": heartbeat}}
        run_prefect(parse_config(payload), tmp_path / "out")
    finally:
        logger.removeHandler(handler)
        logger.setLevel(level)
    assert messages.count("Started flow run heartbeat context") == started
