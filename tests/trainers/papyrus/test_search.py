"""Keyword search for the Papyrus CER study: queries, ground truth, the eight methods, scoring and tuning."""

from __future__ import annotations

import itertools
import json
import re
import sys

import numpy as np
import pytest
from rapidfuzz.distance import Levenshtein

from synth.generators.papyrus.corpus import SAMPLE_ROOT, PapyrusDocument, iter_corpus
from synth.generators.papyrus.degrade import degrade_levels
from synth.trainers.papyrus.search import (
    RANKED_METHODS,
    SEARCH_METHODS,
    SearchCollection,
    SearchScores,
    build_index,
    evaluate_search,
    relevant_documents,
    sample_queries,
    tune,
)
from synth.trainers.papyrus.search_methods import (
    collapse_geminates,
    confusion_pattern,
    fuzzy_budget,
    phonetic_key,
)

CLEAN = {
    "letter": "δημητριοσ ζηνωνι χαιρειν\nκαλωσ ποιησεισ ερρωσο",
    "receipt": "ετουσ ιϛ θωυθ διεγραψεν αργυριου δραχμασ",
    "contract": "ομολογει πανερευσ εχειν παρα ζηνωνοσ αργυριου",
    "list": "πυρου αρταβαι κριθησ αρταβαι",
    "letter2": "απολλωνιοσ ζηνωνι χαιρειν\nερρωσο",
}
FILLERS = {
    "f1": "ετουσ ιϛ θωυθ διεγραψεν",
    "f2": "ομολογει πανερευσ γουνσιοσ",
    "f3": "πυρου αρταβασ δεκα",
    "f4": "αργυριου δραχμασ τεσσαρασ",
    "f5": "επι την εν ερμ τραπεζαν",
}
EXACT_MATCH_METHODS = ("exact", "normalised", "phonetic")
TOLERANT = {"fuzzy": {}, "ngram": {"tau": 0.5}, "regex": {}, "bm25": {}}


@pytest.fixture(scope="module")
def sample_texts() -> dict[str, str]:
    docs = [d for d in iter_corpus(SAMPLE_ROOT) if isinstance(d, PapyrusDocument)]
    return {d.doc_id: d.text for d in docs}


@pytest.fixture(scope="module")
def noisy_texts(sample_texts: dict[str, str]) -> dict[float, dict[str, str]]:
    """The sample degraded (uniform errors) to CER 5 % and 10 %; texts too short for a level stay clean."""
    levels = (0.05, 0.1)
    noisy: dict[float, dict[str, str]] = {level: {} for level in levels}
    for doc_id, text in sample_texts.items():
        results = degrade_levels(text, doc_id=doc_id, variant="uniform", seed=0, levels=levels)
        for level, result in zip(levels, results, strict=True):
            noisy[level][doc_id] = getattr(result, "text_noisy", text)
    return noisy


def test_relevant_documents_needs_the_whole_word() -> None:
    clean = {"a": "ζηνωνι χαιρειν", "b": "χαιρειντεσ", "c": "χαιρειν\nερρωσο"}
    assert relevant_documents("χαιρειν", clean) == {"a", "c"}
    assert relevant_documents("ρειν", clean) == set()


@pytest.mark.parametrize("method", SEARCH_METHODS)
def test_every_method_finds_an_exact_occurrence(method: str) -> None:
    for query in ("χαιρειν", "αργυριου", "ζηνωνι", "ερρωσο"):
        assert build_index(method, CLEAN).search(query) >= relevant_documents(query, CLEAN), query


@pytest.mark.parametrize("method", EXACT_MATCH_METHODS)
def test_exact_match_methods_score_f1_one_on_clean_text(method: str) -> None:
    queries = ["χαιρειν", "αργυριου", "ζηνωνι", "ερρωσο", "αρταβαι"]
    relevant = {query: relevant_documents(query, CLEAN) for query in queries}
    scores = evaluate_search(method, queries, CLEAN, relevant)
    assert (scores.precision, scores.recall, scores.f1) == (1.0, 1.0, 1.0)


@pytest.mark.parametrize("noisy", ["χαρειν", "χαιρεγν"], ids=["deletion", "substitution"])
def test_tolerant_methods_find_a_query_with_one_error(noisy: str) -> None:
    docs = {"target": f"δημητριοσ ζηνωνι {noisy}", **FILLERS}
    assert build_index("exact", docs).search("χαιρειν") == set()
    for method, params in TOLERANT.items():
        assert build_index(method, docs, **params).search("χαιρειν") == {"target"}, method


def test_fuzzy_rejoins_a_word_split_by_a_space() -> None:
    docs = {"split": "δημητριοσ χαι ρειν", **FILLERS}
    assert build_index("fuzzy", docs).search("χαιρειν") == {"split"}


