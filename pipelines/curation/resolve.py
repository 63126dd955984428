"""Pass 1 and resolution: stream the inputs once into on-disk indexes, then decide each row's fate op by op.

`Decisions` holds, per input row (in input order), the index of the first operation that drops it (255: kept)
and, per operation, the dropped rows with what they point at (the row they duplicate, the evaluation item they
overlap, the balance quota). Memory holds one batch while streaming, one index partition or pair group (within
`memory_budget_mb`) while resolving, and a byte per row.
"""

from __future__ import annotations

import json
import os
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np
import polars as pl

from synth.core.records import canonical_json
from synth.core.sink import temp_path, write_json_atomic
from synth.pipelines.curation.config import Balance, CurateConfig, Decontaminate, ExactDedup, NearDedup, step_names
from synth.pipelines.curation.inputs import CurateInputs
from synth.pipelines.curation.operations import ROW_LOCAL, drop_and_detail, normalized_text
from synth.validators.curation.buckets import (
    BucketSpill,
    bucket_pairs,
    greedy_keep,
    partitions_for,
    second_key,
    unique_pairs,
)
from synth.validators.curation.decontam import EvalIndex
from synth.validators.curation.hashing import (
    band_hashes,
    exact_keys,
    jaccard_pairs,
    minhash_signatures,
    permutations,
    shingle_sets,
    text_buffers,
)
from synth.validators.curation.signatures import SignatureFile, verify_pairs

KEPT = 255


@dataclass
class Decisions:
    """What the curate run decided for every input row (see the module docstring)."""

    drop_op: np.ndarray
    refs: dict[int, dict[str, np.ndarray]] = field(default_factory=dict)
    report: list[dict[str, Any]] = field(default_factory=list)
    seconds: dict[str, float] = field(default_factory=dict)

    def save(self, path: Path) -> None:
        """Write the decisions (npz + json beside it), each to a temp name then renamed."""
        arrays = {"drop_op": self.drop_op}
        for op, parts in self.refs.items():
            arrays.update({f"{op}.{key}": value for key, value in parts.items()})
        tmp = temp_path(path)
        with tmp.open("wb") as handle:
            np.savez(handle, **arrays)
            handle.flush()
            os.fsync(handle.fileno())
        write_json_atomic(path.with_suffix(".json"), {"report": self.report, "seconds": self.seconds})
        os.replace(tmp, path)

    @classmethod
    def load(cls, path: Path) -> Decisions | None:
        """The saved decisions, or None when there are none (or they are damaged: recomputed)."""
        try:
            meta = json.loads(path.with_suffix(".json").read_text(encoding="utf-8"))
            with np.load(path) as saved:
                refs: dict[int, dict[str, np.ndarray]] = {}
                for name in saved.files:
                    if name != "drop_op":
                        op, key = name.split(".")
                        refs.setdefault(int(op), {})[key] = saved[name]
                return cls(drop_op=saved["drop_op"], refs=refs, report=meta["report"], seconds=meta["seconds"])
        except (OSError, ValueError, KeyError):
            return None


def state_name(config: CurateConfig, inputs: CurateInputs) -> str:
    """The decisions file name for this config and these inputs."""
    import hashlib

    key = canonical_json({"config": config.hashed(), "inputs": [d.manifest_sha256 for d in inputs.datasets]})
    return f"decisions-{hashlib.sha256(key.encode()).hexdigest()[:16]}.npz"


