"""Keyword search under HTR noise: sample queries from clean texts, search noisy texts, score P/R/F1.

The protocol of the Papyrus CER study (research note §3): queries are tokens of the clean texts with a
mid-range document frequency (plus the letter formulae); a document is relevant when its clean text holds
the query as a word; each method (`SEARCH_METHODS`, see `search_methods`) searches the noisy texts of one
CER level; per-query precision, recall and F1 are macro-averaged. Thresholds are tuned on clean dev texts
only (`tune`), so the tolerance measured at higher CER is not fitted to the noise.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np

from synth.trainers.papyrus.search_methods import (
    RANKED_METHODS,
    SEARCH_METHODS,
    RankedSearchIndex,
    SearchCollection,
    SearchIndex,
    SearchMethod,
    build_index,
)

__all__ = [
    "FORMULAE",
    "RANKED_METHODS",
    "SEARCH_METHODS",
    "TUNING_GRIDS",
    "QueryScores",
    "SearchCollection",
    "SearchIndex",
    "SearchMethod",
    "SearchScores",
    "TuneResult",
    "build_index",
    "evaluate_search",
    "relevant_documents",
    "sample_queries",
    "score_index",
    "tune",
]

#: Epistolary formulae always queried when frequent enough ("greetings", "farewell").
FORMULAE = ("χαιρειν", "ερρωσο")

#: The tuned parameter of each method and its grid, ordered from the most to the least tolerant value.
TUNING_GRIDS: dict[SearchMethod, tuple[str, tuple[float, ...]]] = {
    "ngram": ("tau", tuple(round(0.3 + 0.05 * i, 2) for i in range(14))),
    "fuzzy": ("alpha", (0.4, 0.35, 0.3, 0.25, 0.2, 0.15, 0.1)),
    "bm25": ("tau", tuple(round(0.3 + 0.05 * i, 2) for i in range(14))),
    "embedding": ("tau", tuple(round(0.3 + 0.05 * i, 2) for i in range(14))),
}
_TIE = 1e-12


@dataclass(frozen=True, slots=True)
class QueryScores:
    """Retrieval quality for one query.

    Attributes:
        average_precision: For ranked methods, the mean of precision@rank over the relevant documents
            (documents ranked by score, ties in collection order; relevant documents missing from the
            collection count as never ranked); None for unranked methods.
    """

    query: str
    n_relevant: int
    n_retrieved: int
    n_hits: int
    precision: float
    recall: float
    f1: float
    average_precision: float | None


@dataclass(frozen=True, slots=True)
class SearchScores:
    """Per-query and macro-averaged retrieval quality of one method on one collection."""

    method: SearchMethod
    params: dict[str, float | int | None]
    n_docs: int
    queries: tuple[QueryScores, ...]
    precision: float
    recall: float
    f1: float
    mean_average_precision: float | None

    def to_dict(self) -> dict[str, Any]:
        """Return plain JSON types: the summary, the parameters and one dict per query."""
        return {
            "method": self.method,
            "params": dict(self.params),
            "n_docs": self.n_docs,
            "n_queries": len(self.queries),
            "precision": self.precision,
            "recall": self.recall,
            "f1": self.f1,
            "mean_average_precision": self.mean_average_precision,
            "queries": [
                {
                    "query": q.query,
                    "n_relevant": q.n_relevant,
                    "n_retrieved": q.n_retrieved,
                    "n_hits": q.n_hits,
                    "precision": q.precision,
                    "recall": q.recall,
                    "f1": q.f1,
                    "average_precision": q.average_precision,
                }
                for q in self.queries
            ],
        }


@dataclass(frozen=True, slots=True)
class TuneResult:
    """The parameter value chosen by `tune` and the clean-dev macro-F1 of every grid value."""

    method: SearchMethod
    parameter: str
    value: float
    f1_by_value: tuple[tuple[float, float], ...]

    @property
    def params(self) -> dict[str, float]:
        """The chosen value as keyword arguments for `build_index` / `evaluate_search`."""
        return {self.parameter: self.value}

    def to_dict(self) -> dict[str, Any]:
        """Return plain JSON types."""
        return {
            "method": self.method,
            "parameter": self.parameter,
            "value": self.value,
            "f1_by_value": [[value, f1] for value, f1 in self.f1_by_value],
        }


def sample_queries(
    clean: Mapping[str, str],
    *,
    seed: int,
    n: int = 50,
    min_length: int = 5,
    min_df: int = 2,
    max_df_ratio: float = 0.5,
) -> list[str]:
    """Sample query tokens from clean texts: words of at least `min_length` letters in mid-range document frequency.

    Candidates are the words held by at least `min_df` and at most ``max_df_ratio`` × len(clean) documents.
    The `FORMULAE` come first whenever they occur in at least `min_df` documents (whatever their share);
    the rest is drawn without replacement from the sorted candidates with ``numpy`` ``PCG64(seed)`` and
    returned sorted, so the result depends only on the texts and the arguments.

    Raises:
        ValueError: `n` or `min_df` below 1, or `max_df_ratio` outside (0, 1].

    Example:
        >>> clean = {"a": "δημητριοσ ζηνωνι χαιρειν", "b": "ζηνωνι χαιρειν ερρωσο", "c": "ερρωσο ζηνωνι"}
        >>> sample_queries(clean, seed=0, max_df_ratio=1.0)
        ['χαιρειν', 'ερρωσο', 'ζηνωνι']
    """
    if n < 1 or min_df < 1:
        msg = f"`n` and `min_df` must be ≥ 1, got n={n!r}, min_df={min_df!r}"
        raise ValueError(msg)
    if not 0.0 < max_df_ratio <= 1.0:
        msg = f"`max_df_ratio` must lie in (0, 1], got {max_df_ratio!r}"
        raise ValueError(msg)
    df = Counter(word for text in clean.values() for word in set(text.split()) if len(word) >= min_length)
    formulae = [word for word in FORMULAE if df.get(word, 0) >= min_df][:n]
    max_df = max_df_ratio * len(clean)
    candidates = sorted(word for word, count in df.items() if min_df <= count <= max_df and word not in formulae)
    wanted = n - len(formulae)
    if wanted >= len(candidates):
        return formulae + candidates
    rng = np.random.Generator(np.random.PCG64(seed))
    picked = rng.choice(len(candidates), size=wanted, replace=False)
    return formulae + sorted(candidates[i] for i in picked)


def relevant_documents(query: str, clean: Mapping[str, str]) -> set[str]:
    """Return the ids of the documents whose clean text holds `query` as a whole word.

    Example:
        >>> sorted(relevant_documents("χαιρειν", {"a": "ζηνωνι χαιρειν", "b": "χαιρειντεσ", "c": "χαιρειν"}))
        ['a', 'c']
    """
    return {doc_id for doc_id, text in clean.items() if query in text and query in text.split()}


def evaluate_search(
    method: SearchMethod,
    queries: Sequence[str],
    docs_noisy: Mapping[str, str] | SearchCollection,
    relevant: Mapping[str, set[str]],
    **params: float | int | None,
) -> SearchScores:
    """Build one index over `docs_noisy`, run every query and score it against `relevant`.

    Per query, with retrieved set P and relevant set R: precision = |P∩R|/|P|, recall = |P∩R|/|R|, F1 =
    their harmonic mean. Conventions: an empty R gives recall 1; an empty P gives precision 1 when R is
    empty too and 0 otherwise; F1 is 0 when precision + recall is 0. So a query with nothing to find and
    nothing found scores 1 on all three. Relevant ids absent from `docs_noisy` stay in R (they count as
    misses). The macro averages are plain means over `queries`.

    Args:
        method: One of `SEARCH_METHODS`.
        queries: The query tokens.
        docs_noisy: The collection searched (document id → noisy text), or a `SearchCollection` of it
            shared with other methods.
        relevant: Query → ids of the relevant documents (from the clean texts, `relevant_documents`).
        **params: Passed to `build_index`.

    Raises:
        ValueError: `queries` is empty, a query has no entry in `relevant`, or `build_index` refuses.

    Example:
        >>> docs = {"a": "ζηνωνι χαιρειν", "b": "χαρειν", "c": "ερρωσο"}
        >>> scores = evaluate_search("fuzzy", ["χαιρειν"], docs, {"χαιρειν": {"a", "b"}}, alpha=0.2)
        >>> scores.precision, scores.recall, scores.f1
        (1.0, 1.0, 1.0)
    """
    return score_index(build_index(method, docs_noisy, **params), queries, relevant)


def score_index(index: SearchIndex, queries: Sequence[str], relevant: Mapping[str, set[str]]) -> SearchScores:
    """Score a built index on `queries`; see `evaluate_search` for the conventions."""
    if not queries:
        msg = "`queries` is empty; nothing to evaluate"
        raise ValueError(msg)
    missing = [query for query in queries if query not in relevant]
    if missing:
        msg = f"query {missing[0]!r} has no entry in `relevant`. Hint: build it with `relevant_documents`"
        raise ValueError(msg)
    position = {doc_id: i for i, doc_id in enumerate(index.doc_ids)}
    truth = np.zeros((len(queries), len(index.doc_ids)), dtype=bool)
    for row, query in enumerate(queries):
        truth[row, [position[doc_id] for doc_id in relevant[query] if doc_id in position]] = True
    scores = index.score_matrix(queries) if isinstance(index, RankedSearchIndex) else None
    retrieved = index.match(queries) if scores is None else index.select(scores)
    rows = []
    for row, query in enumerate(queries):
        n_relevant, n_retrieved = len(relevant[query]), int(retrieved[row].sum())
        n_hits = int((retrieved[row] & truth[row]).sum())
        average_precision = None if scores is None else _average_precision(scores[row], truth[row], n_relevant)
        rows.append(_query_scores(query, n_relevant, n_retrieved, n_hits, average_precision))
    ranked = scores is not None
    return SearchScores(
        method=index.method,
        params=index.params,
        n_docs=len(index.doc_ids),
        queries=tuple(rows),
        precision=float(np.mean([q.precision for q in rows])),
        recall=float(np.mean([q.recall for q in rows])),
        f1=float(np.mean([q.f1 for q in rows])),
        mean_average_precision=float(np.mean([q.average_precision for q in rows])) if ranked else None,
    )


def tune(
    method: SearchMethod,
    queries: Sequence[str],
    clean_dev_docs: Mapping[str, str],
    *,
    grid: Sequence[float] | None = None,
    **params: float | int | None,
) -> TuneResult:
    """Pick the parameter value of `method` that maximises macro-F1 on clean dev texts.

    Only clean texts are used: they are both the collection searched and, through `relevant_documents`,
    the ground truth. Ties (equal macro-F1) go to the most tolerant value (lowest ``tau``, highest
    ``alpha``): on clean text every strict enough value scores the same, and the tie-break keeps the
    method as tolerant as clean precision allows.

    Args:
        method: A method with an entry in `TUNING_GRIDS` (ngram, fuzzy, bm25, embedding).
        queries: The query tokens.
        clean_dev_docs: Clean dev texts (document id → text).
        grid: Values to try instead of the default grid.
        **params: Other parameters of the method, held fixed.

    Raises:
        ValueError: `method` has no tuned parameter, `params` sets it, or the grid is empty.

    Example:
        >>> docs = {"a": "ζηνωνι χαιρειν", "b": "χαιρετε", "c": "ερρωσο"}
        >>> tune("fuzzy", ["χαιρειν"], docs).value
        0.2
    """
    if method not in TUNING_GRIDS:
        msg = f"search method {method!r} has no tuned parameter. Hint: tune one of {', '.join(TUNING_GRIDS)}"
        raise ValueError(msg)
    parameter, default_grid = TUNING_GRIDS[method]
    if parameter in params:
        msg = f"`{parameter}` is the tuned parameter of {method!r}; pass its candidates as `grid`"
        raise ValueError(msg)
    values = sorted(default_grid if grid is None else grid, reverse=parameter == "alpha")
    if not values:
        msg = "`grid` is empty"
        raise ValueError(msg)
    relevant = {query: relevant_documents(query, clean_dev_docs) for query in queries}
    collection = SearchCollection(clean_dev_docs)
    f1s = [
        evaluate_search(method, queries, collection, relevant, **params, **{parameter: value}).f1 for value in values
    ]
    best = max(f1s)
    chosen = next(value for value, f1 in zip(values, f1s, strict=True) if f1 >= best - _TIE)
    return TuneResult(method, parameter, chosen, tuple(zip(values, f1s, strict=True)))


def _query_scores(
    query: str, n_relevant: int, n_retrieved: int, n_hits: int, average_precision: float | None
) -> QueryScores:
    recall = n_hits / n_relevant if n_relevant else 1.0
    empty_precision = 1.0 if n_relevant == 0 else 0.0
    precision = n_hits / n_retrieved if n_retrieved else empty_precision
    f1 = 2 * precision * recall / (precision + recall) if precision + recall else 0.0
    return QueryScores(query, n_relevant, n_retrieved, n_hits, precision, recall, f1, average_precision)


def _average_precision(scores: np.ndarray, truth: np.ndarray, n_relevant: int) -> float:
    """Mean of precision@rank at each relevant document, over all `n_relevant` (1.0 when there are none)."""
    if n_relevant == 0:
        return 1.0
    order = np.argsort(-scores, kind="stable")
    hits = truth[order]
    ranks = np.flatnonzero(hits) + 1
    return float(np.sum(np.arange(1, len(ranks) + 1) / ranks) / n_relevant)
