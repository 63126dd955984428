"""A run killed with SIGKILL mid-shard, then rerun, gives the same bytes as an uninterrupted run."""

import os
import signal
import subprocess
import sys
import time

import yaml
from shard_files import parquet_hashes

from synth.core.config import load_config
from synth.pipelines.execution import run_local

CONFIG = {
    "domain": "papyrus",
    "seed": 5,
    "shards": 4,
    "generator": {"variants": ["uniform", "burst"], "samples": 2, "docs_per_batch": 1, "sources": ["epidoc"]},
}


def wait_for_partial_shard(out, process, timeout=120.0):
    """Poll until a shard other than the first is being written, i.e. the run is mid-way."""
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        partial = [p for p in (out / "data").glob(".train-*.tmp-*") if not p.name.startswith(".train-00000")]
        if partial:
            return partial
        assert process.poll() is None, "the run finished before it could be interrupted"
        time.sleep(0.005)
    raise AssertionError("no partial shard appeared")


def test_sigkill_then_rerun_matches_uninterrupted_run(tmp_path):
    config_path = tmp_path / "papyrus.yaml"
    config_path.write_text(yaml.safe_dump(CONFIG), encoding="utf-8")
    reference = tmp_path / "reference"
    run_local(load_config(config_path), reference)

    out = tmp_path / "killed"
    command = [sys.executable, "-m", "synth.cli.app", "run", str(config_path), "--out", str(out), "--no-progress"]
    process = subprocess.Popen(command, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
    wait_for_partial_shard(out, process)
    os.kill(process.pid, signal.SIGKILL)
    process.wait()
    assert process.returncode == -signal.SIGKILL
    records = sorted(p.name for p in (out / ".synth" / "shards").glob("*.json"))
    assert len(records) < 4, "every shard completed before the kill"

    rerun = subprocess.run(command, capture_output=True, text=True, check=False)
    assert rerun.returncode == 0, rerun.stderr
    assert parquet_hashes(out) == parquet_hashes(reference)
    assert not list(out.rglob(".train-*.tmp-*"))
