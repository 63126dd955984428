"""The eight keyword-search methods of the Papyrus CER study, each behind one small index interface.

An index is built once per collection (one CER level) and answers many queries. Word-level methods work
on the collection's vocabulary, not on every occurrence: a query is compared with each distinct word once,
and a word's verdict reaches its documents through a (word, document) incidence list. A query is one
token; a document matches when one of its words (for ``fuzzy`` also two adjacent words written together)
satisfies the method's rule:

=============  ========================================================================================
exact          the word equals the query
normalised     equality after re-normalising both sides (`normalise_greek`) and collapsing geminates
phonetic       equality of itacism keys (`phonetic_key`): ει,η,ι,υ,οι→ι; ω→ο; αι→ε; β→υ; no geminates
ngram          Dice of padded character 3-gram sets ≥ ``tau``
fuzzy          Levenshtein distance ≤ k, k = max(1, round(``alpha`` · len(query)))
regex          each letter matches its visual-confusion class, plus at most ``max_errors`` fuzzy edits
bm25           BM25Okapi over padded character 3-5-grams; score ≥ ``tau`` · best score, or the top ``top``
embedding      cosine of subword-hashing word vectors ≥ ``tau`` (best word of the document)
=============  ========================================================================================

To run several methods on one collection, build a `SearchCollection` once and pass it to `build_index`
for each method: the vocabulary and incidence lists are then shared.
"""

from __future__ import annotations

import functools
import importlib
import inspect
import itertools
import math
import re
from abc import ABC, abstractmethod
from collections.abc import Iterable, Mapping, Sequence
from types import ModuleType
from typing import TYPE_CHECKING, ClassVar, Literal

import numpy as np
from rapidfuzz.distance import Levenshtein
from rapidfuzz.process import cdist

from synth.generators.papyrus.degrade import CONFUSION_GROUPS
from synth.generators.papyrus.epidoc import GREEK_LETTERS, normalise_greek

if TYPE_CHECKING:
    import regex

__all__ = [
    "RANKED_METHODS",
    "SEARCH_METHODS",
    "RankedSearchIndex",
    "SearchCollection",
    "SearchIndex",
    "SearchMethod",
    "build_index",
    "collapse_geminates",
    "confusion_pattern",
    "fuzzy_budget",
    "phonetic_key",
]

SearchMethod = Literal["exact", "normalised", "phonetic", "ngram", "fuzzy", "regex", "bm25", "embedding"]
SEARCH_METHODS: tuple[SearchMethod, ...] = (
    "exact",
    "normalised",
    "phonetic",
    "ngram",
    "fuzzy",
    "regex",
    "bm25",
    "embedding",
)
#: Methods whose index also gives every document a score (`RankedSearchIndex.scores`).
RANKED_METHODS: tuple[SearchMethod, ...] = ("ngram", "bm25", "embedding")

_GEMINATE = re.compile(r"(\S)\1+")
_OUTSIDE_ALPHABET = re.compile(f"[^{GREEK_LETTERS} \n]")
# Digraphs become private-use marks first (they never overlap: no digraph starts with ι or υ), then one
# translate pass maps the marks and the single letters, so no output is mapped twice.
_PHONETIC_DIGRAPHS = {"ου": "\ue000", "αυ": "\ue001", "ευ": "\ue002", "οι": "\ue003", "ει": "\ue003", "αι": "\ue004"}
_PHONETIC_TABLE = str.maketrans(
    {"\ue000": "ου", "\ue001": "αυ", "\ue002": "ευ", "\ue003": "ι", "\ue004": "ε"}
    | {"η": "ι", "υ": "ι", "ω": "ο", "β": "υ"}
)

_SCIPY_HINT = "pip install 'synth[train]' (scikit-learn brings scipy)"
_QUERY_CHUNK = 16  # queries scored at once: bounds the (queries × vocabulary) arrays

# Character codes for vectorised n-grams: 0 separates tokens, 1 is the word boundary, letters follow.
_CODE_BITS = 5
_SEPARATOR, _BOUNDARY, _OTHER = 0, 1, (1 << _CODE_BITS) - 1
_CODE_TABLE = np.full(0x400, _OTHER, dtype=np.int64)
_CODE_TABLE[0] = _SEPARATOR
_CODE_TABLE[ord(" ")] = _BOUNDARY
for _index, _letter in enumerate(GREEK_LETTERS):
    _CODE_TABLE[ord(_letter)] = _index + 2