class _Indexer:
    """Pass 1: per batch, row-local drops, decontamination matches, and the dedup/balance indexes on disk."""

    def __init__(self, config: CurateConfig, inputs: CurateInputs, work: Path, evals: dict[int, EvalIndex]) -> None:
        self.config, self.inputs, self.work, self.evals = config, inputs, work, evals
        self.schema = inputs.polars_schema
        budget = config.memory_budget_mb << 20
        self.fails: dict[int, list[np.ndarray]] = {}
        self.matches: dict[int, list[tuple[np.ndarray, np.ndarray]]] = {}
        self.exact: dict[int, BucketSpill] = {}
        self.near: dict[int, tuple[SignatureFile | None, list[BucketSpill], tuple[np.ndarray, np.ndarray]]] = {}
        self.codes: dict[int, list[np.ndarray]] = {}
        self.values: dict[int, dict[str, int]] = {}
        parts = partitions_for(inputs.rows, budget)
        for index, op in enumerate(config.operations):
            if isinstance(op, ROW_LOCAL):
                self.fails[index] = []
            elif isinstance(op, Decontaminate):
                self.matches[index] = []
            elif isinstance(op, ExactDedup):
                self.exact[index] = BucketSpill(work, f"exact{index}", parts)
            elif isinstance(op, NearDedup):
                spills = [
                    BucketSpill(work, f"near{index}-band{band:03d}", parts, two_keys=False) for band in range(op.bands)
                ]
                sigs = SignatureFile(work / f"near{index}.sig", op.num_perm) if op.verify == "minhash" else None
                self.near[index] = (sigs, spills, permutations(op.num_perm, op.seed))
            elif isinstance(op, Balance):
                self.codes[index], self.values[index] = [], {}
        self.local_exprs = {i: drop_and_detail(config.operations[i], self.schema)[0] for i in self.fails}

    def columns(self) -> list[str]:
        needed: dict[str, None] = {}
        for index, op in enumerate(self.config.operations):
            if index in self.fails and op.kind == "verdict":
                needed.update(dict.fromkeys(c for c in self.schema if c.startswith("verdict_")))
            needed.update(dict.fromkeys(op.reads()))
        return list(needed) or ["id"]

    def add(self, frame: pl.DataFrame, base: int) -> None:
        rows = np.arange(base, base + frame.height, dtype=np.int64)
        texts: dict[str, tuple[np.ndarray, np.ndarray]] = {}

        def text(spec: Any) -> tuple[np.ndarray, np.ndarray]:
            key = canonical_json(spec.model_dump(mode="json"))
            if key not in texts:
                texts[key] = text_buffers(normalized_text(spec, frame, self.schema).to_arrow())
            return texts[key]

        if self.local_exprs:
            drops = frame.select(**{f"op{i}": expr for i, expr in self.local_exprs.items()})
            for i in self.local_exprs:
                self.fails[i].append(drops[f"op{i}"].fill_null(True).to_numpy().astype(bool))
        for index, op in enumerate(self.config.operations):
            if isinstance(op, Decontaminate):
                found = self.evals[index].match(*text(op.text))
                hit = found >= 0
                self.matches[index].append((rows[hit], found[hit]))
            elif isinstance(op, ExactDedup):
                data, offsets = text(op.text)
                keys = exact_keys(data, offsets)
                self.exact[index].add(keys[:, 0], keys[:, 1], rows)
            elif isinstance(op, NearDedup):
                self._add_near(index, op, text(op.text), rows)
            elif isinstance(op, Balance):
                self._add_balance(index, op, frame)

    def _add_near(self, index: int, op: NearDedup, text: tuple[np.ndarray, np.ndarray], rows: np.ndarray) -> None:
        sigfile, spills, (a, b) = self.near[index]
        sig, shingles = minhash_signatures(*text, ngram=op.ngram, unit=op.unit, a=a, b=b)
        if sigfile is not None:
            sigfile.add(sig)
        usable = shingles > 0
        bands = band_hashes(sig[usable], op.bands, op.rows_per_band)
        for band, spill in enumerate(spills):
            spill.add(bands[:, band], None, rows[usable])

    def _add_balance(self, index: int, op: Balance, frame: pl.DataFrame) -> None:
        values = frame[op.column].cast(pl.String).fill_null("null")
        known = self.values[index]
        for value in values.unique(maintain_order=True).to_list():
            known.setdefault(value, len(known))
        self.codes[index].append(values.replace_strict(known, return_dtype=pl.Int64).to_numpy())


