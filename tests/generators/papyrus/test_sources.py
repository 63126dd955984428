"""The labelled corpora beside EpiDoc: readers on the shipped files, TM dedup, listing, malformed inputs."""

from __future__ import annotations

import csv
import doctest
import math
import pickle
import shutil
from collections import Counter
from pathlib import Path

import pytest
from rapidfuzz.distance import Levenshtein

from synth.core.steps import Rejection, ShardContext
from synth.generators.papyrus import sources
from synth.generators.papyrus.corpus import SAMPLE_ROOT, PapyrusDocument, iter_corpus
from synth.generators.papyrus.epidoc import GREEK_LETTERS, EpiDocError
from synth.generators.papyrus.generator import PapyrusCERGenerator
from synth.generators.papyrus.sources import (
    CORPORA_ROOT,
    SOURCE_NAMES,
    DocumentRef,
    base,
    duke,
    iter_source,
    list_documents,
    padoc,
    papygreek,
    read_ref,
)
from synth.pipelines.papyrus import PapyrusConfig

ALPHABET = set(GREEK_LETTERS) | {" ", "\n"}
DOCTYPES = {"letter", "receipt", "contract", "petition", "list", "account", "declaration", "order", "register"}
DOCTYPES |= {"copy", "other"}
PADOC_CSV = "padoc/padoc389.csv"
DUKE_XML = "duke_nlp/Papyri_Paraliterary.xml"


def documents(items: list[PapyrusDocument | EpiDocError]) -> list[PapyrusDocument]:
    return [item for item in items if isinstance(item, PapyrusDocument)]


@pytest.fixture(scope="module")
def papygreek_items() -> list[PapyrusDocument | EpiDocError]:
    return list(iter_source("papygreek"))


@pytest.fixture(scope="module")
def duke_items() -> list[PapyrusDocument | EpiDocError]:
    return list(iter_source("duke"))


@pytest.fixture(scope="module")
def padoc_items() -> list[PapyrusDocument | EpiDocError]:
    return list(iter_source("padoc"))


@pytest.fixture(scope="module")
def epidoc_by_tm() -> dict[str, PapyrusDocument]:
    return {doc.tm: doc for doc in documents(list(iter_corpus(SAMPLE_ROOT))) if doc.tm}


def check_common_fields(docs: list[PapyrusDocument], source: str) -> None:
    assert len({doc.doc_id for doc in docs}) == len(docs)
    for doc in docs:
        assert doc.doc_id.startswith(f"{source}:") and doc.source == source
        assert doc.text and set(doc.text) <= ALPHABET, doc.doc_id
        assert all(line == line.strip() and "  " not in line for line in doc.text.split("\n"))
        assert doc.tm is not None and doc.tm.replace(" ", "").isdigit()
        assert doc.literary is False
        assert doc.doctype is None or doc.doctype in DOCTYPES
        if doc.date_min is not None:
            assert -400 <= doc.date_min <= doc.date_max <= 800 and 0 not in (doc.date_min, doc.date_max)
            assert doc.date_mid == (doc.date_min + doc.date_max) / 2


# --- PapyGreek -------------------------------------------------------------------------------------------


def test_papygreek_reads_all_558_texts(papygreek_items: list[PapyrusDocument | EpiDocError]) -> None:
    docs = documents(papygreek_items)
    assert len(papygreek_items) == len(docs) == 558
    check_common_fields(docs, "papygreek")
    assert all(doc.path.startswith("papygreek_treebanks/documentary/") for doc in docs)
    assert all(doc.doc_id == f"papygreek:{Path(doc.path).stem}" for doc in docs)
    assert sum(len(doc.text) for doc in docs) > 300_000
    # README: place by country prefix, Egypt 491 and none 46.
    places = Counter(doc.place.split(":")[0] if doc.place else None for doc in docs)
    assert (places["Egypt"], places[None]) == (491, 46)