def collapse_geminates(text: str) -> str:
    """Write every run of a repeated letter once (``ερρωσο`` → ``ερωσο``); spaces and newlines stay.

    Example:
        >>> collapse_geminates("ερρωσο γραμματα")
        'ερωσο γραματα'
    """
    return _GEMINATE.sub(r"\1", text)


def phonetic_key(text: str) -> str:
    """Map a normalised text to its itacism key, word by word.

    Scanning left to right, ``ει``, ``οι``, ``η`` and ``υ`` become ``ι``, ``αι`` becomes ``ε``, ``ω``
    becomes ``ο`` and ``β`` becomes ``υ``; ``ου``, ``αυ`` and ``ευ`` are kept as units (their ``υ`` is not
    the vowel ``υ``, so the spellings ``αβ``/``αυ`` meet). Geminates are then collapsed.

    Example:
        >>> phonetic_key("χαιρειν χερην ραβδου ραυδου")
        'χεριν χεριν ραυδου ραυδου'
    """
    for digraph, mark in _PHONETIC_DIGRAPHS.items():
        text = text.replace(digraph, mark)
    return collapse_geminates(text.translate(_PHONETIC_TABLE))


def confusion_pattern(query: str) -> str:
    """Return a regex where each letter of `query` is the class of letters it is confused with.

    The classes come from `CONFUSION_GROUPS`; a letter in two groups (``ο``) gets their union.

    Example:
        >>> confusion_pattern("μηνοσ")
        '[μν][ηνι][νηιμ][οεθσω][σεθο]'
    """
    return "".join(_confusion_class(char) for char in query)


def fuzzy_budget(query: str, *, alpha: float) -> int:
    """Return the edit budget k = max(1, round(alpha · len(query))), rounded half up.

    Example:
        >>> fuzzy_budget("χαιρειν", alpha=0.2), fuzzy_budget("ερρωσο", alpha=0.25)
        (1, 2)
    """
    return max(1, math.floor(alpha * len(query) + 0.5))


@functools.cache
def _confusion_class(char: str) -> str:
    members = [char]
    for group in CONFUSION_GROUPS:
        if char in group:
            members.extend(other for other in group if other not in members)
    if len(members) == 1:
        return re.escape(char)
    return "[" + "".join(members) + "]"


@functools.cache
def _component_table() -> dict[int, str]:
    """Map each letter to one representative of its connected confusion component (``ο`` joins εθοσ and οω)."""
    components: list[set[str]] = []
    for group in CONFUSION_GROUPS:
        merged = set(group)
        for component in [c for c in components if c & merged]:
            merged |= component
            components.remove(component)
        components.append(merged)
    return str.maketrans({letter: min(component) for component in components for letter in component})


def _renormalise(text: str) -> str:
    """`normalise_greek`, skipped for text that is already letters, spaces and newlines only."""
    return text if _OUTSIDE_ALPHABET.search(text) is None else normalise_greek(text)


def _check_queries(queries: Sequence[str]) -> list[str]:
    queries = list(queries)
    for query in queries:
        if not isinstance(query, str) or not query or len(query.split()) != 1 or query != query.strip():
            msg = f"a query must be one non-empty word without spaces, got {query!r}"
            raise ValueError(msg)
    return queries


def _char_ngrams(tokens: Sequence[str], sizes: Iterable[int]) -> tuple[np.ndarray, np.ndarray]:
    """Return (token index, n-gram id) for every character n-gram of every token padded with spaces.

    Ids are exact (5 bits per character, offset by size), so equal ids mean equal n-grams of equal size.
    Every token has at least one n-gram of each size up to its length + 2.
    """
    if not tokens:
        return np.zeros(0, dtype=np.int64), np.zeros(0, dtype=np.int64)
    flat = "\0".join(f" {token} " for token in tokens)
    points = np.frombuffer(flat.encode("utf-32-le"), dtype=np.uint32)
    codes = np.where(points < len(_CODE_TABLE), _CODE_TABLE[np.minimum(points, len(_CODE_TABLE) - 1)], _OTHER)
    lengths = np.fromiter(map(len, tokens), dtype=np.int64, count=len(tokens)) + 3
    owner = np.repeat(np.arange(len(tokens), dtype=np.int64), lengths)[: len(codes)]
    zeros = np.concatenate([[0], np.cumsum(codes == _SEPARATOR)])
    owners, ids = [], []
    offset = 0
    for size in sorted(set(sizes)):
        count = len(codes) - size + 1
        if count > 0:
            gram = np.zeros(count, dtype=np.int64)
            for shift in range(size):
                gram = (gram << _CODE_BITS) | codes[shift : shift + count]
            valid = (zeros[size:] - zeros[:count]) == 0
            owners.append(owner[:count][valid])
            ids.append(gram[valid] + offset)
        offset += 1 << (_CODE_BITS * size)
    return np.concatenate(owners), np.concatenate(ids)


