"""The EpiDoc stripper: one case per row of the stripping rules, normalisation, legacy TEI and errors."""

from __future__ import annotations

import pickle
from pathlib import Path

import pytest
from lxml import etree

from synth.core.records import REASON_CODE
from synth.generators.papyrus.corpus import SAMPLE_ROOT, read_document
from synth.generators.papyrus.epidoc import REASON_CODES, EpiDocError, normalise_greek, strip_edition

TEI_NS = "http://www.tei-c.org/ns/1.0"


def strip(body: str, **options: bool) -> str:
    """Strip an edition whose single ``ab`` holds `body`."""
    xml = (
        f'<TEI xmlns="{TEI_NS}"><teiHeader/><text><body>'
        f'<div type="edition" xml:space="preserve"><ab>{body}</ab></div>'
        "</body></text></TEI>"
    )
    return strip_edition(etree.fromstring(xml), **options)


# One case per row of the rules table (research notes, section 1), plus nesting variants.
RULES = [
    ("supplied-lost", 'αβ<supplied reason="lost">γδ</supplied>ε', "αβε"),
    (
        "supplied-lost-nested",
        '<unclear>α<supplied reason="lost">β</supplied></unclear>'
        '<supplied reason="lost">γ<supplied reason="lost">δ</supplied><unclear>ε</unclear></supplied>ζ',
        "αζ",
    ),
    ("supplied-omitted", 'λογ<supplied reason="omitted">ο</supplied>σ', "λογσ"),
    ("gap-character", 'αβ<gap reason="lost" quantity="3" unit="character"/>γ', "αβγ"),
    ("gap-line", '<lb n="1"/>αβ<lb n="2"/><gap reason="lost" quantity="1" unit="line"/><lb n="3"/>γ', "αβ\nγ"),
    ("unclear", "ἐ<unclear>ν</unclear> <unclear>Π</unclear>αθύρ<unclear>ε</unclear>", "εν παθυρε"),
    (
        "expan-ex",
        "<expan>κεχ<ex>ρη</ex>μ<ex>άτικα</ex></expan> <expan><abbr>δρ</abbr><ex>αχμαί</ex></expan>",
        "κεχμ δρ",
    ),
    ("expan-only-ex", "χαλκοῦ <expan><ex>τάλαντα</ex></expan> εἴκοσι", "χαλκου εικοσι"),
    ("choice-reg-orig", "<choice><reg>Περσίνη</reg><orig>Περσινηι</orig></choice>", "περσινηι"),
    ("choice-orig-first", "<choice><orig>ἐξέστωι</orig><reg>ἐξέστω</reg></choice>", "εξεστωι"),
    ("choice-corr-sic", "<choice><corr>τιμήν</corr><sic>τειμην</sic></choice>", "τειμην"),
    ("choice-unclear-alternatives", "<choice><unclear>α</unclear><unclear>λ</unclear></choice>β", "αβ"),
    ("app-lem-rdg", '<app type="editorial"><lem resp="BL">μενῶ</lem><rdg>μένω</rdg></app>', "μενω"),
    ("subst-add-del", '<subst><add place="inline">ε</add><del rend="corrected">α</del></subst>ν', "εν"),
    ("add-above", 'κα<add place="above">ι</add> τα', "και τα"),
    ("del-standalone", 'αβ<del rend="corrected">γ</del>δ', "αβδ"),
    ("surplus", "γράφω<surplus>ι</surplus>", "γραφωι"),
    ("num-tick", '<num value="46">μϛ</num> <num value="2">βʹ</num> <num value="4"/>δ', "μϛ β δ"),
    ("lb-lines", '<lb n="1"/>πρῶτον <lb n="2"/>δεύτερον', "πρωτον\nδευτερον"),
    ("lb-break-no", '<lb n="1"/>τῶν προσ\n    <lb n="2" break="no"/>γράφων', "των προσ\nγραφων"),
    ("lb-legacy-inword", '<lb n="1"/>προσ<lb n="2" type="inWord"/>γράφων', "προσ\nγραφων"),
    (
        "lb-inside-reg-only",
        '<lb n="1"/>καὶ <choice><reg>Ἀπολλω <lb n="2" break="no"/>ναρίῳ</reg><orig>Ἀπολλωναριν</orig></choice>'
        ' γίνωσκε <lb n="3"/>ὡς',
        "και απολλωναριν\nγινωσκε\nωσ",
    ),
    ("lb-inside-supplied", '<lb n="1"/>α<supplied reason="lost">β<lb n="2"/>γγγ</supplied><lb n="3"/>δ', "α\nδ"),
    ("hi-diacritic", '<hi rend="diaeresis">ϊ</hi>να <hi rend="acute"><unclear>έ</unclear></hi>', "ινα ε"),
    ("note", 'αβ<note xml:lang="en">read γδ</note>γ', "αβγ"),
    ("certainty", 'α<certainty match=".." locus="value"/>β', "αβ"),
    ("milestone", 'αβ <milestone rend="paragraphos" unit="undefined"/> γ', "αβ γ"),
    ("space", 'αβ <space quantity="2" unit="character"/> γ', "αβ γ"),
    ("handShift", '<handShift new="m2"/>ἔρρωσο', "ερρωσο"),
    ("figure", "α<figure><figDesc>seal σφραγίς</figDesc></figure>β", "αβ"),
    ("g", 'ἀναγ<g type="apostrophe"/>καῖον <g type="stauros"/> τι', "αναγκαιον τι"),
    ("comment", "αβ<!-- γδ -->ε", "αβε"),
    ("tails-of-dropped-kept", 'α<gap reason="lost" extent="unknown" unit="character"/>β<note>x</note>γ', "αβγ"),
]


