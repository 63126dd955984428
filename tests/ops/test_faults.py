"""Fault injection: SIGKILL at random points, Dask and Ray workers killed mid-shard, a full disk, racing runs,
and a Prefect server that goes away mid-run. Every scenario ends with the bytes of an uninterrupted run.

Slow (minutes); run it with

    SYNTH_FAULTS_JSON=docs/bench/faults.json .venv/bin/pytest tests/ops -m slow -p no:cacheprovider

and the figures (kills, identical resumes, corruptions found, outcomes) are written to that JSON file.
"""

from __future__ import annotations

import json
import os
import random
import shutil
import signal
import socket
import subprocess
import sys
import threading
import time
from pathlib import Path

import pyarrow.parquet as pq
import pytest
import yaml

from synth.core.config import parse_config
from synth.core.sink import sha256_file
from synth.pipelines.execution import run_local

pytestmark = pytest.mark.slow

CONFIG = {
    "domain": "papyrus",
    "seed": 5,
    "shards": 4,
    "generator": {"variants": ["uniform", "burst"], "samples": 2, "docs_per_batch": 1, "sources": ["epidoc"]},
}
KILLS = 20
FIGURES: dict[str, dict] = {}
SYNTH = [sys.executable, "-m", "synth.cli.app"]


def digest(out: Path) -> dict[str, str]:
    """sha256 of every data and rejected shard and the card (the manifest holds step timings, so it differs)."""
    files = [p for d in ("data", "rejected") for p in sorted((out / d).glob("*.parquet"))]
    files += [out / "README.md"]
    return {p.relative_to(out).as_posix(): sha256_file(p) for p in files if p.is_file()}


def temp_files(out: Path) -> list[str]:
    return sorted(p.name for p in out.rglob("*") if ".tmp-" in p.name)


def corruptions(out: Path) -> int:
    """Visible Parquet files that do not read (a half-written shard under its final name)."""
    bad = 0
    for path in out.rglob("*.parquet"):
        try:
            pq.read_metadata(path)
        except Exception:  # any unreadable file counts
            bad += 1
    return bad


@pytest.fixture(scope="module", autouse=True)
def write_figures():
    yield
    target = os.environ.get("SYNTH_FAULTS_JSON")
    if target and FIGURES:
        previous = json.loads(Path(target).read_text()) if Path(target).is_file() else {}
        report = {"benchmark": "faults", "loadavg": [round(v, 2) for v in os.getloadavg()]}
        report["scenarios"] = previous.get("scenarios", {}) | FIGURES
        Path(target).write_text(json.dumps(report, indent=2) + "\n", encoding="utf-8")


@pytest.fixture(scope="module")
def reference(tmp_path_factory):
    folder = tmp_path_factory.mktemp("faults")
    config_path = folder / "papyrus.yaml"
    config_path.write_text(yaml.safe_dump(CONFIG), encoding="utf-8")
    run_local(parse_config(CONFIG), folder / "reference")
    return config_path, digest(folder / "reference")


def synth_run(config_path: Path, out: Path, *extra: str) -> list[str]:
    return [*SYNTH, "run", str(config_path), "--out", str(out), "--no-progress", *extra]