def test_phonetic_collapses_itacism_and_vowel_variants() -> None:
    assert phonetic_key("πολειτησ") == phonetic_key("πολιτισ") == phonetic_key("πολοιτεισ")
    assert phonetic_key("ζηνωνι") == phonetic_key("ζινονι")
    assert phonetic_key("ραβδου") == phonetic_key("ραυδου")
    assert phonetic_key("ουκ") != phonetic_key("ικ")  # ου is its own sound
    docs = {"ei": "τωι πολειτηι", "i": "τωι πολιτηι", "other": "τωι πολεμωι"}
    assert build_index("phonetic", docs).search("πολιτηι") == {"ei", "i"}
    assert build_index("exact", docs).search("πολιτηι") == {"i"}


def _phonetic_reference(text: str) -> str:
    table = {
        "ου": "ου",
        "οι": "ι",
        "ει": "ι",
        "αι": "ε",
        "αυ": "αυ",
        "ευ": "ευ",
        "η": "ι",
        "υ": "ι",
        "ω": "ο",
        "β": "υ",
    }
    return collapse_geminates(re.sub("ου|οι|ει|αι|αυ|ευ|[ηυωβ]", lambda m: table[m.group()], text))


def test_phonetic_key_equals_one_left_to_right_pass() -> None:
    rng = np.random.Generator(np.random.PCG64(3))
    letters = list("αεηιουωβκ ")
    for _ in range(500):
        text = "".join(rng.choice(letters, size=int(rng.integers(1, 14))))
        assert phonetic_key(text) == _phonetic_reference(text), text


def test_normalised_renormalises_the_query_and_collapses_geminates() -> None:
    docs = {"single": "ερωσο", "double": "ερρωσο", "other": "ερωτω"}
    assert build_index("normalised", docs).search("Ἔρρωσο") == {"single", "double"}
    assert collapse_geminates("γραμματα") == "γραματα"


def test_regex_uses_confusion_classes_then_fuzzy_edits() -> None:
    assert confusion_pattern("κμ") == "[κχ][μν]"
    docs = {"confused": "νηνοσ", "wrong": "αηνοσ", "exact": "μηνοσ"}
    assert build_index("regex", docs, max_errors=0).search("μηνοσ") == {"confused", "exact"}
    assert build_index("regex", docs, max_errors=1).search("μηνοσ") == set(docs)


def test_regex_and_fuzzy_prefilters_lose_nothing(
    sample_texts: dict[str, str], noisy_texts: dict[float, dict[str, str]]
) -> None:
    noisy = noisy_texts[0.1]
    words = sorted({word for text in noisy.values() for word in text.split()})
    queries = sample_queries(sample_texts, seed=1, n=15)
    regex_index, fuzzy_index = build_index("regex", noisy), build_index("fuzzy", noisy, alpha=0.2)
    for query in queries:
        pattern = regex_index.compile(query)
        matching = {w for w in words if pattern.fullmatch(w)}
        expected = {d for d, text in noisy.items() if matching & set(text.split())}
        assert regex_index.search(query) == expected, query
        k = fuzzy_budget(query, alpha=0.2)
        expected = set()
        for doc_id, text in noisy.items():
            tokens = text.split()
            tokens += [a + b for a, b in itertools.pairwise(tokens)]
            if any(Levenshtein.distance(query, token) <= k for token in tokens):
                expected.add(doc_id)
        assert fuzzy_index.search(query) == expected, query


def test_bm25_scores_equal_rank_bm25(noisy_texts: dict[float, dict[str, str]]) -> None:
    rank_bm25 = pytest.importorskip("rank_bm25")
    docs = noisy_texts[0.05]
    index = build_index("bm25", docs)

    def grams(word: str) -> list[str]:
        padded = f" {word} "
        return [padded[i : i + n] for n in (3, 4, 5) for i in range(len(padded) - n + 1)]

    reference = rank_bm25.BM25Okapi([[g for word in text.split() for g in grams(word)] for text in docs.values()])
    for query in ("χαιρειν", "αργυριου", "ζηνωνι"):
        assert np.allclose(index.score_matrix([query])[0], reference.get_scores(grams(query)))


def test_bm25_top_r_retrieves_r_documents(sample_texts: dict[str, str]) -> None:
    index = build_index("bm25", sample_texts, top=3)
    assert len(index.search("χαιρειν")) == 3


def test_fuzzy_budget_rounds_half_up() -> None:
    assert [fuzzy_budget("α" * n, alpha=0.25) for n in (2, 5, 6, 10)] == [1, 1, 2, 3]


def test_sample_queries_is_deterministic_and_order_free(sample_texts: dict[str, str]) -> None:
    queries = sample_queries(sample_texts, seed=0, n=20)
    assert queries == sample_queries(dict(reversed(list(sample_texts.items()))), seed=0, n=20)
    assert queries != sample_queries(sample_texts, seed=1, n=20)
    assert queries[:2] == ["χαιρειν", "ερρωσο"]
    assert len(queries) == len(set(queries)) == 20
    for query in queries[2:]:
        df = len(relevant_documents(query, sample_texts))
        assert len(query) >= 5 and 2 <= df <= 0.5 * len(sample_texts)