@pytest.mark.parametrize(("body", "expected"), [case[1:] for case in RULES], ids=[case[0] for case in RULES])
def test_rules_table(body: str, expected: str) -> None:
    assert strip(body) == expected


def test_keep_deleted_keeps_struck_ink_but_never_erasures() -> None:
    body = '<subst><add>ε</add><del rend="corrected">α</del></subst>ν <del rend="erasure">ξξ</del>ο<del>ρ</del>'
    assert strip(body) == "εν ο"
    assert strip(body, keep_deleted=True) == "εαν ορ"


def test_blocks_ab_textpart_lg_l_start_new_lines() -> None:
    xml = (
        f'<TEI xmlns="{TEI_NS}"><text><body><div type="edition">'
        '<div type="textpart" n="r"><ab>αβ</ab></div><div type="textpart" n="v"><ab>γδ</ab></div>'
        "<lg><l>ἄνδρα μοι</l><l>ἔννεπε</l></lg></div></body></text></TEI>"
    )
    assert strip_edition(etree.fromstring(xml)) == "αβ\nγδ\nανδρα μοι\nεννεπε"


def test_only_the_edition_div_is_read() -> None:
    xml = (
        f'<TEI xmlns="{TEI_NS}"><text><body><div type="translation"><p>λόγος</p></div>'
        '<div type="edition"><ab>ἔργον</ab></div><div type="commentary"><p>σχόλιον</p></div>'
        "</body></text></TEI>"
    )
    assert strip_edition(etree.fromstring(xml)) == "εργον"


def test_scriptio_continua_removes_spaces_only() -> None:
    assert strip('<lb n="1"/>ἔτους μϛ <lb n="2"/>Μεσορὴ δ', scriptio_continua=True) == "ετουσμϛ\nμεσορηδ"


@pytest.mark.parametrize(
    ("raw", "expected"),
    [
        ("Ἡλιοδώρου", "ηλιοδωρου"),  # NFD: accents and breathings go, letters are lowercased
        ("ᾠδῇ Ϊ", "ωδη ι"),  # iota subscript and diaeresis
        ("λόγος ϹΩΜΑ ϲῶμα", "λογοσ σωμα σωμα"),  # final and lunate sigma
        ("ἐφʼ ὁμολογίας. τί; ναί· ἔστω, ⳨ 12 abc", "εφ ομολογιασ τι ναι εστω"),  # punctuation, digits, Latin
        ("ϛ ϙ ϡ ϝ Ϛ", "ϛ ϙ ϡ ϝ ϛ"),  # numeral letters are letters
        ("ϐ ϑ ϕ ϖ ϰ ϱ ϵ µ", "β θ φ π κ ρ ε μ"),  # symbol forms fold
        ("  α\t\tβ  \n\n   \n γ ", "α β\nγ"),  # whitespace collapses; empty lines go
    ],
)
def test_normalise_greek(raw: str, expected: str) -> None:
    assert normalise_greek(raw) == expected


