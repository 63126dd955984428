"""Reading the shipped papyri.info sample: parsing, DDB-HGV joins, labels, and error reporting."""

from __future__ import annotations

import csv
import math
import shutil
from collections import Counter
from pathlib import Path

import pytest

from synth.generators.papyrus.corpus import (
    SAMPLE_ROOT,
    PapyrusDocument,
    corpus_files,
    iter_corpus,
    map_doctype,
    parse_year,
    read_document,
)
from synth.generators.papyrus.epidoc import GREEK_LETTERS, EpiDocError

TEI_NS = "http://www.tei-c.org/ns/1.0"
DOCTYPES = {"letter", "receipt", "contract", "petition", "list", "account", "declaration", "order", "register"}
DOCTYPES |= {"copy", "other"}


@pytest.fixture(scope="module")
def sample() -> list[PapyrusDocument | EpiDocError]:
    return list(iter_corpus(SAMPLE_ROOT))


@pytest.fixture(scope="module")
def docs(sample: list[PapyrusDocument | EpiDocError]) -> dict[str, PapyrusDocument]:
    return {d.doc_id: d for d in sample if isinstance(d, PapyrusDocument)}


def test_sample_parses_every_text(sample: list[PapyrusDocument | EpiDocError]) -> None:
    errors = [d for d in sample if isinstance(d, EpiDocError)]
    documents = [d for d in sample if isinstance(d, PapyrusDocument)]
    assert errors == []
    assert len(documents) == 132
    assert sum(d.source == "ddb" for d in documents) == 48
    assert sum(d.source == "dclp" for d in documents) == 84  # the 5 first DCLP texts + 79 added for the literary task


def test_order_is_sorted_and_deterministic(sample: list[PapyrusDocument | EpiDocError]) -> None:
    paths = [d.path for d in sample]
    ddb = [p for p in paths if p.startswith("DDB_EpiDoc_XML/")]
    assert paths == ddb + sorted(p for p in paths if p.startswith("DCLP/"))
    assert ddb == sorted(ddb)
    assert [d.path for d in iter_corpus(SAMPLE_ROOT)] == paths
    assert [p.relative_to(SAMPLE_ROOT).as_posix() for p in corpus_files(SAMPLE_ROOT)] == paths


def test_texts_are_clean_lines(docs: dict[str, PapyrusDocument]) -> None:
    alphabet = set(GREEK_LETTERS) | {" ", "\n"}
    for doc in docs.values():
        assert doc.text
        assert set(doc.text) <= alphabet, doc.doc_id
        for line in doc.text.split("\n"):
            assert line and line == line.strip() and "  " not in line, doc.doc_id


def test_every_ddb_text_joins_its_hgv_records(docs: dict[str, PapyrusDocument]) -> None:
    for doc in docs.values():
        if doc.source == "ddb":
            assert doc.hgv, doc.doc_id
            assert doc.doctype in DOCTYPES, doc.doc_id
            assert doc.genre_raw is not None, doc.doc_id
            assert doc.date_min is not None, doc.doc_id


def test_p_adl_g3_has_two_hgv_records(docs: dict[str, PapyrusDocument]) -> None:
    doc = docs["ddb:p.adl.G3"]
    assert doc.hgv == ("2a", "2b")
    assert doc.tm == "2"
    assert (doc.doctype, doc.genre_raw, doc.subtype) == ("contract", "Vertrag (Kauf)", "Land")
    assert (doc.date_min, doc.date_max) == (-112, -112)
    assert doc.path == "DDB_EpiDoc_XML/p.adl/p.adl.G3.xml"


def test_p_adl_g2_labels(docs: dict[str, PapyrusDocument]) -> None:
    doc = docs["ddb:p.adl.G2"]
    assert (doc.source, doc.tm, doc.hgv, doc.literary) == ("ddb", "1", ("1",), False)
    assert doc.title is not None and doc.title.startswith("Copy of a")
    assert doc.place == "Pathyris"
    assert (doc.doctype, doc.genre_raw) == ("copy", "Kopie")
    assert (doc.date_min, doc.date_max, doc.date_mid) == (-124, -124, -124.0)


