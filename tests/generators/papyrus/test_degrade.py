"""Exact-CER degradation: the distance is always k, levels nest, runs repeat, lost lines are accounted."""

from __future__ import annotations

import itertools
import time
import tracemalloc

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from rapidfuzz.distance import Levenshtein

from synth.generators.papyrus.corpus import SAMPLE_ROOT, PapyrusDocument, iter_corpus
from synth.generators.papyrus.degrade import (
    DEFAULT_LEVELS,
    VARIANTS,
    Degradation,
    TooShort,
    degrade_levels,
)
from synth.generators.papyrus.epidoc import GREEK_LETTERS

ALPHABET = set(GREEK_LETTERS) | {" ", "\n"}
WORDS = st.text(alphabet=GREEK_LETTERS, min_size=1, max_size=9)
LINES = st.lists(WORDS, min_size=1, max_size=7).map(" ".join)
TEXTS = st.lists(LINES, min_size=1, max_size=12).map("\n".join)
RAW_TEXTS = st.text(alphabet=GREEK_LETTERS[:6] + " \n", min_size=0, max_size=120)  # doubles, blank lines
LEVELS = st.lists(st.floats(min_value=0.01, max_value=1.0), min_size=1, max_size=6)


@pytest.fixture(scope="module")
def sample_texts() -> dict[str, str]:
    return {d.doc_id: d.text for d in iter_corpus(SAMPLE_ROOT) if isinstance(d, PapyrusDocument)}


def check(text: str, results: list[Degradation | TooShort], levels: list[float] | tuple[float, ...]) -> None:
    """Every result is exact, or a TooShort only where the text is shorter than 1/c."""
    assert [r.cer_target for r in results] == list(levels)
    for result, level in zip(results, levels, strict=True):
        k = round(level * len(text))
        assert result.k == k
        if isinstance(result, TooShort):
            assert level * len(text) < 1, result.reason
            assert result.n_ref == len(text)
            continue
        assert result.edit_distance == k == Levenshtein.distance(text, result.text_noisy)
        assert result.cer_actual == k / len(text)
        assert result.k_line + result.k_char == k and 0 <= result.k_line <= k
        assert set(result.text_noisy) <= ALPHABET
        assert result.attempts >= 1


@pytest.mark.parametrize("variant", VARIANTS)
@settings(max_examples=40, deadline=None)
@given(text=TEXTS, levels=LEVELS, seed=st.integers(0, 2**32), lost=st.sampled_from([0.0, 0.5, 1.0]))
def test_distance_is_exactly_k(variant: str, text: str, levels: list[float], seed: int, lost: float) -> None:
    results = degrade_levels(text, doc_id="doc", variant=variant, seed=seed, levels=levels, lost_lines=lost)
    check(text, results, levels)


@pytest.mark.parametrize("variant", VARIANTS)
@settings(max_examples=30, deadline=None)
@given(text=RAW_TEXTS, seed=st.integers(0, 2**32))
def test_distance_is_exactly_k_on_awkward_texts(variant: str, text: str, seed: int) -> None:
    """Double letters, repeated spaces, blank lines and tiny alphabets (periodic strings) still come out exact."""
    levels = (*DEFAULT_LEVELS, 0.75, 1.0)
    check(text, degrade_levels(text, doc_id="raw", variant=variant, seed=seed, levels=levels), levels)


@pytest.mark.parametrize("variant", VARIANTS)
def test_whole_sample_at_default_levels(variant: str, sample_texts: dict[str, str]) -> None:
    for doc_id, text in sample_texts.items():
        results = degrade_levels(text, doc_id=doc_id, variant=variant, seed=7, lost_lines=0.3)
        check(text, results, DEFAULT_LEVELS)
        assert all(r.attempts == 1 for r in results if isinstance(r, Degradation))


@pytest.mark.parametrize("variant", ["uniform", "confusable", "word"])
def test_levels_nest(variant: str, sample_texts: dict[str, str]) -> None:
    """A lower level's text lies on a shortest edit path to the higher level's: its errors are a subset.

    lev(clean, low) + lev(low, high) == lev(clean, high) holds exactly when the higher level only adds
    edits to the lower one; independent draws would give lev(low, high) close to k_low + k_high.
    """
    levels = [c for c in DEFAULT_LEVELS if c <= 0.3]
    for doc_id, text in sample_texts.items():
        results = degrade_levels(text, doc_id=doc_id, variant=variant, seed=3, levels=levels)
        done = [r for r in results if isinstance(r, Degradation)]
        for low, high in itertools.pairwise(done):
            assert Levenshtein.distance(low.text_noisy, high.text_noisy) == high.k - low.k, (doc_id, high.cer_target)