def test_worked_example_p_adl_g2_line_2() -> None:
    tree = etree.parse(str(SAMPLE_ROOT / "DDB_EpiDoc_XML/p.adl/p.adl.G2.xml"))
    lines = strip_edition(tree).split("\n")
    assert lines[0] == "αντιγραφον ομολογιασ"
    assert lines[1] == "ετουσ μϛ μεσορη δ εν παθυρε"
    assert len(lines) == 20  # one line per lb


def test_legacy_tei2_without_namespace() -> None:
    xml = """<?xml version="1.0" encoding="UTF-8"?>
<TEI.2 id="p.test.1"><teiHeader><fileDesc><publicationStmt><idno type="TM">1</idno></publicationStmt>
</fileDesc></teiHeader><text><body>
<div type="edition" lang="grc"><div type="textpart" n="1"><ab>
<lb n="1"/><reg orig="Περσινηι">Περσίνῃ</reg> <sic corr="τιμήν">τειμην</sic> <corr sic="δραχμας">δραχμὰς</corr>
<lb n="2"/>ἔτους <supplied reason="lost">ιβ</supplied> <expan>κεχ<ex>ρημάτικα</ex></expan> <corr>ἐγώ</corr>
</ab></div></div></body></text></TEI.2>"""
    root = etree.fromstring(xml.encode())
    assert strip_edition(root) == "περσινηι τειμην δραχμασ\nετουσ κεχ"


def test_no_edition_div_raises_epidoc_error() -> None:
    root = etree.fromstring(f'<TEI xmlns="{TEI_NS}"><text><body><div type="commentary"/></body></text></TEI>')
    with pytest.raises(EpiDocError, match="no edition div") as info:
        strip_edition(root)
    assert info.value.reason.startswith("no edition div")


def test_empty_edition_strips_to_empty_text() -> None:
    assert strip('<lb n="1"/><gap reason="lost" extent="unknown" unit="line"/>') == ""


def test_malformed_xml_is_an_epidoc_error_with_path_and_line(tmp_path: Path) -> None:
    bad = tmp_path / "DDB_EpiDoc_XML" / "p.bad" / "p.bad.1.xml"
    bad.parent.mkdir(parents=True)
    bad.write_text(f'<TEI xmlns="{TEI_NS}"><text><body>\n<div type="edition"><ab>α</div>\n</body></text></TEI>')
    result = read_document(tmp_path, bad)
    assert isinstance(result, EpiDocError)
    assert result.path == "DDB_EpiDoc_XML/p.bad/p.bad.1.xml"
    assert result.reason.startswith("XML syntax error")
    assert "line 2" in result.reason
    assert str(result) == f"{result.path}: {result.reason}"


def test_epidoc_error_is_a_value_error_and_pickles() -> None:
    error = EpiDocError("a/b.xml", "empty edition (no legible text)", code="no_text")
    assert isinstance(error, ValueError)
    clone = pickle.loads(pickle.dumps(error))
    assert (clone.path, clone.reason, clone.code, str(clone)) == (
        error.path,
        error.reason,
        "no_text",
        "a/b.xml: empty edition (no legible text)",
    )


def test_epidoc_error_codes_are_stable_reason_codes() -> None:
    assert all(REASON_CODE.fullmatch(code) for code in REASON_CODES)
    with pytest.raises(ValueError, match="unknown EpiDocError code 'empty edition'"):
        EpiDocError("a/b.xml", "empty edition (no legible text)", code="empty edition")