@pytest.mark.parametrize(
    ("doc_id", "date_min", "date_max"),
    [
        ("ddb:o.bodl.1.10", -251, -251),  # when="-0251-06-21" with notBefore="0251": the sign of @when wins
        ("ddb:o.bodl.1.102", -98, -98),  # short form notBefore="-98"
        ("ddb:o.bodl.1.103", -151, -140),  # two when-custom alternatives
        ("ddb:upz.1.59", -179, -168),  # two @when alternatives
        ("ddb:p.brem.1", 115, 115),  # notBefore-custom / notAfter-custom
        ("ddb:p.oxy.16.1829", 577, 583),  # year-month bounds
        ("ddb:p.oxy.4.744", -1, -1),  # 1 BCE, no year 0
        ("ddb:p.col.4.66", -256, -255),
        ("dclp:59017", 100, 199),
    ],
)
def test_dates(docs: dict[str, PapyrusDocument], doc_id: str, date_min: int, date_max: int) -> None:
    doc = docs[doc_id]
    assert (doc.date_min, doc.date_max, doc.date_mid) == (date_min, date_max, (date_min + date_max) / 2)


def test_dates_and_labels_are_sane(docs: dict[str, PapyrusDocument]) -> None:
    undated = sorted(d.doc_id for d in docs.values() if d.date_min is None)
    assert all(doc_id.startswith("dclp:") for doc_id in undated)  # some DCLP records carry no origDate
    for doc in docs.values():
        if doc.date_min is None:
            assert doc.date_max is None and doc.date_mid is None
            continue
        assert -400 <= doc.date_min <= doc.date_mid <= doc.date_max <= 800, doc.doc_id
        assert 0 not in (doc.date_min, doc.date_max)
        assert doc.doc_id == f"{doc.source}:{Path(doc.path).stem}"
        assert doc.literary == (doc.source == "dclp")
    doctypes = [d.doctype for d in docs.values() if d.source == "ddb"]
    assert doctypes.count("letter") >= 20
    assert doctypes.count("receipt") >= 8


def test_dclp_documents_are_literary(docs: dict[str, PapyrusDocument]) -> None:
    dclp = {k: d for k, d in docs.items() if d.source == "dclp"}
    assert len(dclp) == 84
    assert {"dclp:244047", "dclp:59017", "dclp:60010", "dclp:60040", "dclp:63376"} <= set(dclp)
    for doc in dclp.values():
        assert doc.literary and doc.hgv == ()
        assert doc.doctype in {"literary", "religion", "science"}  # the DCLP culture term
        assert doc.tm == doc.doc_id.removeprefix("dclp:")
    assert Counter(d.doctype for d in dclp.values()) == {"literary": 71, "religion": 7, "science": 6}
    assert dclp["dclp:59017"].genre_raw == "poetry; tragedy"  # textClass terms only, no handDesc terms


def test_letter_counts_match_manifest(docs: dict[str, PapyrusDocument]) -> None:
    """MANIFEST.tsv counts Greek letters by a slightly different rule; near-agreement is expected."""
    with (SAMPLE_ROOT / "MANIFEST.tsv").open(encoding="utf-8") as handle:
        rows = [r for r in csv.DictReader(handle, delimiter="\t") if r["letters"]]
    by_path = {d.path: d for d in docs.values()}
    assert len(rows) == 132
    ours = {r["path"]: sum(c not in " \n" for c in by_path[r["path"]].text) for r in rows}
    theirs = {r["path"]: int(r["letters"]) for r in rows}
    agree = sum(ours[p] == theirs[p] for p in theirs)
    print(f"letter counts agreeing with MANIFEST.tsv: {agree}/{len(rows)}")
    assert agree >= 0.9 * len(rows)
    assert all(math.isclose(ours[p], theirs[p], rel_tol=0.05) for p in theirs)