@pytest.mark.parametrize("variant", VARIANTS)
def test_deterministic_and_independent_of_call_order(variant: str, sample_texts: dict[str, str]) -> None:
    first, second = sample_texts["ddb:p.adl.G2"], sample_texts["dclp:59017"]
    a1 = degrade_levels(first, doc_id="ddb:p.adl.G2", variant=variant, seed=11, lost_lines=0.5)
    b1 = degrade_levels(second, doc_id="dclp:59017", variant=variant, seed=11, lost_lines=0.5)
    b2 = degrade_levels(second, doc_id="dclp:59017", variant=variant, seed=11, lost_lines=0.5)
    a2 = degrade_levels(first, doc_id="ddb:p.adl.G2", variant=variant, seed=11, lost_lines=0.5)
    assert (a1, b1) == (a2, b2)
    # One level asked alone, or the levels reversed, gives the same rows.
    alone = degrade_levels(first, doc_id="ddb:p.adl.G2", variant=variant, seed=11, levels=[0.15], lost_lines=0.5)
    assert alone == [a1[DEFAULT_LEVELS.index(0.15)]]
    backwards = degrade_levels(
        first, doc_id="ddb:p.adl.G2", variant=variant, seed=11, levels=DEFAULT_LEVELS[::-1], lost_lines=0.5
    )
    assert backwards == a1[::-1]


def test_seed_doc_id_variant_and_sample_all_change_the_draw(sample_texts: dict[str, str]) -> None:
    text = sample_texts["ddb:p.adl.G2"]

    def noisy(**overrides: object) -> str:
        arguments: dict = {"doc_id": "d", "variant": "uniform", "seed": 1, "levels": [0.1], "sample": 0}
        result = degrade_levels(text, **(arguments | overrides))[0]
        assert isinstance(result, Degradation)
        return result.text_noisy

    base = noisy()
    assert base == noisy()
    assert len({base, noisy(seed=2), noisy(doc_id="e"), noisy(variant="burst"), noisy(sample=1)}) == 5


def test_too_short_texts() -> None:
    results = degrade_levels("αβγ δε", doc_id="short", variant="uniform", seed=0)  # N = 6
    short = [r for r in results if isinstance(r, TooShort)]
    assert [r.cer_target for r in short] == [c for c in DEFAULT_LEVELS if c * 6 < 1]
    assert all(r.n_ref == 6 and "too short" in r.reason for r in short)
    assert [r.cer_target for r in results if isinstance(r, Degradation)] == [0.2, 0.3, 0.5]
    assert all(isinstance(r, TooShort) and r.k == 0 for r in degrade_levels("", doc_id="e", variant="word", seed=0))


def test_lost_lines_are_accounted_exactly() -> None:
    width = 12
    lines = ["".join(GREEK_LETTERS[(3 * i + j) % 24] for j in range(width)) for i in range(30)]
    text = "\n".join(lines)
    results = degrade_levels(text, doc_id="lines", variant="uniform", seed=5, lost_lines=1.0)
    check(text, results, DEFAULT_LEVELS)
    for result in results:
        assert isinstance(result, Degradation)
        if result.k >= width + 1:  # some line fits the budget, so at least one is lost
            assert result.lost_lines >= 1
        assert result.k_line == result.lost_lines * (width + 1)  # L + 1 per line
        assert result.text_noisy.count("\n") == text.count("\n") - result.lost_lines  # char errors keep newlines
    none = degrade_levels(text, doc_id="lines", variant="uniform", seed=5, lost_lines=0.0)
    assert all(isinstance(r, Degradation) and r.lost_lines == r.k_line == 0 for r in none)


def test_a_single_line_never_loses_its_only_line() -> None:
    text = "αβγδε ζηθικ λμνξο"
    results = degrade_levels(text, doc_id="one", variant="burst", seed=0, lost_lines=1.0)
    done = [r for r in results if isinstance(r, Degradation)]
    assert len(done) == 6  # N = 17: the levels from 0.075 up
    assert all(r.lost_lines == r.k_line == 0 for r in done)


