"""synth curate on planted data: exact duplicates, near duplicates against brute-force Jaccard, test-set items,
determinism, resume after an interruption, and the curate stage."""

import itertools
import json
import random
from pathlib import Path

import pytest

from synth.core.dataset import open_dataset, read_records
from synth.pipelines.curation.config import parse_curate_config
from synth.pipelines.curation.engine import curate
from synth.pipelines.curation.planted import PlantedSpec, eval_items, write_planted
from synth.pipelines.curation.write import ShardWriter

SPEC = PlantedSpec(rows=3000, words=60, exact_rate=0.04, near_rate=0.08, eval_items=40, seed=5)


def operations(eval_path: Path) -> dict:
    return {
        "operations": [
            {"kind": "exact_dedup", "text": {"columns": ["text"]}},
            {"kind": "near_dedup", "text": {"columns": ["text"]}, "threshold": 0.8},
            {
                "kind": "decontaminate",
                "text": {"columns": ["text"]},
                "eval_sets": [{"name": "planted", "path": str(eval_path), "columns": ["question"], "id_column": "qid"}],
            },
        ],
        "shards": 3,
        "batch_rows": 700,
    }


@pytest.fixture(scope="module")
def planted(tmp_path_factory):
    root = tmp_path_factory.mktemp("curate")
    dataset = write_planted(root / "in", SPEC, shards=2)
    eval_path = root / "eval.jsonl"
    eval_path.write_text(
        "".join(json.dumps({"qid": f"q{i}", "question": q}) + "\n" for i, q in enumerate(eval_items(SPEC)))
    )
    config = parse_curate_config(operations(eval_path), source="test")
    summary = curate([dataset], root / "out", config, source="test")
    return root, dataset, config, summary


def shingles(text: str) -> set[tuple[str, ...]]:
    words = "".join(c if c.isalnum() or c.isspace() else " " for c in text.lower()).split()
    width = min(5, len(words))
    return {tuple(words[i : i + width]) for i in range(len(words) - width + 1)}


def jaccard(a: set, b: set) -> float:
    return len(a & b) / len(a | b) if a or b else 1.0


def test_planted_duplicates_and_test_items_are_found(planted):
    root, dataset, _, summary = planted
    rows = read_records(dataset, columns=["id", "text", "planted", "source"])
    dropped = {r["id"]: r for r in read_records(root / "out", part="rejected")}
    kept = {r["id"] for r in read_records(root / "out", columns=["id"])}
    assert len(kept) + len(dropped) == len(rows) == SPEC.rows

    exact_rows = [r for r in rows if r["planted"] == "exact"]
    assert exact_rows and all(dropped[r["id"]]["filter_reason"] == "curate:exact_duplicate" for r in exact_rows)
    for r in exact_rows:
        assert json.loads(dropped[r["id"]]["filter_detail"])["duplicate_of"] == rows[r["source"]]["id"]

    contaminated = [r for r in rows if r["planted"] == "contaminated"]
    found = [r for r in contaminated if dropped.get(r["id"], {}).get("filter_reason") == "curate:contaminated"]
    assert len(found) == len(contaminated) == SPEC.eval_items
    assert {json.loads(dropped[r["id"]]["filter_detail"])["eval_item"] for r in found} == {
        f"q{r['source']}" for r in contaminated
    }
    false_positives = [
        d for d in dropped.values() if d["filter_reason"] == "curate:contaminated" and d["planted"] != "contaminated"
    ]
    assert false_positives == []  # clean rows flagged: reported as 0 of 2,960 in the closing note

    # near duplicates against brute-force Jaccard over a sample: planted copies, their sources, random rows
    by_id = {r["id"]: r for r in rows}
    planted_rows = [i for i, r in enumerate(rows) if r["planted"] in ("near", "exact")]
    sample = sorted(
        {*planted_rows, *(rows[i]["source"] for i in planted_rows), *random.Random(0).sample(range(len(rows)), 400)}
    )
    sets = {i: shingles(rows[i]["text"]) for i in sample}
    true_pairs = [(a, b) for a, b in itertools.combinations(sample, 2) if jaccard(sets[a], sets[b]) >= 0.8]
    duplicate_reasons = ("curate:exact_duplicate", "curate:near_duplicate")
    hits = [b for _, b in true_pairs if dropped.get(rows[b]["id"], {}).get("filter_reason") in duplicate_reasons]
    recall = len(hits) / len(true_pairs)
    near_dropped = [d for d in dropped.values() if d["filter_reason"] == "curate:near_duplicate"]
    correct = [
        d
        for d in near_dropped
        if jaccard(shingles(d["text"]), shingles(by_id[json.loads(d["filter_detail"])["duplicate_of"]]["text"])) >= 0.8
    ]
    precision = len(correct) / len(near_dropped)
    assert len(true_pairs) > 100 and recall >= 0.95, (len(true_pairs), recall)
    assert near_dropped and precision >= 0.99, precision
    near = next(op for op in summary.report["operations"] if op["kind"] == "near_dedup")
    assert near["clusters"] and near["verified_pairs"] >= near["dropped"]


