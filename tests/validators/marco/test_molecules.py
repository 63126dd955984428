"""SMILES parsing: a kind and a reason for every invalid molecule, canonical forms, and a fuzz test."""

import pytest

pytest.importorskip("rdkit")

from hypothesis import given, settings
from hypothesis import strategies as st

from synth.validators.marco import INVALID_KINDS, parse_smiles


@pytest.mark.parametrize(
    ("text", "kind", "phrase"),
    [
        ("", "empty", "no SMILES"),
        ("   ", "empty", "no SMILES"),
        ("C1CC", "parse_error", "does not parse"),
        ("c1ccccc", "parse_error", "does not parse"),
        ("CC(C", "parse_error", "does not parse"),
        ("C C", "parse_error", "whitespace"),
        ("C(C)(C)(C)(C)C", "valence", "atom # 0 C, 5"),
        ("C[N+](C)(C)(C)C", "valence", "N, 5"),
        ("c1cccc1", "sanitization", "kekulize"),
        ("CCO.[Na+].[Cl-]", "multi_fragment", "3 disconnected fragments"),
        ("CC*", "dummy_atom", "wildcard"),
        ("C" * 501, "too_long", "501 characters"),
    ],
)
def test_every_invalid_kind_has_a_reason(text, kind, phrase):
    parsed = parse_smiles(text)
    assert not parsed.valid and parsed.canonical is None and parsed.mol is None
    assert parsed.kind == kind
    assert phrase in parsed.reason


def test_equivalent_smiles_share_one_canonical_form():
    forms = {parse_smiles(s).canonical for s in ("OCC", "C(O)C", "[CH3][CH2][OH]", " CCO ")}
    assert forms == {"CCO"}
    assert parse_smiles("C1=CC=CC=C1").canonical == "c1ccccc1"


def test_largest_fragment_policy_keeps_the_biggest_piece():
    parsed = parse_smiles("CCCCO.[Na+].[Cl-]", fragments="largest")
    assert parsed.valid and parsed.canonical == "CCCCO"
    assert parse_smiles("CCCCO.[Na+]").kind == "multi_fragment"


SMILES_ALPHABET = "CNOSPFIBrcnos()[]=#@+-123456789%/\\.*Hl"


def _check(text: str) -> None:
    parsed = parse_smiles(text)
    if parsed.valid:
        assert parsed.kind is None and parsed.reason is None
        again = parse_smiles(parsed.canonical)
        assert again.canonical == parsed.canonical
    else:
        assert parsed.kind in INVALID_KINDS and parsed.reason


@settings(max_examples=300, deadline=None)
@given(st.text(alphabet=SMILES_ALPHABET, max_size=40))
def test_fuzz_smiles_like_strings_never_crash(text):
    _check(text)


@settings(max_examples=200, deadline=None)
@given(st.text(max_size=60))
def test_fuzz_arbitrary_text_never_crashes(text):
    _check(text)


def test_docstring_examples_run():
    import doctest

    from synth.validators.marco import answers, evaluator, feedback, molecules

    for module in (answers, evaluator, feedback, molecules):
        result = doctest.testmod(module)
        assert result.attempted > 0 and result.failed == 0, module.__name__