def test_papygreek_labels(papygreek_items: list[PapyrusDocument | EpiDocError]) -> None:
    docs = documents(papygreek_items)
    doctypes = Counter(doc.doctype for doc in docs)
    assert doctypes.most_common(2) == [("letter", 371), ("petition", 66)]
    assert doctypes[None] == 29  # no hand carries a text type
    for doc in docs:
        if doc.genre_raw and doc.genre_raw.split("; ")[1:2] == ["Letter"]:
            assert doc.doctype == "letter"
    by_id = {doc.doc_id: doc for doc in docs}
    example = by_id["papygreek:aegyptus.90.43"]
    assert (example.doctype, example.subtype, example.genre_raw) == ("order", "Delivery", "BUSINESS; Order; Delivery")
    assert (example.tm, example.hgv, example.place) == ("219740", ("219740",), "Egypt: Western Desert")
    assert (example.date_min, example.date_max, example.date_mid) == (301, 400, 350.5)
    assert all(doc.date_min is not None for doc in docs)  # one bound given: the other takes its value


@pytest.mark.parametrize(
    ("category", "subcategory", "doctype"),
    [
        ("Letter", "Private correspondence", "letter"),
        ("Petition", "Hypomnema", "petition"),
        ("Declaration (apographè)", "", "declaration"),
        ("Order (law/administration)", "Decree", "order"),
        ("Registration", "Property", "register"),
        ("Report", "Legal proceedings", "register"),
        ("Report", "Administrative", "other"),
        ("Memorandum (private)", "", "other"),
        ("", "", None),
    ],
)
def test_papygreek_doctype_mapping(category: str, subcategory: str, doctype: str | None) -> None:
    assert papygreek.map_papygreek_doctype(category, subcategory) == doctype


def test_papygreek_type_without_category_is_other() -> None:
    assert papygreek.map_papygreek_doctype("", hypercategory="PRIVATE") == "other"


@pytest.mark.parametrize(
    ("form", "stripped"),
    [
        ("Περικλῆς", "Περικλῆς"),
        ("Ἀμ[μ]ωνίῳ", "Ἀμωνίῳ"),  # lost and restored
        ("[μετὰ]", ""),
        ("(ἔρρωσ(ο))", "ἔρρωσ"),  # abbreviation kept, expansion dropped
        ("(ἰν[δι]κ̣(τίωνος))", "ἰνκ̣"),
        ("(|Εὐτυχ|)", "Εὐτυχ"),  # unresolved abbreviation
        ("(δρα|^χ^|(μῶν))", "δραχ"),  # superscript inside an abbreviation
        ("διο<ι>κητῇ", "διοκητῇ"),  # omitted by the scribe
        ("τοῦτο{ν}", "τοῦτο{ν}"),  # surplus: the scribe wrote it
        ("\\τρεῖς/", "\\τρεῖς/"),  # addition: markers go later, in normalise_greek
        ("||↕:καὶ||", "↕:καὶ"),
        ("〚κβ〛", ""),
        ("ἐνέκ|και", "ἐνέκ\nκαι"),
        ("τεσσαρά⧙[]⧘κοντα", "τεσσαρά\nκοντα"),
        ("❛οὐαί❜", "οὐαί"),
        ("_.2[_.3]ς", "_.2ς"),  # gap markers leave no letters after normalise_greek
    ],
)
def test_papygreek_strip_form(form: str, stripped: str) -> None:
    assert papygreek.strip_form(form) == stripped


def test_papygreek_keep_deleted_keeps_struck_ink() -> None:
    assert papygreek.strip_form("〚κβ〛", keep_deleted=True) == "κβ"


