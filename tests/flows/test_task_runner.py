"""The local Dask cluster synth starts listens on the loopback interface only."""

import os

import pytest


def listening_addresses():
    psutil = pytest.importorskip("psutil")
    connections = psutil.Process(os.getpid()).net_connections(kind="inet")
    return {(conn.laddr.ip, conn.laddr.port) for conn in connections if conn.status == "LISTEN"}


@pytest.mark.parametrize("dashboard_address", [None, "127.0.0.1:0"])
def test_the_local_dask_cluster_serves_nothing_beyond_loopback(dashboard_address):
    pytest.importorskip("prefect_dask")
    from distributed import LocalCluster

    from synth.flows.pipeline import make_task_runner

    runner = make_task_runner("dask", 1, dashboard_address=dashboard_address)
    before = listening_addresses()
    # The scheduler alone (no worker processes) binds every port the cluster's own options ask for.
    with LocalCluster(**{**runner.cluster_kwargs, "n_workers": 0}):
        opened = listening_addresses() - before
    assert opened and {ip for ip, _ in opened} == {"127.0.0.1"}  # Dask's default ":8787" opens 0.0.0.0 too
