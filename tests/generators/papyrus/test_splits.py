"""The Papyrus split: grouped by TM id, stratified by the literary flag, and exposed as Hugging Face splits."""

from __future__ import annotations

import csv
from collections import Counter
from pathlib import Path

import pytest

from synth.core.config import parse_config
from synth.core.dataset import open_dataset, read_rows
from synth.generators.papyrus.corpus import SAMPLE_ROOT, PapyrusDocument, iter_corpus
from synth.generators.papyrus.generator import split_groups, stratified_group_split
from synth.generators.papyrus.sources import DocumentRef, list_documents
from synth.pipelines.execution import run_local
from synth.pipelines.reverify import reverify_dataset


def test_every_dclp_file_of_the_manifest_parses_into_a_literary_row() -> None:
    with (SAMPLE_ROOT / "MANIFEST.tsv").open(encoding="utf-8") as handle:
        listed = {row["path"] for row in csv.DictReader(handle, delimiter="\t") if row["kind"] == "dclp_text+meta"}
    assert len(listed) == 84
    docs = {d.path: d for d in iter_corpus(SAMPLE_ROOT) if isinstance(d, PapyrusDocument)}
    assert listed <= set(docs)
    assert all(docs[path].literary and docs[path].text and docs[path].tm for path in listed)


def test_stratified_split_gives_each_split_both_classes_and_ignores_listing_order() -> None:
    groups = {f"d{i}": False for i in range(50)} | {f"l{i}": True for i in range(9)}
    split = stratified_group_split(groups)
    counts = Counter((split[g], flag) for g, flag in groups.items())
    assert counts[("test", True)] == counts[("validation", True)] == 1 and counts[("train", True)] == 7
    assert counts[("test", False)] == counts[("validation", False)] == 5
    assert stratified_group_split(dict(reversed(list(groups.items())))) == split
    assert set(stratified_group_split({"a": True, "b": True}).values()) == {"train"}  # < 3 groups: all train


def test_documents_sharing_a_tm_id_share_a_group() -> None:
    refs = [
        DocumentRef("epidoc", "/r", "DDB_EpiDoc_XML/a/a.1.xml", ("7", "12")),
        DocumentRef("papygreek", "/r", "x.xml", ("7",)),
        DocumentRef("epidoc", "/r", "DCLP/1/9.xml", ("9",)),
        DocumentRef("duke", "/r", "y.xml#document_id=3"),
    ]
    group_of, literary = split_groups(refs)
    assert group_of[refs[0]] == group_of[refs[1]] == "tm:7"
    assert literary == {"tm:7": False, "tm:9": True, "duke:y.xml#document_id=3": False}


def test_shipped_corpus_split_has_both_classes_in_every_split() -> None:
    from synth.pipelines.papyrus import PapyrusConfig, build_generator

    generator = build_generator(PapyrusConfig(levels=[0.1], variants=["uniform"]))
    counts = Counter((split, ref.literary) for ref, split in generator.splits.items())
    for split in ("train", "validation", "test"):
        assert counts[(split, True)] >= 1 and counts[(split, False)] >= 1
    assert counts[("test", True)] + counts[("validation", True)] + counts[("train", True)] == 84
    refs, _ = list_documents(None, sources=["epidoc"])
    assert all(ref.tms for ref in refs)  # TM ids are read even for a single source (the split groups by them)


@pytest.fixture(scope="module")
def small_dataset(tmp_path_factory: pytest.TempPathFactory) -> Path:
    out = tmp_path_factory.mktemp("papyrus-splits") / "out"
    payload = {
        "domain": "papyrus",
        "seed": 3,
        "shards": 2,
        "generator": {"sources": ["epidoc"], "levels": [0.1], "variants": ["uniform"]},
    }
    run_local(parse_config(payload, source="test"), out)
    return out


def test_load_dataset_returns_train_validation_and_test(small_dataset: Path) -> None:
    datasets = pytest.importorskip("datasets")
    loaded = datasets.load_dataset(str(small_dataset))
    assert list(loaded) == ["train", "validation", "test"]
    for name, split in loaded.items():
        assert set(split["split"]) == {name}
        assert set(split["literary"]) == {True, False}
    assert sorted((small_dataset / "data").iterdir())[0].name == "test-00000-of-00002.parquet"


def test_split_files_read_back_verify_and_keep_every_row(small_dataset: Path) -> None:
    dataset = open_dataset(small_dataset)
    assert dataset.splits == ["train", "validation", "test"]
    test_rows = read_rows(small_dataset, columns=["split"]).filter(split="test").height
    assert sum(pq_rows(p) for p in dataset.files(split="test")) == test_rows > 0
    assert read_rows(small_dataset, columns=["id"]).height == dataset.rows
    report = reverify_dataset(small_dataset)
    assert report["ok"] and report["integrity_errors"] == []


@pytest.mark.slow
def test_a_damaged_split_file_is_redone_on_resume(small_dataset: Path, tmp_path: Path) -> None:
    import shutil

    out = tmp_path / "copy"
    shutil.copytree(small_dataset, out)
    victim = out / "data" / "validation-00001-of-00002.parquet"
    before = victim.read_bytes()
    victim.write_bytes(b"damaged")
    assert not reverify_dataset(out)["ok"]
    manifest = open_dataset(out).manifest
    run_local(parse_config(manifest["config"], source="test"), out)
    assert victim.read_bytes() == before and reverify_dataset(out)["ok"]


def pq_rows(path: Path) -> int:
    import pyarrow.parquet as pq

    return pq.ParquetFile(path).metadata.num_rows