def test_papygreek_matches_the_epidoc_stripper_on_shared_texts(
    papygreek_items: list[PapyrusDocument | EpiDocError], epidoc_by_tm: dict[str, PapyrusDocument]
) -> None:
    shared = [(doc, epidoc_by_tm[doc.tm]) for doc in documents(papygreek_items) if doc.tm in epidoc_by_tm]
    assert len(shared) == 9
    for doc, epidoc in shared:
        assert doc.text.count("\n") == epidoc.text.count("\n"), doc.doc_id  # same physical lines
        assert doc.date_min == epidoc.date_min
    texts = {doc.doc_id: (doc.text, epidoc.text) for doc, epidoc in shared}
    assert texts["papygreek:p.adl.G2"][0] == texts["papygreek:p.adl.G2"][1]
    assert texts["papygreek:p.cair.zen.1.59016"][0] == texts["papygreek:p.cair.zen.1.59016"][1]
    distance = sum(Levenshtein.distance(a, b) for a, b in texts.values())
    assert distance / sum(len(b) for _, b in texts.values()) < 0.01  # different edition revisions only


# --- Trismegistos Words (duke) -----------------------------------------------------------------------------


def test_duke_reads_235_paraliterary_texts(duke_items: list[PapyrusDocument | EpiDocError]) -> None:
    docs = documents(duke_items)
    errors = [item for item in duke_items if isinstance(item, EpiDocError)]
    assert len(duke_items) == 235
    [error] = errors
    assert (error.path, error.reason) == (f"{DUKE_XML}#document_id=73142", "empty text (no legible letters)")
    check_common_fields(docs, "duke")
    assert {(doc.genre_raw, doc.doctype, doc.subtype) for doc in docs} == {("paraliterary", "other", None)}
    assert all(doc.doc_id == f"duke:{doc.tm}" for doc in docs)
    # README: the most common (period_min, period_max) pairs are 2-2 (27 texts) and 7-7 (25).
    periods = Counter((doc.date_min, doc.date_max) for doc in docs)
    assert (periods[(101, 200)], periods[(601, 700)]) == (27, 25)


DUKE_SAMPLE = """<treebank>
<sentence document_id="5" filename="p.a.1" period_min="-2" period_max="-1" genre="Letters" place="Tebtynis">
  <word wordid="1" row="1" form="χαίρειν"/><word wordid="2" row="2" form="σε"/></sentence>
<sentence document_id="5" filename="p.a.1" period_min="-2" period_max="-2" genre="Letters" place="Tebtynis">
  <word wordid="2" row="2" form="σε"/><word id="9" artificial="elliptic" form="[0]"/>
  <word wordid="3" row="2-3" form="ἐρρῶσ-θαι"/></sentence>
<sentence document_id="6" filename="p.b.2_1" period_min="3" period_max="3" genre="Lists" place="unknown">
  <word wordid="4" row="1" form="ἄρτοι"/></sentence>
<sentence document_id="5" filename="sb.9.9" period_min="1" period_max="1" genre="Letters" place="Egypt">
  <word wordid="5" row="1" form="ἄλλο"/></sentence>
<sentence document_id="6" filename="p.b.2_2" period_min="4" period_max="4" genre="Lists" place="unknown">
  <word wordid="6" row="1" form="οἶνος"/></sentence>
</treebank>
"""


def test_duke_joins_parts_and_reads_each_word_once(tmp_path: Path) -> None:
    (tmp_path / "duke_nlp").mkdir()
    (tmp_path / "duke_nlp" / "Papyri_Letters.xml").write_text(DUKE_SAMPLE, encoding="utf-8")
    letter, parts = list(iter_source("duke", tmp_path))
    assert isinstance(letter, PapyrusDocument) and isinstance(parts, PapyrusDocument)
    # wordid 2 sits in two sentences; sb.9.9 is another edition of TM 5 and is left out.
    assert letter.text == "χαιρειν\nσε ερρωσ\nθαι"
    assert (letter.doctype, letter.genre_raw, letter.place) == ("letter", "Letters", "Tebtynis")
    assert (letter.date_min, letter.date_max) == (-200, -1)
    assert (parts.text, parts.doctype, parts.place) == ("αρτοι\nοινοσ", "list", None)
    assert (parts.date_min, parts.date_max, parts.path) == (201, 400, "duke_nlp/Papyri_Letters.xml#document_id=6")