@pytest.mark.parametrize(
    ("term", "doctype"),
    [
        ("Brief", "letter"),
        ("Brief (privat)", "letter"),
        ("zwei Briefe (privat)", "letter"),
        ("Quittung", "receipt"),
        ("Vertrag (Kauf)", "contract"),
        ("Angebot einer Pacht für Weideland (Schafe)", "contract"),
        ("Eingabe", "petition"),
        ("Liste", "list"),
        ("Abrechnung", "account"),
        ("Rechnung", "account"),
        ("Deklaration", "declaration"),
        ("Kopie", "copy"),
        ("Edikt", "order"),
        ("Überweisung", "order"),
        ("Testament der Pekysis", "other"),
        ("", None),
        (None, None),
    ],
)
def test_map_doctype(term: str | None, doctype: str | None) -> None:
    assert map_doctype(term) == doctype


@pytest.mark.parametrize(
    ("value", "year"),
    [("-0251-06-21", -251), ("0251", 251), ("-98", -98), ("0577-05", 577), ("101", 101), ("0000", None), ("", None)],
)
def test_parse_year(value: str, year: int | None) -> None:
    assert parse_year(value) == year


def _edition(body: str, *, idnos: str = "") -> str:
    return (
        f'<TEI xmlns="{TEI_NS}"><teiHeader><fileDesc><publicationStmt>{idnos}</publicationStmt></fileDesc>'
        f'</teiHeader><text><body><div type="edition"><ab>{body}</ab></div></body></text></TEI>'
    )


def _hgv(hgv_id: str, *, tm: str, hybrid: str, term: str, when: str) -> str:
    return (
        f'<TEI xmlns="{TEI_NS}"><teiHeader><fileDesc><titleStmt><title>T {hgv_id}</title></titleStmt>'
        f'<publicationStmt><idno type="filename">{hgv_id}</idno><idno type="TM">{tm}</idno>'
        f'<idno type="ddb-hybrid">{hybrid}</idno></publicationStmt><sourceDesc><msDesc><history><origin>'
        f'<origPlace>Oxyrhynchos</origPlace><origDate when="{when}"/></origin></history></msDesc></sourceDesc>'
        f'</fileDesc><profileDesc><textClass><keywords scheme="hgv"><term>{term}</term></keywords></textClass>'
        "</profileDesc></teiHeader><text><body/></text></TEI>"
    )


def _write(root: Path, rel: str, content: str) -> None:
    path = root / rel
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(content, encoding="utf-8")


def test_bad_files_are_reported_and_iteration_continues(tmp_path: Path) -> None:
    _write(tmp_path, "DDB_EpiDoc_XML/p.x/p.x.1.xml", _edition("ἔργον"))
    _write(tmp_path, "DDB_EpiDoc_XML/p.x/p.x.2.xml", "<TEI><text><body><div type='edition'><ab>α</ab></body>")
    _write(tmp_path, "DDB_EpiDoc_XML/p.x/p.x.3.xml", _edition('<gap reason="lost" unit="line" quantity="2"/>'))
    _write(tmp_path, "DDB_EpiDoc_XML/p.x/p.x.4.xml", f'<TEI xmlns="{TEI_NS}"><text><body/></text></TEI>')
    _write(tmp_path, "DCLP/1/1.xml", _edition("ἄνδρα μοι ἔννεπε"))
    results = list(iter_corpus(tmp_path))
    assert [type(r).__name__ for r in results] == [
        "PapyrusDocument",
        "EpiDocError",
        "EpiDocError",
        "EpiDocError",
        "PapyrusDocument",
    ]
    reasons = [r.reason for r in results if isinstance(r, EpiDocError)]
    assert reasons[0].startswith("XML syntax error")
    assert reasons[1] == "empty edition (no legible text)"
    assert reasons[2].startswith("no edition div")
    assert [r.path for r in results if isinstance(r, EpiDocError)] == [
        "DDB_EpiDoc_XML/p.x/p.x.2.xml",
        "DDB_EpiDoc_XML/p.x/p.x.3.xml",
        "DDB_EpiDoc_XML/p.x/p.x.4.xml",
    ]
    first = results[0]
    assert isinstance(first, PapyrusDocument)
    assert (first.text, first.hgv, first.doctype, first.date_mid) == ("εργον", (), None, None)