def test_out_is_a_complete_synth_dataset_with_provenance_and_card(planted):
    root, dataset, _, summary = planted
    out = open_dataset(root / "out", domain="planted")
    assert out.manifest["num_shards"] == 3 and out.manifest["inputs"][0]["path"] == str(dataset)
    row = read_records(root / "out", columns=["id", "provenance"])[0]
    assert row["provenance"]["generator"] == "curate" and row["provenance"]["parent_ids"] == [row["id"]]
    card = (root / "out" / "README.md").read_text()
    assert "## Curation" in card and "curate:near_duplicate" in card and "curation-clusters.png" in card
    assert (root / "out" / "curation-clusters.png").stat().st_size > 1000
    assert json.loads((root / "out" / "curation.json").read_text()) == summary.report
    assert not list((root / "out" / ".synth" / "curate").glob("work-*"))


def _files(out: Path) -> dict[str, bytes]:
    names = ["README.md", "curation.json", "curation-clusters.png"]
    paths = [*sorted((out / "data").iterdir()), *sorted((out / "rejected").iterdir()), *(out / n for n in names)]
    return {p.relative_to(out).as_posix(): p.read_bytes() for p in paths}


def test_same_inputs_and_config_give_byte_identical_out_and_an_interrupted_run_resumes(planted, tmp_path, monkeypatch):
    root, dataset, config, _ = planted
    reference = _files(root / "out")
    original = ShardWriter._output

    def interrupted(self, chunk, config_hash):
        if chunk.shard == 1:
            raise KeyboardInterrupt  # as if the run were killed while writing shard 1
        return original(self, chunk, config_hash)

    monkeypatch.setattr(ShardWriter, "_output", interrupted)
    with pytest.raises(KeyboardInterrupt):
        curate([dataset], tmp_path / "out", config, source="test")
    assert open_dataset(tmp_path / "out", require_complete=False).manifest["status"] == "partial"
    stale = tmp_path / "out" / ".synth" / "curate" / "work-424242"  # the spill folder of a run killed while indexing
    stale.mkdir()
    (stale / "near1-band000-0000.bin").write_bytes(b"\0" * 48)
    monkeypatch.setattr(ShardWriter, "_output", original)
    resumed = curate([dataset], tmp_path / "out", config, source="test")
    assert resumed.reused_decisions and not stale.exists()
    assert _files(tmp_path / "out") == reference
    for saved in (tmp_path / "out" / ".synth" / "curate").glob("decisions-*.npz"):
        saved.write_bytes(b"damaged")  # damaged decisions are recomputed, with the same result
    assert not curate([dataset], tmp_path / "out", config, source="test", overwrite=True).reused_decisions
    assert _files(tmp_path / "out") == reference


def test_curate_stage_in_a_multi_stage_config(planted, tmp_path):
    from synth.pipelines.stage_engine import run_stages_local
    from synth.pipelines.stages import parse_stages

    _, dataset, _, _ = planted
    payload = {
        "stages": {
            "deduped": {
                "kind": "curate",
                "inputs": [str(dataset)],
                "operations": [
                    {"kind": "exact_dedup", "text": {"columns": ["text"]}},
                    {"kind": "balance", "column": "category"},
                ],
            }
        }
    }
    plan = parse_stages(payload, source="stages.yaml")
    first = run_stages_local(plan, tmp_path / "run")
    stage = open_dataset(tmp_path / "run" / "deduped", domain="planted")
    counts = {}
    for row in read_records(stage.root, columns=["category"]):
        counts[row["category"]] = counts.get(row["category"], 0) + 1
    assert len(set(counts.values())) == 1 and stage.manifest["kind"] == "curate"
    assert first.executed == ["deduped"]
    assert run_stages_local(plan, tmp_path / "run").skipped == ["deduped"]


def test_a_curate_stage_naming_a_missing_column_is_refused_when_the_plan_is_built(planted):
    from synth.core.errors import ConfigError
    from synth.pipelines.stages import parse_stages

    _, dataset, _, _ = planted
    payload = {
        "stages": {
            "c": {"kind": "curate", "inputs": [str(dataset)], "operations": [{"kind": "range", "column": "nope"}]}
        }
    }
    with pytest.raises(ConfigError, match=r"stages.yaml: field `stages.c`: field `operations.0.column`: column `nope`"):
        parse_stages(payload, source="stages.yaml")