def test_sample_queries_keeps_formulae_only_when_frequent() -> None:
    clean = {"a": "χαιρειν ερρωσο", "b": "χαιρειν αλλωσ", "c": "χαιρειν αλλωσ"}
    assert sample_queries(clean, seed=0, n=5, max_df_ratio=0.5) == ["χαιρειν"]  # df 3 of 3 still kept
    with pytest.raises(ValueError, match="max_df_ratio"):
        sample_queries(clean, seed=0, max_df_ratio=0.0)


@pytest.mark.parametrize("method", SEARCH_METHODS)
def test_every_method_is_deterministic(
    method: str, sample_texts: dict[str, str], noisy_texts: dict[float, dict[str, str]]
) -> None:
    noisy = noisy_texts[0.1]
    queries = sample_queries(sample_texts, seed=0, n=10)
    first, second = build_index(method, noisy), build_index(method, SearchCollection(noisy))
    assert np.array_equal(first.match(queries), second.match(queries))
    if method in RANKED_METHODS:
        assert np.array_equal(first.score_matrix(queries), second.score_matrix(queries))


def test_evaluate_search_hand_computed() -> None:
    docs = {"a": "χαιρειν", "b": "χαιρειν ερρωσο", "c": "ερρωσο", "d": "αλλο"}
    relevant = {"χαιρειν": {"a", "gone"}, "ερρωσο": {"c"}, "δραχμασ": set(), "ζηνωνι": {"d"}}
    scores = evaluate_search("exact", list(relevant), docs, relevant)
    per_query = {q.query: (q.precision, q.recall, q.f1) for q in scores.queries}
    assert per_query == {
        "χαιρειν": (0.5, 0.5, 0.5),  # retrieved {a, b}; "gone" is relevant but not in the collection
        "ερρωσο": (0.5, 1.0, pytest.approx(2 / 3)),
        "δραχμασ": (1.0, 1.0, 1.0),  # nothing to find, nothing found
        "ζηνωνι": (0.0, 0.0, 0.0),  # something to find, nothing found
    }
    assert scores.precision == pytest.approx(2 / 4)
    assert scores.recall == pytest.approx(2.5 / 4)
    assert scores.f1 == pytest.approx((0.5 + 2 / 3 + 1.0) / 4)
    assert scores.mean_average_precision is None
    assert json.loads(json.dumps(scores.to_dict()))["queries"][0]["n_hits"] == 1


def test_ranked_methods_report_average_precision() -> None:
    docs = {"a": "χαιρειν", "b": "χαιρε", "c": "ερρωσο"}
    scores = evaluate_search("ngram", ["χαιρειν"], docs, {"χαιρειν": {"a", "c"}}, tau=0.6)
    assert isinstance(scores, SearchScores)
    assert scores.queries[0].average_precision == pytest.approx((1 / 1 + 2 / 3) / 2)  # ranks a=1, b=2, c=3
    assert (scores.precision, scores.recall) == (0.5, 0.5)  # a and b pass tau (Dice 1 and 2/3)


def test_tune_uses_clean_dev_texts_only_and_is_deterministic(sample_texts: dict[str, str]) -> None:
    queries = sample_queries(sample_texts, seed=0, n=15)
    relevant = {query: relevant_documents(query, sample_texts) for query in queries}
    for method in ("ngram", "fuzzy"):
        result = tune(method, queries, sample_texts)
        assert result == tune(method, queries, sample_texts)
        for value, f1 in result.f1_by_value:
            expected = evaluate_search(method, queries, sample_texts, relevant, **{result.parameter: value}).f1
            assert f1 == expected
        best = max(f1 for _, f1 in result.f1_by_value)
        assert dict(result.f1_by_value)[result.value] == best
        tolerant_first = next(value for value, f1 in result.f1_by_value if f1 == best)
        assert result.value == tolerant_first
    assert tune("fuzzy", ["χαιρειν"], {"a": "ζηνωνι χαιρειν", "b": "χαιρετε", "c": "ερρωσο"}).params == {"alpha": 0.2}


def test_invalid_arguments_are_refused() -> None:
    with pytest.raises(ValueError, match="unknown search `method`"):
        build_index("soundex", CLEAN)  # type: ignore[arg-type]
    with pytest.raises(ValueError, match="does not take `alpha`"):
        build_index("ngram", CLEAN, alpha=0.2)
    with pytest.raises(ValueError, match="one non-empty word"):
        build_index("exact", CLEAN).search("χαιρειν ερρωσο")
    with pytest.raises(ValueError, match="has no tuned parameter"):
        tune("exact", ["χαιρειν"], CLEAN)
    with pytest.raises(ValueError, match="no entry in `relevant`"):
        evaluate_search("exact", ["χαιρειν"], CLEAN, {})


def test_empty_collection_finds_nothing() -> None:
    for method in SEARCH_METHODS:
        assert build_index(method, {}).search("χαιρειν") == set()


def test_a_missing_optional_package_names_the_method(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setitem(sys.modules, "scipy.sparse", None)
    with pytest.raises(ImportError, match=r"'bm25' search method needs `scipy\.sparse`"):
        build_index("bm25", CLEAN)