def test_join_checks_hybrid_then_tm(tmp_path: Path) -> None:
    ids = '<idno type="ddb-hybrid">p.x;;{n}</idno><idno type="HGV">{hgv}</idno><idno type="TM">{tm}</idno>'
    _write(tmp_path, "DDB_EpiDoc_XML/p.x/p.x.1.xml", _edition("α", idnos=ids.format(n=1, hgv="1001", tm="1001")))
    _write(tmp_path, "DDB_EpiDoc_XML/p.x/p.x.2.xml", _edition("β", idnos=ids.format(n=2, hgv="1002", tm="1002")))
    _write(tmp_path, "DDB_EpiDoc_XML/p.x/p.x.3.xml", _edition("γ", idnos=ids.format(n=3, hgv="1003", tm="1003")))
    _write(tmp_path, "DDB_EpiDoc_XML/p.x/p.x.4.xml", _edition("δ", idnos=ids.format(n=4, hgv="9999", tm="9999")))
    # 1001: hybrid matches; 1002: hybrid differs (a verso), TM matches; 1003: neither matches.
    _write(
        tmp_path, "HGV_meta_EpiDoc/HGV2/1001.xml", _hgv("1001", tm="1001", hybrid="p.x;;1", term="Brief", when="-0250")
    )
    _write(
        tmp_path, "HGV_meta_EpiDoc/HGV2/1002.xml", _hgv("1002", tm="1002", hybrid="p.x;;2v", term="Liste", when="0150")
    )
    _write(
        tmp_path, "HGV_meta_EpiDoc/HGV2/1003.xml", _hgv("1003", tm="7", hybrid="p.y;;3", term="Quittung", when="0100")
    )
    docs = {d.doc_id: d for d in iter_corpus(tmp_path) if isinstance(d, PapyrusDocument)}
    assert (docs["ddb:p.x.1"].doctype, docs["ddb:p.x.1"].date_mid, docs["ddb:p.x.1"].place) == (
        "letter",
        -250,
        "Oxyrhynchos",
    )
    assert (docs["ddb:p.x.2"].doctype, docs["ddb:p.x.2"].date_mid) == ("list", 150)
    assert (docs["ddb:p.x.3"].doctype, docs["ddb:p.x.3"].date_mid, docs["ddb:p.x.3"].title) == (None, None, None)
    assert docs["ddb:p.x.4"].hgv == ("9999",) and docs["ddb:p.x.4"].doctype is None  # missing record: no labels


def test_tm_is_the_fallback_key_without_an_hgv_idno(tmp_path: Path) -> None:
    idnos = '<idno type="ddb-hybrid">p.x;;5</idno><idno type="TM">2005</idno>'
    _write(tmp_path, "DDB_EpiDoc_XML/p.x/p.x.5.xml", _edition("ε", idnos=idnos))
    _write(
        tmp_path, "HGV_meta_EpiDoc/HGV3/2005.xml", _hgv("2005", tm="2005", hybrid="p.x;;5", term="Eingabe", when="0200")
    )
    (doc,) = list(iter_corpus(tmp_path))
    assert isinstance(doc, PapyrusDocument)
    assert (doc.hgv, doc.tm, doc.doctype) == (("2005",), "2005", "petition")


def test_missing_root_raises(tmp_path: Path) -> None:
    with pytest.raises(FileNotFoundError, match="does not exist"):
        list(iter_corpus(tmp_path / "nowhere"))
    with pytest.raises(FileNotFoundError, match="holds neither DDB_EpiDoc_XML/ nor DCLP/"):
        list(iter_corpus(tmp_path))


def test_only_dclp_is_enough(tmp_path: Path) -> None:
    shutil.copytree(SAMPLE_ROOT / "DCLP", tmp_path / "DCLP")
    results = list(iter_corpus(tmp_path))
    assert len(results) == 84 and all(isinstance(r, PapyrusDocument) and r.literary for r in results)


def test_read_document_matches_iteration(docs: dict[str, PapyrusDocument]) -> None:
    doc = read_document(SAMPLE_ROOT, Path("DDB_EpiDoc_XML/p.adl/p.adl.G3.xml"))
    assert doc == docs["ddb:p.adl.G3"]