@pytest.mark.parametrize(
    ("form", "spans_lines", "stripped"),
    [
        ("χωρ(ί)ο(ν)", False, "χωρο"),
        ("Ἀ[μπελίου]", False, "Ἀ"),
        ("π̣ο̣|gap=unknown|", False, "π̣ο̣"),
        ("ἀρ<τά>βας", False, "ἀρβας"),
        ("τετρα{ω}δίω<ν>", False, "τετρα{ω}δίω"),
        ("\\Ἀρτέμις/⟦αρτεμιο̣ς⟧", False, "\\Ἀρτέμις/"),
        ("Φαρ-μοῦ(θι)", True, "Φαρ\nμοῦ"),
        ("(δραχμ-…)", False, ""),
    ],
)
def test_duke_strip_form(form: str, spans_lines: bool, stripped: str) -> None:
    assert duke.strip_form(form, spans_lines=spans_lines) == stripped


def test_duke_doctype_mapping() -> None:
    genres = {"paraliterary": "other", "Letters": "letter", "Contracts": "contract", "Receipts": "receipt"}
    genres |= {"Pronouncements": "order", "Labels": "other", "": None}
    assert {genre: duke.map_duke_doctype(genre) for genre in genres} == genres


def test_century_span() -> None:
    assert base.century_span(-3, -2) == (-300, -101)
    assert base.century_span(-1, 1) == (-100, 100)
    assert base.century_span(7, 8) == (601, 800)
    with pytest.raises(ValueError, match="century 0"):
        base.century_span(0, 1)


# --- PaDoc -------------------------------------------------------------------------------------------------


def test_padoc_reads_389_plus_159_rows(padoc_items: list[PapyrusDocument | EpiDocError]) -> None:
    docs = documents(padoc_items)
    assert len(padoc_items) == len(docs) == 389 + 159
    check_common_fields(docs, "padoc")
    assert all(doc.doc_id == f"padoc:{doc.tm}" for doc in docs)
    assert {(doc.doctype, doc.place, doc.hgv) for doc in docs} == {(None, None, ())}
    benchmark = [doc for doc in docs if doc.path.startswith(f"{PADOC_CSV}#row=")]
    wild = [doc for doc in docs if doc.path.startswith("padoc/in_the_wild.csv#row=")]
    assert (len(benchmark), len(wild)) == (389, 159)
    assert all(doc.date_max - doc.date_min in (23, 24) for doc in benchmark)  # 23: the quarter ending at 0
    assert all(doc.date_min is None and doc.date_mid is None and doc.date_max is not None for doc in wild)
    # README: counts by the integer part (floor) of `date`.
    floors = Counter(math.floor((0 if doc.date_max == -1 else doc.date_max) / 100) for doc in benchmark)
    assert floors == {-3: 31, -2: 37, -1: 32, 0: 45, 1: 50, 2: 29, 3: 44, 4: 38, 5: 37, 6: 46}


def test_padoc_date_convention_fits_the_shared_texts(
    padoc_items: list[PapyrusDocument | EpiDocError], papygreek_items: list[PapyrusDocument | EpiDocError]
) -> None:
    known = {doc.tm: doc for doc in documents(papygreek_items)}
    shared = [(doc, known[doc.tm]) for doc in documents(padoc_items) if doc.tm in known]
    assert len(shared) == 11
    for doc, other in shared:
        assert doc.date_min <= other.date_mid <= doc.date_max, (doc.doc_id, other.date_mid)


def test_quarter_century_span() -> None:
    assert padoc.quarter_century_span(-2.5) == (-274, -250)
    assert padoc.quarter_century_span(0.25) == (1, 25)
    assert padoc.quarter_century_span(0.0) == (-24, -1)
    with pytest.raises(ValueError, match="not a number"):
        padoc.quarter_century_span(math.nan)


# --- listing and dedup -------------------------------------------------------------------------------------


@pytest.fixture(scope="module")
def full_listing() -> tuple[list[DocumentRef], dict[str, int]]:
    return list_documents(None, sources=SOURCE_NAMES)


