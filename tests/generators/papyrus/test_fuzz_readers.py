"""Fuzzing the papyrus source readers: random bytes and malformed structures never escape as exceptions.

Every reader must return a document or an `EpiDocError` with a known code, list its folder without raising, and
take memory bounded by the file (no entity expansion, no external resource, libxml2's depth limit kept).
"""

from __future__ import annotations

import shutil
import tracemalloc
from collections.abc import Callable
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from synth.generators.papyrus.corpus import SAMPLE_ROOT, PapyrusDocument, read_document
from synth.generators.papyrus.epidoc import REASON_CODES, EpiDocError
from synth.generators.papyrus.sources import CORPORA_ROOT, list_documents, read_ref
from synth.generators.papyrus.sources.duke import read_duke
from synth.generators.papyrus.sources.padoc import read_padoc
from synth.generators.papyrus.sources.papygreek import read_papygreek

TEI_NS = "http://www.tei-c.org/ns/1.0"
DDB_FILE = "DDB_EpiDoc_XML/p.adl/p.adl.G2.xml"
PAPYGREEK_FILE = "papygreek_treebanks/documentary/aegyptus/aegyptus.90.43.xml"
DUKE_FILE = "duke_nlp/Papyri_Paraliterary.xml"
FUZZ = settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])

Reader = Callable[[Path], PapyrusDocument | EpiDocError]


def edition(body: str, *, root: str = "TEI", prolog: str = "") -> bytes:
    text = f'<text><body><div type="edition"><ab>{body}</ab></div></body></text>'
    return f'{prolog}<{root} xmlns="{TEI_NS}">{text}</{root}>'.encode()


def check(result: object) -> None:
    assert isinstance(result, PapyrusDocument | EpiDocError), result
    if isinstance(result, EpiDocError):
        assert result.code in REASON_CODES and "\n" not in result.code
    else:
        assert result.text and set(result.text) <= set("αβγδεζηθικλμνξοπρστυφχψωϝϛϙϟϡ \n")


def epidoc_reader(root: Path) -> Reader:
    def read(path: Path) -> PapyrusDocument | EpiDocError:
        return read_document(root, path.relative_to(root))

    return read


@pytest.fixture
def corpus(tmp_path: Path) -> Path:
    root = tmp_path / "corpus"
    shutil.copytree(SAMPLE_ROOT / "DDB_EpiDoc_XML" / "p.adl", root / "DDB_EpiDoc_XML" / "p.adl")
    shutil.copytree(SAMPLE_ROOT / "HGV_meta_EpiDoc", root / "HGV_meta_EpiDoc")
    return root


# --- EpiDoc --------------------------------------------------------------------------------------------------

MALFORMED = st.one_of(
    st.binary(max_size=2000),
    st.integers(0, 5000).map(lambda cut: (SAMPLE_ROOT / DDB_FILE).read_bytes()[:cut]),  # truncated
    st.sampled_from(["html", "TEI.2", "tei", "x:TEI"]).map(lambda root: edition("λόγος", root=root)),
    st.integers(1, 400).map(lambda depth: edition("<hi>" * depth + "λόγος" + "</hi>" * depth)),
    st.integers(1, 2_000_000).map(lambda size: edition(f'<lb n="{"9" * size}"/>λόγος')),  # huge attribute
    st.sampled_from(["UTF-16", "latin-1", "bogus-encoding", "UTF-32"]).map(
        lambda name: edition("λόγος", prolog=f'<?xml version="1.0" encoding="{name}"?>')
    ),
    st.binary(min_size=1, max_size=40).map(lambda noise: edition("λόγος")[:60] + noise + edition("λόγος")[60:]),
    st.text(max_size=300).map(lambda text: edition(text.replace("&", "&amp;").replace("<", "&lt;"))),
)


@FUZZ
@given(content=MALFORMED)
def test_the_epidoc_reader_returns_a_document_or_a_coded_error(corpus: Path, content: bytes) -> None:
    path = corpus / "DDB_EpiDoc_XML" / "p.adl" / "p.adl.fuzz.xml"
    path.write_bytes(content)
    check(epidoc_reader(corpus)(path))
    refs, _ = list_documents(corpus, sources=["epidoc", "padoc"])
    for ref in refs:
        if ref.source == "epidoc":
            check(read_ref(ref))


BILLION_LAUGHS = (
    '<?xml version="1.0"?><!DOCTYPE TEI [<!ENTITY a "αααααααααα">'
    + "".join(f'<!ENTITY {chr(98 + i)} "{("&" + chr(97 + i) + ";") * 10}">' for i in range(9))
    + f']><TEI xmlns="{TEI_NS}"><text><body><div type="edition"><ab>&j;λόγος</ab></div></body></text></TEI>'
)