@pytest.mark.timeout(3600)  # 20 kills and 20 resumes of a CLI run: ~2 minutes when quiet, far more when loaded
def test_sigkill_at_random_points_then_resume_is_byte_identical(reference, tmp_path):
    config_path, expected = reference
    started = time.monotonic()
    subprocess.run(synth_run(config_path, tmp_path / "timing"), check=True, capture_output=True)
    full = time.monotonic() - started
    rng = random.Random(20261204)
    outcomes = []
    trial = 0
    while sum(o["killed"] for o in outcomes) < KILLS and trial < 2 * KILLS:  # until 20 kills land mid-run
        out = tmp_path / f"kill-{trial}"
        trial += 1
        delay = rng.uniform(0.3, 0.8 * full)
        process = subprocess.Popen(synth_run(config_path, out), stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        try:
            process.wait(timeout=delay)
        except subprocess.TimeoutExpired:
            process.send_signal(signal.SIGKILL)
            process.wait()
        killed = process.returncode == -signal.SIGKILL
        done_before = len(list((out / ".synth" / "shards").glob("*.json"))) if out.exists() else 0
        visible_bad = corruptions(out) if out.exists() else 0
        rerun = subprocess.run(synth_run(config_path, out), capture_output=True, text=True, check=False)
        outcomes.append(
            {
                "delay_s": round(delay, 3),
                "killed": killed,
                "shards_complete_at_kill": done_before,
                "corrupt_visible_at_kill": visible_bad,
                "resume_exit": rerun.returncode,
                "identical": rerun.returncode == 0 and digest(out) == expected,
                "temp_files_left": len(temp_files(out)),
            }
        )
    killed = [o for o in outcomes if o["killed"]]
    FIGURES["sigkill_resume"] = {
        "trials": len(outcomes),
        "kills_landed": len(killed),
        "kills_mid_run": sum(0 < o["shards_complete_at_kill"] < 4 for o in killed),
        "resumes_identical": sum(o["identical"] for o in outcomes),
        "corruptions_found": sum(o["corrupt_visible_at_kill"] for o in outcomes),
        "uninterrupted_run_s": round(full, 2),
        "trials_detail": outcomes,
    }
    assert len(killed) >= KILLS, "the kill points should land while the run is alive"
    assert all(o["identical"] and o["temp_files_left"] == 0 for o in outcomes)
    assert sum(o["corrupt_visible_at_kill"] for o in outcomes) == 0


def _kill_the_writer_of_a_partial_shard(out: Path, candidates, stop: threading.Event) -> dict:
    """Wait for a shard being written (a temp Parquet file), then SIGKILL the process that has it open."""
    import psutil

    while not stop.is_set():
        partial = list((out / "data").glob(".train-*.tmp-*")) if (out / "data").is_dir() else []
        if partial:
            for process in candidates():
                try:
                    names = {Path(f.path).name for f in process.open_files()}
                except (psutil.NoSuchProcess, psutil.AccessDenied):
                    continue
                hit = names & {p.name for p in partial}
                if hit:
                    process.kill()
                    records = len(list((out / ".synth" / "shards").glob("*.json")))
                    return {"killed_pid": process.pid, "shard_file": sorted(hit)[0], "records_at_kill": records}
        time.sleep(0.005)
    return {}


def _children():
    import psutil

    return psutil.Process().children(recursive=True)


def _run_with_a_worker_kill(config, out: Path, task_runner: str, **options) -> tuple[dict, object]:
    from synth.flows.pipeline import run_prefect

    stop = threading.Event()
    kill: dict = {}
    watcher = threading.Thread(
        target=lambda: kill.update(_kill_the_writer_of_a_partial_shard(out, _children, stop)), daemon=True
    )
    watcher.start()
    try:
        summary = run_prefect(config, out, task_runner=task_runner, **options)
    finally:
        stop.set()
        watcher.join()
    return kill, summary


@pytest.mark.prefect
def test_a_dask_worker_killed_mid_shard(reference, tmp_path, prefect_server):
    pytest.importorskip("prefect_dask")
    from distributed import LocalCluster

    _, expected = reference
    with LocalCluster(n_workers=2, threads_per_worker=1, processes=True, host="127.0.0.1", dashboard_address=None) as c:
        config = parse_config(CONFIG | {"execution": {"address": c.scheduler_address}})
        kill, summary = _run_with_a_worker_kill(config, tmp_path / "dask", "dask")
    FIGURES["dask_worker_killed"] = kill | {
        "status": summary.manifest["status"],
        "identical": digest(tmp_path / "dask") == expected,
        "corruptions_found": corruptions(tmp_path / "dask"),
    }
    assert kill, "no worker was caught writing a shard"
    assert summary.manifest["status"] == "complete" and digest(tmp_path / "dask") == expected


@pytest.mark.prefect
def test_a_ray_worker_killed_mid_shard(reference, tmp_path, prefect_server):
    pytest.importorskip("prefect_ray")
    _, expected = reference
    kill, summary = _run_with_a_worker_kill(parse_config(CONFIG), tmp_path / "ray", "ray", workers=2)
    FIGURES["ray_worker_killed"] = kill | {
        "status": summary.manifest["status"],
        "identical": digest(tmp_path / "ray") == expected,
        "corruptions_found": corruptions(tmp_path / "ray"),
    }
    assert kill, "no worker was caught writing a shard"
    assert summary.manifest["status"] == "complete" and digest(tmp_path / "ray") == expected


FULL_DISK_SCRIPT = r"""
set -u
mount -t tmpfs -o size=${SIZE}k tmpfs "$MNT"
head -c ${FILL}k /dev/zero > "$MNT/filler"
"$@" --out "$MNT/out" 2> "$MNT/../stderr-1"; echo "exit1=$?"
ls -a "$MNT/out/data" > "$MNT/../listing-1" 2>/dev/null
cp -r "$MNT/out" "$MNT/../at-failure" 2>/dev/null
rm "$MNT/filler"
"$@" --out "$MNT/out" 2> "$MNT/../stderr-2"; echo "exit2=$?"
cp -r "$MNT/out" "$MNT/../resumed"
"""


def test_a_full_disk_is_one_error_line_and_resumes_once_space_is_freed(reference, tmp_path):
    """A private tmpfs (own mount namespace via `unshare -rm`; nothing is mounted on the host) that fills up."""
    config_path, expected = reference
    if shutil.which("unshare") is None or subprocess.run(["unshare", "-rm", "true"], check=False).returncode:
        pytest.skip("no unprivileged mount namespace (unshare -rm) on this machine")
    total_kib = sum(p.stat().st_size for p in (config_path.parent / "reference").rglob("*") if p.is_file()) // 1024
    mount = tmp_path / "mnt"
    mount.mkdir()
    size = 4096
    env = os.environ | {"MNT": str(mount), "SIZE": str(size), "FILL": str(size - max(total_kib // 2, 8))}
    script = ["unshare", "-rm", "sh", "-c", FULL_DISK_SCRIPT, "sh", *SYNTH, "run", str(config_path), "--no-progress"]
    result = subprocess.run(script, env=env, capture_output=True, text=True, check=False, timeout=600)
    exits = dict(line.split("=") for line in result.stdout.split() if "=" in line)
    stderr = (tmp_path / "stderr-1").read_text().strip().splitlines()
    failed = tmp_path / "at-failure"
    FIGURES["full_disk"] = {
        "method": f"tmpfs of {size} KiB in a private mount namespace (unshare -rm), filler leaving ~half the dataset",
        "first_exit": int(exits["exit1"]),
        "stderr_lines": len(stderr),
        "error": stderr[-1] if stderr else None,
        "visible_shards_at_failure": sorted(p.name for p in (failed / "data").glob("*.parquet")),
        "corruptions_found": corruptions(failed),
        "temp_files_at_failure": len(temp_files(failed)),
        "resume_exit": int(exits["exit2"]),
        "identical_after_resume": digest(tmp_path / "resumed") == expected,
    }
    assert int(exits["exit1"]) != 0 and len(stderr) == 1 and "no space left" in stderr[0].lower()
    assert corruptions(failed) == 0
    assert int(exits["exit2"]) == 0 and digest(tmp_path / "resumed") == expected


def test_two_runs_racing_for_one_out_one_is_refused_and_a_stale_lock_is_not(reference, tmp_path):
    config_path, expected = reference
    out = tmp_path / "race"
    first = subprocess.Popen(synth_run(config_path, out), stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)
    lock = out / ".synth" / "lock"
    while not (lock.is_file() and lock.read_text().strip() == str(first.pid)):
        assert first.poll() is None, "the first run ended before it took the lock"
        time.sleep(0.005)
    second = subprocess.run(synth_run(config_path, out), capture_output=True, text=True, check=False)
    first.wait()
    refused = second.stderr.strip().splitlines()

    stale = tmp_path / "stale"
    victim = subprocess.Popen(synth_run(config_path, stale), stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    stale_lock = stale / ".synth" / "lock"
    while not (stale_lock.is_file() and stale_lock.read_text().strip() == str(victim.pid)):
        time.sleep(0.005)
    victim.kill()
    victim.wait()
    after = subprocess.run(synth_run(config_path, stale), capture_output=True, text=True, check=False)
    FIGURES["racing_runs"] = {
        "first_exit": first.returncode,
        "second_exit": second.returncode,
        "second_error": refused[-1] if refused else None,
        "identical": digest(out) == expected,
        "stale_lock_pid_left": victim.pid,
        "run_after_stale_lock_exit": after.returncode,
        "identical_after_stale_lock": digest(stale) == expected,
    }
    assert first.returncode == 0 and digest(out) == expected
    assert second.returncode == 3 and len(refused) == 1 and f"pid {first.pid}" in refused[0]
    assert after.returncode == 0 and digest(stale) == expected


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def wait_healthy(url: str, process: subprocess.Popen, timeout: float = 240.0) -> None:
    import httpx

    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        assert process.poll() is None, process.stderr.read() if process.stderr else "server exited"
        try:
            if httpx.get(f"{url}/health", timeout=2).status_code == 200:
                return
        except httpx.HTTPError:
            pass
        time.sleep(0.2)
    raise AssertionError("prefect server did not become healthy")


def test_a_prefect_server_that_goes_away_mid_run_loses_nothing_written(reference, tmp_path):
    config_path, expected = reference
    port = free_port()
    url = f"http://127.0.0.1:{port}/api"
    env = os.environ | {"PREFECT_HOME": str(tmp_path / "prefect-home"), "PREFECT_API_URL": url}
    server_cmd = [sys.executable, "-m", "prefect", "server", "start", "--host", "127.0.0.1", "--port", str(port)]
    server = subprocess.Popen(
        [*server_cmd, "--no-ui"], env=env, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True
    )
    try:
        wait_healthy(url, server)
        out = tmp_path / "prefect"
        run = subprocess.Popen(
            synth_run(config_path, out, "--engine", "prefect", "--workers", "1"),
            env=env,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
        )
        records = out / ".synth" / "shards"
        while not (records.is_dir() and any(records.glob("*.json"))):
            assert run.poll() is None, run.stderr.read()
            time.sleep(0.01)
        server.kill()
        server.wait()
        at_kill = len(list(records.glob("*.json")))
        try:
            _, stderr = run.communicate(timeout=600)
        except subprocess.TimeoutExpired:
            run.kill()
            _, stderr = run.communicate()
        complete_after = len(list(records.glob("*.json")))
        kept = digest(out)
        resumed = subprocess.run(synth_run(config_path, out), capture_output=True, text=True, check=False)
    finally:
        if server.poll() is None:
            server.kill()
            server.wait()
    lines = [line for line in stderr.strip().splitlines() if line.strip()]
    FIGURES["prefect_server_gone"] = {
        "shards_complete_when_server_killed": at_kill,
        "run_exit": run.returncode,
        "run_last_stderr_line": lines[-1][:300] if lines else None,
        "shards_complete_after_run": complete_after,
        "written_shards_unchanged": all(kept[k] == expected[k] for k in kept if k.startswith(("data/", "rejected/"))),
        "resume_local_exit": resumed.returncode,
        "identical_after_resume": digest(out) == expected,
        "corruptions_found": corruptions(out),
    }
    assert all(kept[k] == expected[k] for k in kept if k.startswith(("data/", "rejected/")))
    assert resumed.returncode == 0 and digest(out) == expected