def test_listing_counts_and_dropped_duplicates(full_listing: tuple[list[DocumentRef], dict[str, int]]) -> None:
    refs, dropped = full_listing
    assert dropped == {"epidoc": 0, "papygreek": 9, "duke": 0, "padoc": 15}
    counts = Counter(ref.source for ref in refs)
    assert counts == {"epidoc": 132, "papygreek": 549, "duke": 235, "padoc": 533}
    assert [ref.source for ref in refs] == sorted((ref.source for ref in refs), key=SOURCE_NAMES.index)


@pytest.fixture(scope="module")
def read_by_ref(
    papygreek_items: list[PapyrusDocument | EpiDocError],
    duke_items: list[PapyrusDocument | EpiDocError],
    padoc_items: list[PapyrusDocument | EpiDocError],
) -> dict[tuple[str, str], PapyrusDocument | EpiDocError]:
    """Every document already read, by (source, locator): a document's path is its ref's locator."""
    items = {("epidoc", doc.path): doc for doc in iter_corpus(SAMPLE_ROOT)}
    for source, read in (("papygreek", papygreek_items), ("duke", duke_items), ("padoc", padoc_items)):
        items |= {(source, item.path): item for item in read}
    return items


def test_a_tm_in_several_sources_is_read_once_from_the_best_one(
    full_listing: tuple[list[DocumentRef], dict[str, int]],
    read_by_ref: dict[tuple[str, str], PapyrusDocument | EpiDocError],
) -> None:
    refs, _ = full_listing
    owner: dict[str, str] = {}
    for ref in refs:
        doc = read_by_ref[ref.source, ref.locator]
        if not isinstance(doc, PapyrusDocument):
            continue
        for tm in (doc.tm or "").split():
            assert owner.setdefault(tm, ref.source) == ref.source, f"TM {tm} listed by {owner[tm]} and {ref.source}"
    assert owner["677"] == "epidoc"  # TM 677 is in the EpiDoc sample, PapyGreek and PaDoc
    assert owner["21335"] == "papygreek"  # in PapyGreek and PaDoc only
    assert read_ref(refs[0]) == read_by_ref[refs[0].source, refs[0].locator]


def test_dedup_follows_priority_whatever_the_order_asked(
    read_by_ref: dict[tuple[str, str], PapyrusDocument | EpiDocError],
) -> None:
    refs, dropped = list_documents(None, sources=["padoc", "papygreek"])
    assert list_documents(None, sources=["papygreek", "padoc"]) == (refs, dropped)
    assert dropped == {"papygreek": 0, "padoc": 11}
    by_tm: dict[str | None, list[str]] = {}
    for ref in refs:
        doc = read_by_ref[ref.source, ref.locator]
        by_tm.setdefault(doc.tm, []).append(doc.doc_id)
    assert by_tm["677"] == ["papygreek:p.cair.zen.1.59016"]


def test_recto_and_verso_of_one_source_are_both_kept() -> None:
    refs, _ = list_documents(None, sources=["papygreek"])
    locators = {ref.locator.rsplit("/", 1)[-1] for ref in refs}
    assert {"upz.1.18r.xml", "upz.1.18v.xml"} <= locators  # both TM 3409
    assert len(refs) == 558


def test_listing_is_deterministic_and_picklable(full_listing: tuple[list[DocumentRef], dict[str, int]]) -> None:
    refs, dropped = full_listing
    assert list_documents(None, sources=list(reversed(SOURCE_NAMES))) == (refs, dropped)
    assert pickle.loads(pickle.dumps(refs)) == refs
    assert read_ref(refs[600]) == read_ref(pickle.loads(pickle.dumps(refs[600])))


def test_unknown_or_no_source_is_refused() -> None:
    with pytest.raises(ValueError, match="unknown source `dclp`"):
        list_documents(None, sources=["epidoc", "dclp"])
    with pytest.raises(ValueError, match="`sources` is empty"):
        list_documents(None, sources=[])
    with pytest.raises(ValueError, match="unknown labelled corpus `epidoc`"):
        next(iter_source("epidoc"))