def test_confusable_uses_the_table_and_splits() -> None:
    text = "\n".join(["παπα μεμε τοτο πιμι"] * 20)
    results = degrade_levels(text, doc_id="conf", variant="confusable", seed=2, levels=[0.05, 0.1, 0.2])
    check(text, results, [0.05, 0.1, 0.2])
    noisy = results[-1].text_noisy
    assert isinstance(results[-1], Degradation)
    assert "τι" in noisy.replace("πιμι", "") or "λλ" in noisy  # a split (π→τι, μ→λλ) was drawn
    assert len(noisy) > len(text) - results[-1].k  # substitutions and splits, not deletions


def test_word_variant_moves_spaces(sample_texts: dict[str, str]) -> None:
    text = sample_texts["ddb:p.oxy.1.101"]
    result = degrade_levels(text, doc_id="ddb:p.oxy.1.101", variant="word", seed=0, levels=[0.1])[0]
    uniform = degrade_levels(text, doc_id="ddb:p.oxy.1.101", variant="uniform", seed=0, levels=[0.1])[0]
    assert isinstance(result, Degradation) and isinstance(uniform, Degradation)
    assert _space_edits(text, result.text_noisy) > 2 * _space_edits(text, uniform.text_noisy)


def _space_edits(source: str, target: str) -> int:
    """Count the edits of an optimal alignment that delete, insert or replace a space."""
    count = 0
    for op in Levenshtein.editops(source, target):
        if op.tag == "insert":
            count += target[op.dest_pos] == " "
        elif op.tag == "delete":
            count += source[op.src_pos] == " "
        else:
            count += " " in (source[op.src_pos], target[op.dest_pos])
    return count


def test_burst_errors_cluster(sample_texts: dict[str, str]) -> None:
    """Burst edits sit next to each other far more often than uniform ones (which are never adjacent)."""
    text = sample_texts["ddb:p.oxy.1.105"]

    def adjacent_share(variant: str) -> float:
        result = degrade_levels(text, doc_id="x", variant=variant, seed=0, levels=[0.1])[0]
        assert isinstance(result, Degradation)
        positions = sorted({op.src_pos for op in Levenshtein.editops(text, result.text_noisy)})
        pairs = sum(1 for a, b in itertools.pairwise(positions) if b - a <= 1)
        return pairs / len(positions)

    assert adjacent_share("burst") > 0.4
    assert adjacent_share("uniform") < 0.1


@pytest.mark.parametrize(
    ("arguments", "message"),
    [
        ({"variant": "gaussian"}, "`variant` must be one of"),
        ({"levels": [0.0]}, "each of `levels` must lie in"),
        ({"levels": [1.5]}, "each of `levels` must lie in"),
        ({"lost_lines": 2.0}, "`lost_lines` must lie in"),
        ({"text": "abc"}, "expected Greek letters"),
    ],
)
def test_invalid_arguments(arguments: dict, message: str) -> None:
    call: dict = {"text": "αβγ", "doc_id": "d", "variant": "uniform", "seed": 0} | arguments
    text = call.pop("text")
    with pytest.raises(ValueError, match=message):
        degrade_levels(text, **call)


def test_a_long_text_degrades_in_linear_memory_and_quickly() -> None:
    line = "ετουσ μϛ μεσορη δ εν παθυρε ομολογει πανερευσ γουνσιοσ"
    text = "\n".join([line] * 3600)[:200_000].strip()
    tracemalloc.start()
    started = time.perf_counter()
    try:
        results = degrade_levels(
            text, doc_id="ddb:long", variant="uniform", seed=0, levels=(0.01, 0.05), lost_lines=1.0
        )
        peak = tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()
    elapsed = time.perf_counter() - started
    assert [r.edit_distance for r in results] == [round(0.01 * len(text)), round(0.05 * len(text))]
    # Exact: with a cutoff at k rapidfuzz returns the distance when it is at most k, else k + 1.
    assert all(Levenshtein.distance(text, r.text_noisy, score_cutoff=r.k) == r.k for r in results)
    assert peak < 600 * len(text)  # about 250 bytes a character; a quadratic table would need 10**10 cells
    assert elapsed < 60, f"{elapsed:.1f} s for {len(text):,} characters"
