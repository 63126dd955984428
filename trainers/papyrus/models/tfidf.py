"""TF-IDF over character n-grams (within word boundaries) + logistic regression, or Ridge for dating.

Saved as data only: the vocabulary as a JSON list (column order) and the idf weights, coefficients and
intercepts as `.npy` arrays read with `allow_pickle=False`; loading rebuilds the scikit-learn objects from them.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Any, ClassVar

import numpy as np

from synth.core.errors import ConfigError, InputError
from synth.core.sink import write_atomic, write_json_atomic
from synth.trainers.papyrus.models.arrays import read_array, write_array
from synth.trainers.papyrus.models.base import (
    MODEL_FILE,
    TextModel,
    read_json_value,
    shown,
    state_path,
)

VOCABULARY_FILE = "tfidf_vocabulary.json"
ARRAY_FILES = {"idf": "tfidf_idf.npy", "coef": "tfidf_coef.npy", "intercept": "tfidf_intercept.npy"}
MAX_NGRAM = 16


@dataclass(frozen=True)
class TfidfParams:
    """Hyper-parameters of the TF-IDF baseline."""

    ngram_min: int = 1
    ngram_max: int = 5
    max_features: int = 200_000
    min_df: int = 1
    c: float = 1.0
    alpha: float = 1.0
    max_iter: int = 2000

    def __post_init__(self) -> None:
        if not 1 <= self.ngram_min <= self.ngram_max <= MAX_NGRAM:
            msg = (
                f"tfidf: need 1 <= `ngram_min` <= `ngram_max` <= {MAX_NGRAM}, got {self.ngram_min} and {self.ngram_max}"
            )
            raise ConfigError(msg)
        if self.max_features < 1 or self.min_df < 1 or self.max_iter < 1 or self.c <= 0 or self.alpha < 0:
            msg = "tfidf: `max_features`, `min_df`, `max_iter` and `c` must be positive, `alpha` >= 0"
            raise ConfigError(msg)


class TfidfModel(TextModel):
    """`TfidfVectorizer(analyzer="char_wb", sublinear_tf=True)` + balanced `LogisticRegression` / `Ridge`."""

    kind: ClassVar[str] = "tfidf"
    params_type: ClassVar[type[Any]] = TfidfParams
    requires: ClassVar[tuple[tuple[str, str], ...]] = (("sklearn", "synth[train]"),)

    def _vectorizer(self) -> Any:
        from sklearn.feature_extraction.text import TfidfVectorizer

        p: TfidfParams = self.params
        return TfidfVectorizer(
            analyzer="char_wb",
            ngram_range=(p.ngram_min, p.ngram_max),
            sublinear_tf=True,
            max_features=p.max_features,
            min_df=p.min_df,
            lowercase=False,
            dtype=np.float64,
        )

    def _head(self) -> Any:
        from sklearn.linear_model import LogisticRegression, Ridge

        p: TfidfParams = self.params
        if self.objective == "classification":
            return LogisticRegression(C=p.c, class_weight="balanced", max_iter=p.max_iter, random_state=self.seed)
        return Ridge(alpha=p.alpha, random_state=self.seed)

    def _fit(self, texts: list[str], targets: list[Any]) -> None:
        self.vectorizer = self._vectorizer()
        self.head = self._head().fit(self.vectorizer.fit_transform(texts), targets)

    def _predict(self, texts: list[str]) -> Any:
        return self.head.predict(self.vectorizer.transform(texts))

    def _save_state(self, root: Path) -> dict[str, Any]:
        import sklearn

        vocabulary = sorted(self.vectorizer.vocabulary_, key=self.vectorizer.vocabulary_.__getitem__)
        write_json_atomic(root / VOCABULARY_FILE, vocabulary)
        arrays = {"idf": self.vectorizer.idf_, "coef": self.head.coef_, "intercept": self.head.intercept_}
        for name, value in arrays.items():
            array = np.asarray(value, dtype=np.float64)
            write_atomic(root / ARRAY_FILES[name], lambda tmp, array=array: write_array(tmp, array))
        state: dict[str, Any] = {"vocabulary": VOCABULARY_FILE, **ARRAY_FILES, "sklearn_version": sklearn.__version__}
        if self.objective == "classification":
            state["head_classes"] = [str(label) for label in self.head.classes_]
        return state

    def _load_state(self, root: Path, state: dict[str, Any]) -> None:
        source = root / MODEL_FILE
        vocabulary = read_json_value(state_path(root, state, "vocabulary"), expected=list)
        self._check_vocabulary(source, vocabulary)
        features = len(vocabulary)
        classification = self.objective == "classification"
        rows = 1 if not classification or len(self.classes) == 2 else len(self.classes)
        shapes = {  # Ridge keeps a (1, F) coefficient row and a (1,) intercept with some solvers
            "idf": ((features,),),
            "coef": ((rows, features),) if classification else ((features,), (1, features)),
            "intercept": ((rows,),) if classification else ((), (1,)),
        }
        arrays = {name: read_array(state_path(root, state, name), shapes=shapes[name]) for name in shapes}
        if classification and state.get("head_classes") != self.classes:
            got = state.get("head_classes")
            msg = f"{source}: field `state.head_classes` must equal `classes` {self.classes} (got {shown(got)})"
            raise InputError(msg)
        self.vectorizer = self._vectorizer()
        self.vectorizer.vocabulary_ = {gram: column for column, gram in enumerate(vocabulary)}
        self.vectorizer.idf_ = arrays["idf"]
        self.head = self._head()
        self.head.coef_ = arrays["coef"]
        self.head.intercept_ = arrays["intercept"] if arrays["intercept"].ndim else np.float64(arrays["intercept"])
        self.head.n_features_in_ = features
        if classification:
            self.head.classes_ = np.array(self.classes)

    def _check_vocabulary(self, source: Path, vocabulary: list[Any]) -> None:
        """The n-grams must be distinct strings whose lengths lie in the params' n-gram range."""
        p: TfidfParams = self.params
        fits = (isinstance(gram, str) and p.ngram_min <= len(gram) <= p.ngram_max for gram in vocabulary)
        bad = next((index for index, ok in enumerate(fits) if not ok), None)
        if bad is not None:
            problem = (
                f"item {bad} {shown(vocabulary[bad])} is not a string of {p.ngram_min} to {p.ngram_max} characters"
            )
        elif not vocabulary or len(set(vocabulary)) != len(vocabulary):
            problem = "it must list distinct n-grams, at least one"
        else:
            return
        msg = f"{source}: field `state.vocabulary`: {problem}"
        raise InputError(msg)