def test_missing_epidoc_root_is_refused(tmp_path: Path) -> None:
    with pytest.raises(FileNotFoundError, match="does not exist"):
        list_documents(tmp_path / "nowhere", sources=["epidoc", "padoc"])


# --- malformed inputs --------------------------------------------------------------------------------------


def copy_padoc_with(tmp_path: Path, row: int, column: str, value: str) -> Path:
    """A corpora root holding only the first five rows of padoc389.csv, with one field replaced."""
    with (CORPORA_ROOT / PADOC_CSV).open(newline="", encoding="utf-8") as handle:
        reader = csv.DictReader(handle)
        rows = [next(reader) for _ in range(5)]
        columns = reader.fieldnames
    rows[row - 1][column] = value
    target = tmp_path / PADOC_CSV
    target.parent.mkdir(parents=True)
    with target.open("w", newline="", encoding="utf-8") as handle:
        writer = csv.DictWriter(handle, fieldnames=columns)
        writer.writeheader()
        writer.writerows(rows)
    return tmp_path


@pytest.mark.parametrize(
    ("column", "value", "reason"),
    [
        ("date", "third century", "bad `date` value 'third century'"),
        ("date", "nan", "bad `date` value 'nan'"),
        ("tm", "TM1017", "bad `tm` value 'TM1017'"),
        ("text_raw", "[ - - - ] 123", "empty `text_raw`"),
    ],
)
def test_a_bad_csv_field_is_an_error_naming_the_row(tmp_path: Path, column: str, value: str, reason: str) -> None:
    root = copy_padoc_with(tmp_path, 3, column, value)
    items = list(iter_source("padoc", root))
    assert len(items) == 5
    errors = [item for item in items if isinstance(item, EpiDocError)]
    assert len(errors) == 1
    assert errors[0].path == f"{PADOC_CSV}#row=3" and errors[0].reason.startswith(reason)


def test_a_csv_with_unknown_columns_is_one_error(tmp_path: Path) -> None:
    target = tmp_path / "padoc" / "other.csv"
    target.parent.mkdir()
    target.write_text("id,greek\n1,λόγος\n", encoding="utf-8")
    [error] = list(iter_source("padoc", tmp_path))
    assert isinstance(error, EpiDocError) and error.path == "padoc/other.csv" and "unknown columns" in error.reason


def test_a_row_past_the_end_is_an_error() -> None:
    error = read_ref(DocumentRef("padoc", str(CORPORA_ROOT), f"{PADOC_CSV}#row=390"))
    assert isinstance(error, EpiDocError) and "no row 390" in error.reason


def test_broken_treebank_xml_is_an_error_and_the_rest_is_read(tmp_path: Path) -> None:
    folder = tmp_path / "papygreek_treebanks" / "documentary" / "aegyptus"
    folder.mkdir(parents=True)
    good = "papygreek_treebanks/documentary/aegyptus/aegyptus.90.43.xml"
    shutil.copy(CORPORA_ROOT / good, tmp_path / good)
    (folder / "broken.xml").write_text('<treebank><document_meta tm_id="1"/><sentence>', encoding="utf-8")
    (folder / "headless.xml").write_text(
        '<treebank><sentence><word orig_form="λόγος"/></sentence></treebank>', encoding="utf-8"
    )
    items = {item.path: item for item in iter_source("papygreek", tmp_path)}
    assert isinstance(items[good], PapyrusDocument)
    broken = items["papygreek_treebanks/documentary/aegyptus/broken.xml"]
    assert isinstance(broken, EpiDocError) and broken.reason.startswith("XML syntax error")
    headless = items["papygreek_treebanks/documentary/aegyptus/headless.xml"]
    assert isinstance(headless, EpiDocError) and headless.reason == "no document_meta element"