def index_and_resolve(config: CurateConfig, inputs: CurateInputs, work: Path, evals: dict[int, EvalIndex]) -> Decisions:
    """Stream the inputs once into indexes under `work`, then resolve every operation in order."""
    start = time.perf_counter()
    indexer = _Indexer(config, inputs, work, evals)
    base = 0
    for batch in inputs.batches(indexer.columns(), config.batch_rows):
        indexer.add(pl.from_arrow(batch), base)  # type: ignore[arg-type]
        base += batch.num_rows
    seconds = {"index": time.perf_counter() - start}
    decisions = Decisions(drop_op=np.full(base, KEPT, dtype=np.uint8), seconds=seconds)
    names = step_names(config)
    for index, op in enumerate(config.operations):
        start = time.perf_counter()
        alive = decisions.drop_op == KEPT
        entry: dict[str, Any] = {
            "name": names[index],
            "kind": op.kind,
            "reason": op.reason,
            "reads": op.reads(),
            "rows_in": int(alive.sum()),
        }
        if index in indexer.fails:
            fails = np.concatenate(indexer.fails[index]) if indexer.fails[index] else np.zeros(0, dtype=bool)
            dropped = np.flatnonzero(fails & alive)
            refs: dict[str, np.ndarray] = {"rows": dropped}
        elif index in indexer.matches:
            refs = _matches(indexer.matches[index], alive)
            entry["eval_items"] = evals[index].items
            entry["eval_items_indexed"] = evals[index].indexed
        elif index in indexer.exact:
            refs = _exact(indexer.exact[index], alive)
        elif index in indexer.near:
            refs = _near(op, indexer, index, alive, entry)  # type: ignore[arg-type]
        else:
            refs = _balance(op, np.concatenate(indexer.codes[index]), indexer.values[index], alive, entry)  # type: ignore[arg-type]
        decisions.drop_op[refs["rows"]] = index
        decisions.refs[index] = refs
        entry["dropped"] = len(refs["rows"])
        if op.kind in ("exact_dedup", "near_dedup"):
            entry["clusters"] = _cluster_histogram(refs["ref"])
        decisions.report.append(entry)
        decisions.seconds[names[index]] = time.perf_counter() - start
    return decisions


def _matches(parts: list[tuple[np.ndarray, np.ndarray]], alive: np.ndarray) -> dict[str, np.ndarray]:
    rows = np.concatenate([p[0] for p in parts]) if parts else np.zeros(0, dtype=np.int64)
    items = np.concatenate([p[1] for p in parts]) if parts else np.zeros(0, dtype=np.int64)
    keep = alive[rows]
    return {"rows": rows[keep], "ref": items[keep]}


def _exact(spill: BucketSpill, alive: np.ndarray) -> dict[str, np.ndarray]:
    rows_out, refs_out = [], []
    for records in spill.partitions(alive):
        if not len(records):
            continue
        same = (records["k1"][1:] == records["k1"][:-1]) & (records["k2"][1:] == records["k2"][:-1])
        first = np.concatenate([[True], ~same])
        group = np.cumsum(first) - 1
        reps = records["row"][first][group]
        dup = ~first
        rows_out.append(records["row"][dup])
        refs_out.append(reps[dup])
    return _sorted_refs(rows_out, refs_out)


def _near(
    op: NearDedup, indexer: _Indexer, index: int, alive: np.ndarray, entry: dict[str, Any]
) -> dict[str, np.ndarray]:
    sigfile, spills, _ = indexer.near[index]
    budget = indexer.config.memory_budget_mb << 20
    found = []
    for spill in spills:
        for records in spill.partitions(alive):
            if len(records) > 1:
                found.append(bucket_pairs(records["k1"], second_key(records), records["row"], op.all_pairs_up_to))
        found = [unique_pairs(found)]
    pairs = unique_pairs(found)
    if not len(pairs):
        similarity = np.zeros(0, dtype=np.float32)
    elif sigfile is not None:
        similarity = verify_pairs(pairs, sigfile, budget_bytes=budget)
    else:
        similarity = _exact_similarity(op, indexer, pairs, budget)
    verified = similarity >= np.float32(op.threshold)
    entry["candidate_pairs"], entry["verified_pairs"] = len(pairs), int(verified.sum())
    pairs, similarity = pairs[verified], similarity[verified]
    dropped = np.zeros(len(alive), dtype=np.bool_)
    taken = np.zeros(len(pairs), dtype=np.bool_)
    greedy_keep(pairs, dropped, taken)
    rows, rep, sim = pairs[taken, 1], pairs[taken, 0], similarity[taken]
    order = np.argsort(rows, kind="stable")
    return {"rows": rows[order], "ref": rep[order], "sim": sim[order]}


