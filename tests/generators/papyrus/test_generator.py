"""The Papyrus generator's input handling: one resolved root, stable reason codes, the per-file size limit."""

from __future__ import annotations

import shutil
import tracemalloc
from pathlib import Path

import pytest

from synth.core.steps import Rejection, ShardContext
from synth.generators.papyrus.corpus import SAMPLE_ROOT, corpus_files
from synth.generators.papyrus.epidoc import MAX_DOCUMENT_BYTES, EpiDocError
from synth.generators.papyrus.generator import PapyrusCERGenerator
from synth.generators.papyrus.sources import CORPORA_ROOT, DocumentRef, list_documents, read_ref
from synth.pipelines.papyrus import PapyrusConfig, build_generator

TEI_NS = "http://www.tei-c.org/ns/1.0"


def copy_sample(folder: Path) -> Path:
    shutil.copytree(SAMPLE_ROOT, folder)
    return folder


def generate(generator: PapyrusCERGenerator) -> tuple[list[dict], list[Rejection]]:
    rows: list[dict] = []
    rejected: list[Rejection] = []
    for batch in generator.generate(ShardContext(seed=1, shard_index=0, num_shards=1, config_hash="test")):
        rows.extend(batch.rows)
        rejected.extend(batch.rejections)
    return rows, rejected


def epidoc_generator(input_path: str, **settings: object) -> PapyrusCERGenerator:
    config = PapyrusConfig(input=input_path, sources=["epidoc"], levels=[0.1], variants=["uniform"], **settings)
    return build_generator(config)  # type: ignore[return-value]


