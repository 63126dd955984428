"""TF-IDF over character n-grams (within word boundaries) + logistic regression, or Ridge for dating."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Any, ClassVar

import numpy as np

from synth.core.errors import ConfigError
from synth.trainers.papyrus.models.base import TextModel

PIPELINE_FILE = "pipeline.joblib"


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
        if not 1 <= self.ngram_min <= self.ngram_max:
            msg = f"tfidf: need 1 <= `ngram_min` <= `ngram_max`, got {self.ngram_min} and {self.ngram_max}"
            raise ConfigError(msg)
        if self.max_features < 1 or self.min_df < 1 or self.max_iter < 1 or self.c <= 0 or self.alpha < 0:
            msg = "tfidf: `max_features`, `min_df`, `max_iter` and `c` must be positive, `alpha` >= 0"
            raise ConfigError(msg)


class TfidfModel(TextModel):
    """`TfidfVectorizer(analyzer="char_wb", sublinear_tf=True)` + balanced `LogisticRegression` / `Ridge`.

    Saved with joblib (a pickle): load only model directories you trust.
    """

    kind: ClassVar[str] = "tfidf"
    params_type: ClassVar[type[Any]] = TfidfParams
    requires: ClassVar[tuple[tuple[str, str], ...]] = (("sklearn", "synth[train]"), ("joblib", "synth[train]"))

    def _build(self) -> Any:
        from sklearn.feature_extraction.text import TfidfVectorizer
        from sklearn.linear_model import LogisticRegression, Ridge
        from sklearn.pipeline import Pipeline

        p: TfidfParams = self.params
        vectorizer = TfidfVectorizer(
            analyzer="char_wb",
            ngram_range=(p.ngram_min, p.ngram_max),
            sublinear_tf=True,
            max_features=p.max_features,
            min_df=p.min_df,
            lowercase=False,
            dtype=np.float64,
        )
        if self.objective == "classification":
            head = LogisticRegression(C=p.c, class_weight="balanced", max_iter=p.max_iter, random_state=self.seed)
        else:
            head = Ridge(alpha=p.alpha, random_state=self.seed)
        return Pipeline([("tfidf", vectorizer), ("head", head)])

    def _fit(self, texts: list[str], targets: list[Any]) -> None:
        self.pipeline = self._build().fit(texts, targets)

    def _predict(self, texts: list[str]) -> Any:
        return self.pipeline.predict(texts)

    def _save_state(self, root: Path) -> dict[str, Any]:
        import joblib
        import sklearn

        joblib.dump(self.pipeline, root / PIPELINE_FILE)
        return {"file": PIPELINE_FILE, "sklearn_version": sklearn.__version__}

    def _load_state(self, root: Path, state: dict[str, Any]) -> None:
        import joblib

        self.pipeline = joblib.load(root / state.get("file", PIPELINE_FILE))