@pytest.mark.parametrize(
    ("content", "code"),
    [
        (BILLION_LAUGHS, "invalid_xml"),  # libxml2's amplification limit stops it before any expansion
        (
            f'<?xml version="1.0"?><!DOCTYPE TEI [<!ENTITY x SYSTEM "file://{SAMPLE_ROOT / DDB_FILE}">]>'
            + edition("&x;λόγος").decode(),
            None,
        ),
        (edition("<hi>" * 5000 + "λ" + "</hi>" * 5000).decode(), "invalid_xml"),
    ],
    ids=["entity-expansion", "external-entity", "deep-nesting"],
)
def test_entities_are_not_expanded_and_depth_is_capped(corpus: Path, content: str, code: str | None) -> None:
    path = corpus / "DDB_EpiDoc_XML" / "p.adl" / "p.adl.hostile.xml"
    path.write_text(content, encoding="utf-8")
    tracemalloc.start()
    try:
        result = epidoc_reader(corpus)(path)
        peak = tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()
    assert peak < 1 << 20
    if code is None:
        assert isinstance(result, PapyrusDocument) and result.text == "λογοσ"  # nothing came from the entities
    else:
        assert isinstance(result, EpiDocError) and result.code == code


def test_special_files_are_refused_without_blocking(corpus: Path) -> None:
    import os

    fifo = corpus / "DDB_EpiDoc_XML" / "p.adl" / "p.adl.fifo.xml"
    os.mkfifo(fifo)
    result = read_document(corpus, fifo.relative_to(corpus))
    assert isinstance(result, EpiDocError) and result.code == "unreadable_file"
    assert result.reason == "cannot read file: not a regular file"


# --- the corpora readers ---------------------------------------------------------------------------------------


def treebank(words: str, meta: str = '<document_meta tm_id="1" date_not_before="-50"/>') -> bytes:
    return f"<treebank>{meta}<sentence>{words}</sentence></treebank>".encode()


TREEBANKS = st.one_of(
    st.binary(max_size=2000),
    st.integers(0, 6000).map(lambda cut: (CORPORA_ROOT / PAPYGREEK_FILE).read_bytes()[:cut]),
    st.text(max_size=80).map(
        lambda form: treebank(f'<word orig_form="{form.replace("&", "").replace("<", "").replace(chr(34), "")}"/>')
    ),
    st.text(max_size=20).map(
        lambda value: treebank(
            '<word orig_form="λόγος" line_n="1"/>',
            f'<document_meta tm_id="{value.replace(chr(34), "").replace("<", "").replace("&", "")}"/>',
        )
    ),
    st.integers(1, 400).map(lambda depth: b"<treebank>" + b"<x>" * depth + b"</x>" * depth + b"</treebank>"),
)


@FUZZ
@given(content=TREEBANKS)
def test_the_papygreek_reader_returns_a_document_or_a_coded_error(tmp_path: Path, content: bytes) -> None:
    path = tmp_path / PAPYGREEK_FILE
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_bytes(content)
    check(read_papygreek(tmp_path, PAPYGREEK_FILE))
    for ref in list_documents(None, sources=["papygreek"], corpora_root=tmp_path)[0]:
        check(read_ref(ref))


DUKE = st.one_of(
    st.binary(max_size=2000),
    st.integers(0, 6000).map(lambda cut: (CORPORA_ROOT / DUKE_FILE).read_bytes()[:cut]),
    st.tuples(st.text(max_size=8), st.text(max_size=8), st.text(max_size=30)).map(
        lambda values: (
            (
                "<treebank><sentence document_id='7' filename='p.x_1' period_min='{}' period_max='{}'>"
                "<word wordid='1' row='1-2' form='{}'/></sentence></treebank>"
            )
            .format(*(value.replace("'", "").replace("<", "").replace("&", "") for value in values))
            .encode()
        )
    ),
)


@FUZZ
@given(content=DUKE)
def test_the_duke_reader_returns_a_document_or_a_coded_error(tmp_path: Path, content: bytes) -> None:
    path = tmp_path / DUKE_FILE
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_bytes(content)
    check(read_duke(tmp_path, f"{DUKE_FILE}#document_id=7"))
    for ref in list_documents(None, sources=["duke"], corpora_root=tmp_path)[0]:
        check(read_ref(ref))


CSV_ROWS = st.lists(st.lists(st.text(max_size=20), min_size=0, max_size=5), max_size=5)
PADOC = st.one_of(
    st.binary(max_size=2000),
    st.integers(0, 4000).map(lambda cut: (CORPORA_ROOT / "padoc" / "padoc389.csv").read_bytes()[:cut]),
    CSV_ROWS.map(lambda rows: ("tm,date,text_raw\n" + "\n".join(",".join(row) for row in rows)).encode()),
    st.text(max_size=200).map(lambda text: f'tm,date,text_raw\n1,0.5,"{text}'.encode()),  # an unclosed quote
)


@FUZZ
@given(content=PADOC, row=st.integers(-1, 6))
def test_the_padoc_reader_returns_a_document_or_a_coded_error(tmp_path: Path, content: bytes, row: int) -> None:
    path = tmp_path / "padoc" / "padoc389.csv"
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_bytes(content)
    check(read_padoc(tmp_path, f"padoc/padoc389.csv#row={row}"))
    for ref in list_documents(None, sources=["padoc"], corpora_root=tmp_path)[0]:
        check(read_ref(ref))