def _ranges(starts: np.ndarray, ends: np.ndarray) -> np.ndarray:
    """Concatenate ``arange(s, e)`` for each pair, vectorised."""
    lengths = ends - starts
    shifts = np.repeat(starts - np.cumsum(lengths) + lengths, lengths)
    return shifts + np.arange(int(lengths.sum()))


class _Lexicon:
    """Distinct tokens and their (document, token) incidences with counts, sorted by document.

    Built from token occurrences: ``occurrence_doc[i]`` holds token ``occurrence_token[i]``, in text order.
    `index` (token → id) is set only when the tokens are distinct.
    """

    def __init__(
        self,
        tokens: list[str],
        occurrence_doc: np.ndarray,
        occurrence_token: np.ndarray,
        *,
        n_docs: int,
        index: dict[str, int] | None = None,
    ) -> None:
        self.tokens, self.n_docs, self.index = tokens, n_docs, index
        self.occurrence_doc, self.occurrence_token = occurrence_doc, occurrence_token
        n_tokens = max(1, len(tokens))
        keys, self.pair_count = np.unique(occurrence_doc * n_tokens + occurrence_token, return_counts=True)
        self.pair_doc, self.pair_token = keys // n_tokens, keys % n_tokens
        per_doc = np.bincount(self.pair_doc, minlength=n_docs)
        self.doc_rows = np.flatnonzero(per_doc)
        self.doc_starts = (np.cumsum(per_doc) - per_doc)[self.doc_rows]

    @classmethod
    def from_token_lists(cls, token_lists: Sequence[list[str]]) -> _Lexicon:
        """Number the distinct tokens in first-seen order."""
        flat = list(itertools.chain.from_iterable(token_lists))
        index = {token: i for i, token in enumerate(dict.fromkeys(flat))}
        ids = np.fromiter(map(index.__getitem__, flat), dtype=np.int64, count=len(flat))
        lengths = np.fromiter(map(len, token_lists), dtype=np.int64, count=len(token_lists))
        docs = np.repeat(np.arange(len(token_lists), dtype=np.int64), lengths)
        return cls(list(index), docs, ids, n_docs=len(token_lists), index=index)

    def with_joined_pairs(self) -> _Lexicon:
        """The tokens plus each pair of adjacent occurrences (in one document) written together.

        A joined pair may equal an existing token; it is then listed twice, which no search method minds.
        """
        n_tokens = len(self.tokens)
        same_doc = self.occurrence_doc[1:] == self.occurrence_doc[:-1]
        keys = (self.occurrence_token[:-1] * n_tokens + self.occurrence_token[1:])[same_doc]
        pairs, inverse = np.unique(keys, return_inverse=True)
        joined = [self.tokens[key // n_tokens] + self.tokens[key % n_tokens] for key in pairs.tolist()]
        docs = np.concatenate([self.occurrence_doc, self.occurrence_doc[1:][same_doc]])
        ids = np.concatenate([self.occurrence_token, n_tokens + inverse])
        return _Lexicon(self.tokens + joined, docs, ids, n_docs=self.n_docs)

    @functools.cached_property
    def _by_token(self) -> tuple[np.ndarray, np.ndarray]:
        order = np.argsort(self.pair_token, kind="stable")
        return self.pair_doc[order], np.searchsorted(self.pair_token[order], np.arange(len(self.tokens) + 1))

    def docs_of(self, token_ids: np.ndarray) -> np.ndarray:
        """Return the documents (indices, possibly repeated) that hold any of `token_ids`."""
        docs, starts = self._by_token
        token_ids = np.asarray(token_ids, dtype=np.int64)
        return docs[_ranges(starts[token_ids], starts[token_ids + 1])]

    def doc_max(self, token_values: np.ndarray, *, fill: float) -> np.ndarray:
        """Reduce a (queries, tokens) array to (queries, documents): the maximum over each document's tokens."""
        out = np.full((token_values.shape[0], self.n_docs), fill, dtype=token_values.dtype)
        if len(self.pair_token):
            out[:, self.doc_rows] = np.maximum.reduceat(token_values[:, self.pair_token], self.doc_starts, axis=1)
        return out

    def by_length(self) -> tuple[np.ndarray, list[str], np.ndarray]:
        """Return token ids sorted by length, the tokens in that order, and ``bounds[n]`` = first of length ≥ n."""
        lengths = np.fromiter(map(len, self.tokens), dtype=np.int64, count=len(self.tokens))
        order = np.argsort(lengths, kind="stable")
        bounds = np.searchsorted(lengths[order], np.arange(int(lengths.max(initial=0)) + 2))
        return order, [self.tokens[i] for i in order], bounds


class SearchCollection:
    """Documents prepared once for any number of search methods: ids, texts and (lazily) vocabularies.

    Example:
        >>> collection = SearchCollection({"a": "ζηνωνι χαιρειν", "b": "χαιρειν"})
        >>> collection.words.tokens
        ['ζηνωνι', 'χαιρειν']
    """

    def __init__(self, docs: Mapping[str, str]) -> None:
        self.doc_ids: tuple[str, ...] = tuple(docs)
        self.texts: tuple[str, ...] = tuple(docs.values())

    @functools.cached_property
    def words(self) -> _Lexicon:
        """The whitespace-separated words."""
        return _Lexicon.from_token_lists([text.split() for text in self.texts])

    @functools.cached_property
    def joined(self) -> _Lexicon:
        """The words plus each pair of adjacent words written together."""
        return self.words.with_joined_pairs()

    @functools.cached_property
    def renormalised(self) -> SearchCollection:
        """The collection after `normalise_greek` (itself when every text is already normalised)."""
        texts = [_renormalise(text) for text in self.texts]
        if all(new is old for new, old in zip(texts, self.texts, strict=True)):
            return self
        return SearchCollection(dict(zip(self.doc_ids, texts, strict=True)))


class SearchIndex(ABC):
    """A keyword index over one collection: build once, then `search` (or `match`) any number of queries.

    Subclasses implement `_match`, the boolean (queries × documents) answer for a batch of checked queries.
    """

    method: ClassVar[SearchMethod]

    def __init__(self, collection: SearchCollection) -> None:
        self.doc_ids = collection.doc_ids

    @property
    def params(self) -> dict[str, float | int | None]:
        """The method's parameters, as given to `build_index`."""
        return {}

    @abstractmethod
    def _match(self, queries: list[str]) -> np.ndarray: ...

    def match(self, queries: Sequence[str]) -> np.ndarray:
        """Return a boolean array of shape (len(queries), len(doc_ids)): True where the document matches.

        Raises:
            ValueError: A query is empty or holds whitespace.
        """
        return self._match(_check_queries(queries))

    def search(self, query: str) -> set[str]:
        """Return the ids of the documents that match `query`."""
        return self.search_many([query])[0]

    def search_many(self, queries: Sequence[str]) -> list[set[str]]:
        """Return, per query, the ids of the matching documents (one vectorised pass)."""
        return [{self.doc_ids[i] for i in np.flatnonzero(row)} for row in self.match(queries)]


class RankedSearchIndex(SearchIndex):
    """An index that scores every document; a document matches when `select` accepts its score."""

    @abstractmethod
    def _score_matrix(self, queries: list[str]) -> np.ndarray: ...

    @abstractmethod
    def select(self, scores: np.ndarray) -> np.ndarray:
        """Turn a `score_matrix` into the boolean `match` answer."""

    def score_matrix(self, queries: Sequence[str]) -> np.ndarray:
        """Return float scores of shape (len(queries), len(doc_ids)); higher is a better match."""
        queries = _check_queries(queries)
        chunks = [self._score_matrix(queries[i : i + _QUERY_CHUNK]) for i in range(0, len(queries), _QUERY_CHUNK)]
        return np.concatenate(chunks) if chunks else np.zeros((0, len(self.doc_ids)))

    def _match(self, queries: list[str]) -> np.ndarray:
        return self.select(self.score_matrix(queries))

    def scores(self, query: str) -> dict[str, float]:
        """Return the score of every document for `query`."""
        return dict(zip(self.doc_ids, self.score_matrix([query])[0].tolist(), strict=True))


class _KeySearchIndex(SearchIndex):
    """Word equality after mapping the vocabulary and the query through the same key function."""

    renormalise: ClassVar[bool] = True

    def __init__(self, collection: SearchCollection) -> None:
        super().__init__(collection)
        self._lexicon = lexicon = (collection.renormalised if self.renormalise else collection).words
        if self.renormalise:
            keys = self.key("\n".join(lexicon.tokens)).split("\n") if lexicon.tokens else []
            self._keys = {key: i for i, key in enumerate(dict.fromkeys(keys))}
            token_key = np.fromiter(map(self._keys.__getitem__, keys), dtype=np.int64, count=len(keys))
        else:  # each word is its own key
            self._keys = lexicon.index or {}
            token_key = np.arange(len(lexicon.tokens))
        self._token_order = np.argsort(token_key, kind="stable")
        self._key_bounds = np.searchsorted(token_key[self._token_order], np.arange(len(self._keys) + 1))

    @staticmethod
    @abstractmethod
    def key(text: str) -> str:
        """Map a text (or a query) to the form compared word by word; never joins or drops lines."""

    def _match(self, queries: list[str]) -> np.ndarray:
        out = np.zeros((len(queries), len(self.doc_ids)), dtype=bool)
        for row, query in enumerate(queries):
            key = self._keys.get(self.key(_renormalise(query) if self.renormalise else query))
            if key is not None:
                tokens = self._token_order[self._key_bounds[key] : self._key_bounds[key + 1]]
                out[row, self._lexicon.docs_of(tokens)] = True
        return out


class ExactSearchIndex(_KeySearchIndex):
    """Documents holding the query as a word, letter for letter."""

    method = "exact"
    renormalise = False

    @staticmethod
    def key(text: str) -> str:
        return text


class NormalisedSearchIndex(_KeySearchIndex):
    """Word equality after `normalise_greek` on both sides and `collapse_geminates`."""

    method = "normalised"

    @staticmethod
    def key(text: str) -> str:
        return collapse_geminates(text)


class PhoneticSearchIndex(_KeySearchIndex):
    """Word equality of itacism keys (`phonetic_key`) after re-normalising both sides."""

    method = "phonetic"

    @staticmethod
    def key(text: str) -> str:
        return phonetic_key(text)


class NgramSearchIndex(RankedSearchIndex):
    """Dice coefficient of padded character 3-gram sets between the query and a word; a document scores its best word.

    Args:
        collection: The documents.
        tau: The Dice threshold in [0, 1].
    """

    method = "ngram"
    _SIZES = (3,)

    def __init__(self, collection: SearchCollection, *, tau: float = 0.7) -> None:
        super().__init__(collection)
        self.tau = _check_unit("tau", tau)
        self._lexicon = collection.words
        n_tokens = max(1, len(self._lexicon.tokens))
        owner, grams = _char_ngrams(self._lexicon.tokens, self._SIZES)
        pairs = _unique(grams * n_tokens + owner)  # distinct (n-gram, token), sorted by n-gram
        self._gram, self._owner = pairs // n_tokens, pairs % n_tokens
        self._sizes = np.bincount(self._owner, minlength=len(self._lexicon.tokens))

    @property
    def params(self) -> dict[str, float | int | None]:
        return {"tau": self.tau}

    def _score_matrix(self, queries: list[str]) -> np.ndarray:
        dice = np.zeros((len(queries), len(self._lexicon.tokens)))
        for row, query in enumerate(queries):
            grams = _unique(_char_ngrams([query], self._SIZES)[1])
            lo, hi = np.searchsorted(self._gram, grams, side="left"), np.searchsorted(self._gram, grams, side="right")
            overlap = np.bincount(self._owner[_ranges(lo, hi)], minlength=len(self._lexicon.tokens))
            dice[row] = 2.0 * overlap / (len(grams) + self._sizes)
        return self._lexicon.doc_max(dice, fill=0.0)

    def select(self, scores: np.ndarray) -> np.ndarray:
        return scores >= self.tau


class FuzzySearchIndex(SearchIndex):
    """Levenshtein distance ≤ k between the query and a word, or two adjacent words written together.

    The joined pairs catch a word split by a spurious space. k = `fuzzy_budget` (max(1, round(α·len q))).

    Args:
        collection: The documents.
        alpha: The budget per query letter, ≥ 0.
    """

    method = "fuzzy"

    def __init__(self, collection: SearchCollection, *, alpha: float = 0.2) -> None:
        super().__init__(collection)
        if not alpha >= 0:
            msg = f"`alpha` must be ≥ 0, got {alpha!r}"
            raise ValueError(msg)
        self.alpha = alpha
        self._lexicon = collection.joined
        self._order, self._sorted, self._bounds = self._lexicon.by_length()

    @property
    def params(self) -> dict[str, float | int | None]:
        return {"alpha": self.alpha}

    def _match(self, queries: list[str]) -> np.ndarray:
        out = np.zeros((len(queries), len(self.doc_ids)), dtype=bool)
        keys = [(len(query), fuzzy_budget(query, alpha=self.alpha)) for query in queries]
        for (length, k), rows in _group_rows(keys).items():
            lo, hi = _length_slice(self._bounds, length - k, length + k)
            if hi > lo:
                group = [queries[row] for row in rows]
                distance = cdist(group, self._sorted[lo:hi], scorer=Levenshtein.distance, score_cutoff=k)
                for row, within in zip(rows, distance <= k, strict=True):
                    out[row, self._lexicon.docs_of(self._order[lo:hi][within])] = True
        return out


class RegexSearchIndex(SearchIndex):
    """A whole-word regex per query: confusion classes per letter (`confusion_pattern`), ``{e<=k}`` fuzziness.

    Words are first narrowed with rapidfuzz: a match needs Levenshtein ≤ k once every letter is replaced by
    its confusion component, so only those few words meet the (slow) fuzzy regex.

    Args:
        collection: The documents.
        max_errors: Insertions, deletions or substitutions allowed beyond the confusion classes (k ≥ 0).
    """

    method = "regex"

    def __init__(self, collection: SearchCollection, *, max_errors: int = 1) -> None:
        super().__init__(collection)
        if isinstance(max_errors, bool) or not isinstance(max_errors, int) or max_errors < 0:
            msg = f"`max_errors` must be an integer ≥ 0, got {max_errors!r}"
            raise ValueError(msg)
        self.max_errors = max_errors
        self._regex = _import_optional("regex", method=self.method, hint="pip install regex")
        self._lexicon = collection.words
        self._order, self._sorted, self._bounds = self._lexicon.by_length()
        self._coarse = "\n".join(self._sorted).translate(_component_table()).split("\n") if self._sorted else []

    @property
    def params(self) -> dict[str, float | int | None]:
        return {"max_errors": self.max_errors}

    def compile(self, query: str) -> regex.Pattern[str]:
        """Compile the word pattern for `query`: ``(?:classes){e<=k}``, or the classes alone when k = 0."""
        body = confusion_pattern(query)
        return self._regex.compile(f"(?:{body}){{e<={self.max_errors}}}" if self.max_errors else body)

    def _match(self, queries: list[str]) -> np.ndarray:
        out = np.zeros((len(queries), len(self.doc_ids)), dtype=bool)
        k = self.max_errors
        for length, rows in _group_rows([len(query) for query in queries]).items():
            lo, hi = _length_slice(self._bounds, length - k, length + k)
            if hi <= lo:
                continue
            coarse = [queries[row].translate(_component_table()) for row in rows]
            distance = cdist(coarse, self._coarse[lo:hi], scorer=Levenshtein.distance, score_cutoff=k)
            for row, within in zip(rows, distance <= k, strict=True):
                pattern = self.compile(queries[row])
                hits = [lo + i for i in np.flatnonzero(within) if pattern.fullmatch(self._sorted[lo + i])]
                out[row, self._lexicon.docs_of(self._order[hits])] = True
        return out


class BM25SearchIndex(RankedSearchIndex):
    """BM25Okapi (as in `rank_bm25`: idf floored at ε · mean idf) over the padded character 3-5-grams of words.

    Each word occurrence contributes its n-grams; the term-document counts are one sparse product, so
    scoring a batch of queries is a few array operations. A document is retrieved when its score is
    positive and at least ``tau`` × the best score for the query, or, when `top` is set, when it is among
    the `top` best (ties in collection order).

    Args:
        collection: The documents.
        tau: The share of the best score a document needs, in [0, 1]; ignored when `top` is set.
        top: Retrieve a fixed number R ≥ 1 of documents instead.
        k1: Term-frequency saturation.
        b: Length normalisation.
        epsilon: The idf floor, as a share of the mean idf.
    """

    method = "bm25"
    _SIZES = (3, 4, 5)

    def __init__(
        self,
        collection: SearchCollection,
        *,
        tau: float = 0.5,
        top: int | None = None,
        k1: float = 1.5,
        b: float = 0.75,
        epsilon: float = 0.25,
    ) -> None:
        sparse = _import_optional("scipy.sparse", method=self.method, hint=_SCIPY_HINT)
        super().__init__(collection)
        self.tau = _check_unit("tau", tau)
        if top is not None and (isinstance(top, bool) or not isinstance(top, int) or top < 1):
            msg = f"`top` must be None or an integer ≥ 1, got {top!r}"
            raise ValueError(msg)
        self.top, self.k1, self.b, self.epsilon = top, k1, b, epsilon
        lexicon = collection.words
        owner, grams = _char_ngrams(lexicon.tokens, self._SIZES)
        self._grams, columns = np.unique(grams, return_inverse=True)
        shape = (len(lexicon.tokens), len(self._grams))
        token_grams = sparse.csr_matrix((np.ones(len(owner)), (owner, columns)), shape=shape)
        doc_tokens = sparse.csr_matrix(
            (lexicon.pair_count.astype(np.float64), (lexicon.pair_doc, lexicon.pair_token)),
            shape=(lexicon.n_docs, len(lexicon.tokens)),
        )
        self._tf = (doc_tokens @ token_grams).tocsc()
        doc_length = np.asarray(self._tf.sum(axis=1)).ravel()
        mean_length = doc_length.mean() if len(doc_length) else 0.0
        self._norm = k1 * (1 - b + b * doc_length / mean_length) if mean_length > 0 else np.ones_like(doc_length)
        n_with = np.diff(self._tf.indptr)
        idf = np.log(lexicon.n_docs - n_with + 0.5) - np.log(n_with + 0.5)
        self._idf = np.where(idf < 0, epsilon * idf.mean(), idf) if len(idf) else idf

    @property
    def params(self) -> dict[str, float | int | None]:
        return {"tau": self.tau, "top": self.top, "k1": self.k1, "b": self.b, "epsilon": self.epsilon}

    def _score_matrix(self, queries: list[str]) -> np.ndarray:
        if not len(self._grams):
            return np.zeros((len(queries), len(self.doc_ids)))
        owner, grams = _char_ngrams(queries, self._SIZES)
        column = np.searchsorted(self._grams, grams)
        known = (column < len(self._grams)) & (self._grams[np.minimum(column, len(self._grams) - 1)] == grams)
        owner, column = owner[known], column[known]
        used, local = np.unique(column, return_inverse=True)
        weights = np.zeros((len(used), len(queries)))
        np.add.at(weights, (local, owner), 1.0)  # query n-grams count with multiplicity, as in rank_bm25
        tf = self._tf[:, used].toarray()
        terms = self._idf[used] * tf * (self.k1 + 1) / (tf + self._norm[:, None])
        return (terms @ weights).T

    def select(self, scores: np.ndarray) -> np.ndarray:
        positive = scores > 0
        if self.top is not None:
            chosen = np.zeros_like(positive)
            np.put_along_axis(chosen, np.argsort(-scores, axis=1, kind="stable")[:, : self.top], True, axis=1)
            return chosen & positive
        return positive & (scores >= self.tau * scores.max(axis=1, initial=0.0)[:, None])


class EmbeddingSearchIndex(RankedSearchIndex):
    """Cosine between subword-hashing word vectors; a document scores its best word.

    A word vector is the normalised sum of the vectors of its padded character 2-4-grams, each n-gram
    hashed to one of `buckets` rows of a fixed Gaussian projection drawn from ``PCG64(seed)``: fastText's
    subword model without training.

    Args:
        collection: The documents.
        tau: The cosine threshold in [0, 1].
        dim: Vector dimension.
        buckets: Hash buckets (rows of the projection).
        seed: Seed of the projection.
    """

    method = "embedding"
    _SIZES = (2, 3, 4)

    def __init__(
        self, collection: SearchCollection, *, tau: float = 0.8, dim: int = 128, buckets: int = 1 << 16, seed: int = 0
    ) -> None:
        super().__init__(collection)
        self.tau = _check_unit("tau", tau)
        for name, value in (("dim", dim), ("buckets", buckets)):
            if isinstance(value, bool) or not isinstance(value, int) or value < 1:
                msg = f"`{name}` must be an integer ≥ 1, got {value!r}"
                raise ValueError(msg)
        self.dim, self.buckets, self.seed = dim, buckets, seed
        self._sparse = _import_optional("scipy.sparse", method=self.method, hint=_SCIPY_HINT)
        self._lexicon = collection.words
        self._vectors = self.embed(self._lexicon.tokens)

    @property
    def params(self) -> dict[str, float | int | None]:
        return {"tau": self.tau, "dim": self.dim, "buckets": self.buckets, "seed": self.seed}

    def embed(self, tokens: Sequence[str]) -> np.ndarray:
        """Return the unit vectors of `tokens`, shape (len(tokens), dim), float32."""
        owner, grams = _char_ngrams(tokens, self._SIZES)
        counts = self._sparse.csr_matrix(
            (np.ones(len(owner), dtype=np.float32), (owner, _bucket(grams, self.buckets))),
            shape=(len(tokens), self.buckets),
        )
        vectors = np.asarray(counts @ _projection(self.seed, self.buckets, self.dim), dtype=np.float32)
        norms = np.linalg.norm(vectors, axis=1, keepdims=True)
        return vectors / np.where(norms > 0, norms, 1.0)

    def _score_matrix(self, queries: list[str]) -> np.ndarray:
        cosine = self.embed(queries) @ self._vectors.T
        return self._lexicon.doc_max(cosine, fill=-1.0).astype(np.float64)

    def select(self, scores: np.ndarray) -> np.ndarray:
        return scores >= self.tau


@functools.lru_cache(maxsize=4)
def _projection(seed: int, buckets: int, dim: int) -> np.ndarray:
    """The fixed random projection: one standard-normal row per hash bucket."""
    projection = np.random.Generator(np.random.PCG64(seed)).standard_normal((buckets, dim), dtype=np.float32)
    projection.flags.writeable = False  # shared by every index with these settings
    return projection


def _bucket(grams: np.ndarray, buckets: int) -> np.ndarray:
    """Hash exact n-gram ids to buckets (Fibonacci multiply and xorshift on 64 bits, then modulo)."""
    mixed = grams.astype(np.uint64) * np.uint64(0x9E3779B97F4A7C15)
    mixed ^= mixed >> np.uint64(29)
    return (mixed % np.uint64(buckets)).astype(np.int64)


def _group_rows(keys: Sequence[object]) -> dict[object, list[int]]:
    """Group row numbers by key, in first-seen order."""
    groups: dict[object, list[int]] = {}
    for row, key in enumerate(keys):
        groups.setdefault(key, []).append(row)
    return groups


def _unique(values: np.ndarray) -> np.ndarray:
    """Sorted distinct values (sort-based; plain ``np.unique`` is far slower on large int arrays in numpy 2.4)."""
    ordered = np.sort(values)
    return ordered[np.concatenate([[True], ordered[1:] != ordered[:-1]])] if len(ordered) else ordered


def _length_slice(bounds: np.ndarray, shortest: int, longest: int) -> tuple[int, int]:
    """The slice of length-sorted tokens whose length lies in [shortest, longest]."""
    top = len(bounds) - 1
    return int(bounds[min(max(shortest, 0), top)]), int(bounds[min(max(longest + 1, 0), top)])


def _import_optional(module: str, *, method: str, hint: str) -> ModuleType:
    """Import a package one search method needs, or say which method needs it and how to install it."""
    try:
        return importlib.import_module(module)
    except ImportError as error:
        msg = f"the {method!r} search method needs `{module}`. Hint: {hint}"
        raise ImportError(msg) from error


def _check_unit(name: str, value: float) -> float:
    if not 0.0 <= value <= 1.0:
        msg = f"`{name}` must lie in [0, 1], got {value!r}"
        raise ValueError(msg)
    return value


_INDEX_CLASSES: dict[str, type[SearchIndex]] = {
    cls.method: cls
    for cls in (
        ExactSearchIndex,
        NormalisedSearchIndex,
        PhoneticSearchIndex,
        NgramSearchIndex,
        FuzzySearchIndex,
        RegexSearchIndex,
        BM25SearchIndex,
        EmbeddingSearchIndex,
    )
}


def build_index(
    method: SearchMethod, docs: Mapping[str, str] | SearchCollection, **params: float | int | None
) -> SearchIndex:
    """Build the index of one search method over a collection.

    Args:
        method: One of `SEARCH_METHODS`.
        docs: Document id → text (usually the noisy texts of one CER level), or a `SearchCollection`
            shared by several methods.
        **params: The method's parameters: ``tau`` (ngram, bm25, embedding), ``alpha`` (fuzzy),
            ``max_errors`` (regex), ``top``/``k1``/``b``/``epsilon`` (bm25), ``dim``/``buckets``/``seed``
            (embedding).

    Raises:
        ValueError: An unknown `method`, a parameter the method does not take, or a value out of range.

    Example:
        >>> index = build_index("fuzzy", {"a": "δημητριοσ ζηνωνι χαιρειν", "b": "χαρειν"}, alpha=0.2)
        >>> sorted(index.search("χαιρειν")), sorted(build_index("exact", {"a": "χαιρειν"}).search("χαρειν"))
        (['a', 'b'], [])
    """
    cls = _INDEX_CLASSES.get(method)
    if cls is None:
        msg = f"unknown search `method` {method!r}. Hint: one of {', '.join(SEARCH_METHODS)}"
        raise ValueError(msg)
    accepted = [name for name in inspect.signature(cls.__init__).parameters if name not in ("self", "collection")]
    unknown = sorted(set(params) - set(accepted))
    if unknown:
        takes = ", ".join(f"`{name}`" for name in accepted) or "no parameters"
        msg = f"search method {method!r} does not take `{unknown[0]}`. Hint: it takes {takes}"
        raise ValueError(msg)
    collection = docs if isinstance(docs, SearchCollection) else SearchCollection(docs)
    return cls(collection, **params)
