"""`synth bench curate`: curate throughput and peak memory at two sizes, and near-dup docs/s against datasketch
and rensa on the same documents in the same run.

Each size is generated once (planted duplicates, short documents) and curated in a fresh subprocess that
reports its own peak RSS, so the sizes do not share memory. The near-dup comparison runs every library on one
core over the same documents (128 permutations, 5-word shingles, LSH at 0.8): ours is the whole `near_dedup`
operation (read Parquet, normalise, MinHash, band buckets on disk, candidate pairs, exact verification,
clustering); datasketch and rensa are MinHash plus their LSH insert and query, with no verification.
"""

from __future__ import annotations

import json
import os
import platform
import resource
import shutil
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

from synth.pipelines.curation.config import CurateConfig, parse_curate_config
from synth.pipelines.curation.planted import PlantedSpec, planted_batches, write_planted

DEDUP_CONFIG: dict[str, Any] = {
    "operations": [
        {"kind": "exact_dedup", "text": {"columns": ["text"]}},
        {"kind": "near_dedup", "text": {"columns": ["text"]}},
    ]
}


def _child(inputs: str, out: str, config: str) -> None:
    """Curate in this (fresh) process and print seconds, counts and peak RSS as one JSON line."""
    from synth.pipelines.curation.engine import curate

    start = time.perf_counter()
    summary = curate([inputs], out, parse_curate_config(json.loads(config), source="bench"), source="bench")
    seconds = time.perf_counter() - start
    peak_kb = _peak_rss_kb()
    ops = {op["name"]: op["dropped"] for op in summary.report["operations"]}
    print(
        json.dumps({"seconds": seconds, "rows": summary.report["rows"], "dropped": ops, "peak_rss_mb": peak_kb / 1024})
    )


def _peak_rss_kb() -> int:
    """This process's peak RSS: VmHWM of its own address space. (`ru_maxrss` would not do: Linux carries the
    parent's peak across fork and exec into it, so every child would report at least the parent's.)"""
    for line in Path("/proc/self/status").read_text().splitlines():
        if line.startswith("VmHWM:"):
            return int(line.split()[1])
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss


def measure_size(rows: int, work: Path, *, words: int, config: dict[str, Any]) -> dict[str, Any]:
    """Generate `rows` planted rows and curate them in a fresh subprocess; rows/s and peak RSS."""
    inputs, out = work / f"in-{rows}", work / f"out-{rows}"
    start = time.perf_counter()
    write_planted(inputs, PlantedSpec(rows=rows, words=words), shards=max(1, rows // 500_000))
    generated = time.perf_counter() - start
    shutil.rmtree(out, ignore_errors=True)
    code = "import sys; from synth.pipelines.curation.bench import _child; _child(*sys.argv[1:])"
    result = subprocess.run(
        [sys.executable, "-c", code, str(inputs), str(out), json.dumps(config)],
        check=True,
        capture_output=True,
        text=True,
        env={**os.environ, "NUMBA_NUM_THREADS": "1"},
    )
    child = json.loads(result.stdout.strip().splitlines()[-1])
    shutil.rmtree(out, ignore_errors=True)
    return {
        "rows": rows,
        "words_per_doc": words,
        "generate_seconds": round(generated, 2),
        "curate_seconds": round(child["seconds"], 2),
        "rows_per_s": round(rows / child["seconds"]),
        "peak_rss_mb": round(child["peak_rss_mb"], 1),
        "dropped": child["dropped"],
    }


def _shingles(text: str, n: int = 5) -> list[str]:
    words = text.lower().split()
    return [" ".join(words[i : i + n]) for i in range(max(1, len(words) - n + 1))]


def near_dup_rates(docs: int, work: Path, *, words: int = 60, repeats: int = 2) -> dict[str, Any]:
    """Docs/s of our near_dedup, datasketch MinHash + MinHashLSH, and rensa RMinHash + RMinHashLSH (one core)."""
    from synth.pipelines.curation.inputs import open_inputs
    from synth.pipelines.curation.resolve import index_and_resolve

    spec = PlantedSpec(rows=docs, words=words, seed=3)
    dataset = write_planted(work / "near-docs", spec)
    texts = [t for table in planted_batches(spec) for t in table.column("text").to_pylist()]
    config = CurateConfig.model_validate({"operations": [DEDUP_CONFIG["operations"][1]]})
    opened = open_inputs([dataset])
    index_and_resolve(config, opened, work / "warm", {})  # numba compiles once (cached on disk)
    best: dict[str, float] = {}
    found: dict[str, int] = {}
    for _ in range(repeats):
        start = time.perf_counter()
        decisions = index_and_resolve(config, opened, work / "spill", {})
        best["synth"] = min(best.get("synth", 1e9), time.perf_counter() - start)
        found["synth"] = int(decisions.report[0]["dropped"])
        shutil.rmtree(work / "spill", ignore_errors=True)
        for name, run in (("datasketch", _datasketch), ("rensa", _rensa)):
            start = time.perf_counter()
            found[name] = run(texts)
            best[name] = min(best.get(name, 1e9), time.perf_counter() - start)
    rates = {name: round(docs / seconds) for name, seconds in best.items()}
    return {
        "docs": docs,
        "words_per_doc": words,
        "num_perm": 128,
        "shingle_words": 5,
        "docs_per_s": rates,
        "flagged_as_duplicates": found,
        "ratio_vs_datasketch": round(rates["synth"] / rates["datasketch"], 2),
        "ratio_vs_rensa": round(rates["synth"] / rates["rensa"], 2),
    }


def _datasketch(texts: list[str]) -> int:
    from datasketch import MinHash, MinHashLSH

    lsh = MinHashLSH(threshold=0.8, num_perm=128)
    flagged = 0
    for index, text in enumerate(texts):
        signature = MinHash(num_perm=128, seed=1)
        signature.update_batch([s.encode() for s in _shingles(text)])
        flagged += bool(lsh.query(signature))
        lsh.insert(index, signature)
    return flagged


def _rensa(texts: list[str]) -> int:
    from rensa import RMinHash, RMinHashLSH

    lsh = RMinHashLSH(threshold=0.8, num_perm=128, num_bands=16)
    flagged = 0
    for index, text in enumerate(texts):
        signature = RMinHash(num_perm=128, seed=1)
        signature.update(_shingles(text))
        flagged += bool(lsh.query(signature))
        lsh.insert(index, signature)
    return flagged


def bench_curate(*, sizes: tuple[int, ...], work: Path, near_docs: int = 20_000, words: int = 24) -> dict[str, Any]:
    """The whole report (see the module docstring); `work` holds the generated datasets while it runs."""
    work.mkdir(parents=True, exist_ok=True)
    report: dict[str, Any] = {
        "machine": {"cpus": os.cpu_count(), "python": platform.python_version(), "load_before": os.getloadavg()},
        "config": DEDUP_CONFIG,
        "near_dup": near_dup_rates(near_docs, work),
        "sizes": [],
    }
    for rows in sizes:
        report["sizes"].append(measure_size(rows, work, words=words, config=DEDUP_CONFIG))
        shutil.rmtree(work / f"in-{rows}", ignore_errors=True)
    if len(report["sizes"]) >= 2:
        small, large = report["sizes"][0], report["sizes"][-1]
        report["peak_rss_ratio_largest_vs_smallest"] = round(large["peak_rss_mb"] / small["peak_rss_mb"], 3)
        report["rows_ratio_largest_vs_smallest"] = large["rows"] / small["rows"]
    report["machine"]["load_after"] = os.getloadavg()
    return report