def test_broken_duke_file_is_one_error_and_a_bad_period_names_the_document(tmp_path: Path) -> None:
    folder = tmp_path / "duke_nlp"
    folder.mkdir()
    (folder / "A_broken.xml").write_text("<treebank><sentence document_id='1'>", encoding="utf-8")
    (folder / "B_period.xml").write_text(
        "<treebank><sentence document_id='7' filename='p.x.1' period_min='early' period_max='2' genre='Letters'>"
        "<word wordid='1' row='1' form='χαίρειν'/></sentence></treebank>",
        encoding="utf-8",
    )
    broken, period = list(iter_source("duke", tmp_path))
    assert isinstance(broken, EpiDocError) and broken.path == "duke_nlp/A_broken.xml"
    assert broken.reason.startswith("XML syntax error")
    assert isinstance(period, EpiDocError) and period.path == "duke_nlp/B_period.xml#document_id=7"
    assert "bad period_min/period_max `early`/`2`" in period.reason


# --- the generator and its config --------------------------------------------------------------------------


def make_generator(**overrides: object) -> PapyrusCERGenerator:
    settings = {"name": "papyrus-cer", "levels": (0.1,), "variants": ("uniform",), "sources": ("duke",)}
    return PapyrusCERGenerator(**{**settings, **overrides})  # type: ignore[arg-type]


def generate_rows(generator: PapyrusCERGenerator, shards: int) -> tuple[list[dict], list[Rejection]]:
    rows: list[dict] = []
    rejected: list[Rejection] = []
    for index in range(shards):
        ctx = ShardContext(seed=3, shard_index=index, num_shards=shards, config_hash="test")
        for batch in generator.generate(ctx):
            rows.extend(batch.rows)
            rejected.extend(batch.rejections)
    return rows, rejected


def test_generator_shards_the_refs_and_is_deterministic() -> None:
    rows, rejected = generate_rows(make_generator(), shards=3)
    reasons = Counter(r.reason for r in rejected)
    assert reasons["no_text"] == 1
    assert set(reasons) == {"no_text", "too_short_for_level"}
    empty = next(r for r in rejected if r.reason == "no_text")
    assert empty.detail == f"duke: {DUKE_XML}#document_id=73142: empty text (no legible letters)"
    assert empty.values == {"source": "duke", "path": f"{DUKE_XML}#document_id=73142"}
    covered = {row["doc_id"] for row in rows} | {r.values.get("doc_id") for r in rejected} - {None}
    assert len(covered) == 234  # every readable document, each in exactly one shard
    assert all(row["edit_distance"] == row["k"] for row in rows)
    again, _ = generate_rows(make_generator(), shards=3)
    assert again == rows
    single, _ = generate_rows(make_generator(), shards=1)
    assert sorted(single, key=lambda row: row["doc_id"]) == sorted(rows, key=lambda row: row["doc_id"])


def test_generator_describes_its_sources() -> None:
    info = make_generator(sources=("epidoc", "padoc")).describe_input()
    assert info == {
        "root": str(SAMPLE_ROOT),
        "documents": 132 + 544,
        "sources": {
            "epidoc": {"documents": 132, "duplicates_dropped": 0},
            "padoc": {"documents": 544, "duplicates_dropped": 4},
        },
    }


def test_config_defaults_to_the_clean_sources_and_checks_input() -> None:
    assert PapyrusConfig().sources == ["epidoc", "papygreek", "duke"]
    assert set(PapyrusConfig(sources=list(SOURCE_NAMES)).sources) == {"epidoc", "papygreek", "duke", "padoc"}
    with pytest.raises(ValueError, match="sources must be distinct"):
        PapyrusConfig(sources=["padoc", "padoc"])
    with pytest.raises(ValueError, match="has no `epidoc`"):
        PapyrusConfig(input="/data/idp.data", sources=["padoc"])


@pytest.mark.parametrize("module", [sources, base, papygreek, duke, padoc])
def test_docstring_examples_run(module: object) -> None:
    result = doctest.testmod(module)  # type: ignore[arg-type]
    assert result.attempted > 0 and result.failed == 0