def write_oversized_tei(path: Path, size: int) -> None:
    """A single-line TEI file of about `size` bytes whose end is missing (so parsing it would fail)."""
    path.parent.mkdir(parents=True, exist_ok=True)
    head = f'<TEI xmlns="{TEI_NS}"><text><body><div type="edition"><ab>'.encode()
    with path.open("wb") as handle:
        handle.write(head)
        handle.write("α".encode() * ((size - len(head)) // 2 + 1))


def test_a_relative_input_reads_every_file_once_resolved(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    corpus = copy_sample(tmp_path / "corpus")
    monkeypatch.chdir(tmp_path)
    generator = epidoc_generator("corpus")
    assert generator.input == corpus.resolve()
    assert {ref.root for ref in generator.refs} == {str(corpus.resolve())}
    rows, rejected = generate(generator)
    assert [r for r in rejected if r.reason != "too_short_for_level"] == []
    assert {row["doc_id"] for row in rows} | {r.values["doc_id"] for r in rejected} == {
        f"{'dclp' if path.parts[-3] == 'DCLP' else 'ddb'}:{path.stem}" for path in corpus_files(corpus)
    }
    absolute_rows, _ = generate(epidoc_generator(str(corpus)))
    assert rows == absolute_rows


def test_refs_listed_from_a_relative_root_read_from_any_working_directory(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    copy_sample(tmp_path / "corpus")
    monkeypatch.chdir(tmp_path)
    refs, _ = list_documents(Path("corpus"), sources=["epidoc"])
    monkeypatch.chdir(tmp_path.parent)
    documents = [read_ref(ref) for ref in refs]
    assert not [d for d in documents if isinstance(d, EpiDocError)]
    assert documents[0].path == "DDB_EpiDoc_XML/bgu/bgu.1/bgu.1.10.xml"


def test_unusable_files_are_rejected_with_a_code_and_the_old_text_as_detail(tmp_path: Path) -> None:
    corpus = tmp_path / "corpus"
    files = {
        "DDB_EpiDoc_XML/p.x/p.x.1.xml": "<TEI><text><body><div type='edition'><ab>α</ab></body>",
        "DDB_EpiDoc_XML/p.x/p.x.2.xml": f'<TEI xmlns="{TEI_NS}"><text><body/></text></TEI>',
        "DDB_EpiDoc_XML/p.x/p.x.3.xml": "<html><body><div type='edition'><ab>λόγος</ab></div></body></html>",
        "DDB_EpiDoc_XML/p.x/p.x.4.xml": f'<TEI xmlns="{TEI_NS}"><text><body><div type="edition"><ab>abc</ab>'
        "</div></body></text></TEI>",
    }
    for rel, content in files.items():
        (corpus / rel).parent.mkdir(parents=True, exist_ok=True)
        (corpus / rel).write_text(content, encoding="utf-8")
    _, rejected = generate(epidoc_generator(str(corpus)))
    by_path = {r.values["path"]: r for r in rejected}
    assert {rel: by_path[rel].reason for rel in files} == {
        "DDB_EpiDoc_XML/p.x/p.x.1.xml": "invalid_xml",
        "DDB_EpiDoc_XML/p.x/p.x.2.xml": "no_edition",
        "DDB_EpiDoc_XML/p.x/p.x.3.xml": "not_tei",
        "DDB_EpiDoc_XML/p.x/p.x.4.xml": "no_text",
    }
    assert by_path["DDB_EpiDoc_XML/p.x/p.x.3.xml"].detail == (
        "epidoc: DDB_EpiDoc_XML/p.x/p.x.3.xml: root element is <html>, expected <TEI> or <TEI.2>"
    )
    assert by_path["DDB_EpiDoc_XML/p.x/p.x.1.xml"].detail.startswith(
        "epidoc: DDB_EpiDoc_XML/p.x/p.x.1.xml: XML syntax error: "
    )
    assert all(r.values["source"] == "epidoc" for r in rejected)


def test_a_file_over_the_limit_is_rejected_unread_with_both_sizes(tmp_path: Path) -> None:
    corpus = copy_sample(tmp_path / "corpus")
    rel = "DDB_EpiDoc_XML/p.big/p.big.1.xml"
    write_oversized_tei(corpus / rel, MAX_DOCUMENT_BYTES + 1024)
    size = (corpus / rel).stat().st_size
    generator = epidoc_generator(str(corpus))
    ref = next(ref for ref in generator.refs if ref.locator == rel)
    tracemalloc.start()
    try:
        error = read_ref(ref)
        peak = tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()
    assert isinstance(error, EpiDocError) and error.code == "document_too_large"
    assert peak < 1 << 20  # the file was neither read nor parsed (parsing it would fail: it has no end)
    _, rejected = generate(generator)
    (too_large,) = [r for r in rejected if r.reason == "document_too_large"]
    assert too_large.values == {"source": "epidoc", "path": rel}
    assert too_large.detail == (
        f"epidoc: {rel}: file is {size:,} bytes, over the {MAX_DOCUMENT_BYTES:,}-byte limit; "
        "raise `generator.max_document_bytes` to read it"
    )


def test_the_limit_is_configurable_and_applies_to_every_source(tmp_path: Path) -> None:
    generator = PapyrusCERGenerator(
        name="papyrus-cer", levels=(0.1,), variants=("uniform",), sources=("duke",), max_document_bytes=1_000_000
    )
    _, rejected = generate(generator)
    assert [(r.reason, r.values["path"]) for r in rejected] == [
        ("document_too_large", "duke_nlp/Papyri_Paraliterary.xml")
    ]
    small = PapyrusConfig(max_document_bytes=4096, sources=["papygreek"], levels=[0.1], variants=["uniform"])
    rows, rejected = generate(build_generator(small))  # type: ignore[arg-type]
    too_large = {r.values["path"] for r in rejected if r.reason == "document_too_large"}
    assert rows and too_large
    assert all((CORPORA_ROOT / path).stat().st_size > 4096 for path in too_large)
    assert all((CORPORA_ROOT / row["path"]).stat().st_size <= 4096 for row in rows)


def test_the_default_limit_leaves_the_config_hash_of_older_datasets_unchanged() -> None:
    assert "max_document_bytes" not in PapyrusConfig().model_dump(mode="json")
    assert PapyrusConfig(max_document_bytes=1024).model_dump(mode="json")["max_document_bytes"] == 1024
    with pytest.raises(ValueError, match="greater than 0"):
        PapyrusConfig(max_document_bytes=0)


def test_a_ref_outside_its_root_is_an_error_not_a_read(tmp_path: Path) -> None:
    copy_sample(tmp_path / "corpus")
    (tmp_path / "secret.xml").write_text("<TEI/>", encoding="utf-8")
    ref = DocumentRef("epidoc", str(tmp_path / "corpus"), "DDB_EpiDoc_XML/../../secret.xml")
    error = read_ref(ref)
    assert isinstance(error, EpiDocError) and error.code == "unreadable_file"
    assert "not inside the corpus root" in error.reason