def _exact_similarity(op: NearDedup, indexer: _Indexer, pairs: np.ndarray, budget: int) -> np.ndarray:
    """Exact shingle Jaccard of each pair: the inputs are streamed again once per group of pairs whose rows'
    shingle sets fit `budget` (counted at 256 shingles of 4 bytes per row)."""
    out = np.empty(len(pairs), dtype=np.float32)
    per_group = max(1, budget // (2 * 4 * 256))
    for start in range(0, len(pairs), per_group):
        group = pairs[start : start + per_group]
        rows = np.unique(group)
        starts, values = [np.zeros(1, dtype=np.int64)], []
        base, used = 0, 0
        for batch in indexer.inputs.batches(op.reads(), indexer.config.batch_rows):
            lo, hi = np.searchsorted(rows, [base, base + batch.num_rows])
            if hi > lo:
                frame = pl.from_arrow(batch.take(rows[lo:hi] - base))
                data, offsets = text_buffers(normalized_text(op.text, frame, indexer.schema).to_arrow())  # type: ignore[arg-type]
                everyone = np.arange(hi - lo, dtype=np.int64)
                local, shingles = shingle_sets(data, offsets, op.ngram, op.unit == "char", everyone)
                starts.append(local[1:] + used)
                values.append(shingles)
                used += len(shingles)
            base += batch.num_rows
        flat_starts = np.concatenate(starts)
        flat_values = np.concatenate(values) if values else np.zeros(0, dtype=np.uint32)
        first, second = np.searchsorted(rows, group[:, 0]), np.searchsorted(rows, group[:, 1])
        out[start : start + len(group)] = jaccard_pairs(first, second, flat_starts, flat_values)
    return out


def _balance(
    op: Balance, codes: np.ndarray, values: dict[str, int], alive: np.ndarray, entry: dict[str, Any]
) -> dict[str, np.ndarray]:
    live = np.flatnonzero(alive)
    counts = np.bincount(codes[live], minlength=len(values))
    present = counts[counts > 0]
    quota = op.per_value if op.per_value is not None else int(present.min()) if len(present) else 0
    mixed = live.astype(np.uint64) * np.uint64(0x9E3779B97F4A7C15) ^ np.uint64(op.seed)
    mixed ^= mixed >> np.uint64(31)
    order = np.lexsort((live, mixed, codes[live]))
    ranked = live[order]
    group = codes[ranked]
    starts = np.searchsorted(group, np.arange(len(values)))
    rank = np.arange(len(ranked)) - starts[group]
    over = np.sort(ranked[rank >= quota])
    entry["quota"] = quota
    entry["values"] = {name: int(counts[code]) for name, code in sorted(values.items(), key=lambda kv: kv[1])}
    names = np.array(list(values), dtype=object)
    return {"rows": over, "ref": codes[over], "values": names.astype(str)}


def _sorted_refs(rows: list[np.ndarray], refs: list[np.ndarray]) -> dict[str, np.ndarray]:
    flat_rows = np.concatenate(rows) if rows else np.zeros(0, dtype=np.int64)
    flat_refs = np.concatenate(refs) if refs else np.zeros(0, dtype=np.int64)
    order = np.argsort(flat_rows, kind="stable")
    return {"rows": flat_rows[order], "ref": flat_refs[order]}


def _cluster_histogram(refs: np.ndarray) -> dict[str, int]:
    """Clusters by size (the kept row plus the rows dropped onto it), sizes as strings, ascending."""
    if not len(refs):
        return {}
    _, counts = np.unique(refs, return_counts=True)
    sizes, clusters = np.unique(counts + 1, return_counts=True)
    return {str(int(s)): int(c) for s, c in zip(sizes, clusters, strict=True)}
