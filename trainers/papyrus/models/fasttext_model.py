"""fastText supervised classifier (optional: `pip install fasttext-community`); dating is learnt as centuries.

The model is fastText's own binary format (read by its C++ loader, no pickle).

Input lines are `__label__X text` with newlines turned into spaces. Dating predicts the centre year of the
predicted century (for example 150 for the 2nd century CE, -150 for the 2nd century BCE). Training uses a
single thread so that the same seed gives the same model.

fastText's SGD walks its input file in order with a linearly decaying learning rate and has no class
weights, so the lines are shuffled (seeded) and rare classes are repeated `(n_max / n_c) ** oversample`
times (0.5: square-root balancing); without both it predicted the majority class for every document.
"""

from __future__ import annotations

import tempfile
from collections import Counter
from dataclasses import dataclass
from pathlib import Path
from typing import Any, ClassVar

from synth.core.errors import ConfigError, InputError
from synth.core.sink import write_atomic
from synth.trainers.papyrus.models.base import MODEL_FILE, TextModel, shown, state_path
from synth.trainers.papyrus.tasks import century

MODEL_BIN = "fasttext.bin"
LABEL_PREFIX = "__label__"


@dataclass(frozen=True)
class FastTextParams:
    """`fasttext.train_supervised` settings, plus the class balancing of the input lines (`oversample`)."""

    epoch: int = 50
    lr: float = 1.0
    word_ngrams: int = 1
    minn: int = 2
    maxn: int = 5
    dim: int = 50
    bucket: int = 200_000
    oversample: float = 0.5

    def __post_init__(self) -> None:
        sizes = (self.epoch, self.word_ngrams, self.dim, self.bucket)
        if min(sizes) < 1 or self.lr <= 0 or not 0 <= self.minn <= self.maxn or not 0 <= self.oversample <= 1:
            msg = (
                "fasttext: `epoch`, `word_ngrams`, `dim`, `bucket` and `lr` must be positive, "
                "0 <= `minn` <= `maxn` and 0 <= `oversample` <= 1"
            )
            raise ConfigError(msg)


def century_centre(value: int) -> float:
    """The middle year of a century number from `century` (no year 0)."""
    return (value - 1) * 100 + 50.0 if value > 0 else -((-value - 1) * 100 + 50.0)


def _line(text: str) -> str:
    return " ".join(text.split())


def balanced_order(labels: list[str], *, oversample: float, seed: int) -> list[int]:
    """Positions of the training lines: each repeated `round((n_max / n_label) ** oversample)` times, shuffled.

    Example:
        >>> sorted(balanced_order(["a", "a", "a", "a", "b"], oversample=0.5, seed=0))
        [0, 1, 2, 3, 4, 4]
    """
    import numpy as np

    counts = Counter(labels)
    top = max(counts.values())
    repeats = [max(1, round((top / counts[label]) ** oversample)) for label in labels]
    order = np.repeat(np.arange(len(labels)), repeats)
    return np.random.default_rng(seed).permutation(order).tolist()


class FastTextModel(TextModel):
    """fastText with character n-grams (`minn`..`maxn`) and word n-grams."""

    kind: ClassVar[str] = "fasttext"
    params_type: ClassVar[type[Any]] = FastTextParams
    requires: ClassVar[tuple[tuple[str, str], ...]] = (("fasttext", "fasttext-community"),)

    def _fit(self, texts: list[str], targets: list[Any]) -> None:
        import fasttext

        labels = [str(t) if self.classes is not None else str(century(float(t))) for t in targets]
        p: FastTextParams = self.params
        with tempfile.TemporaryDirectory() as folder:
            path = Path(folder) / "train.txt"
            order = balanced_order(labels, oversample=p.oversample, seed=self.seed)
            lines = (f"{LABEL_PREFIX}{labels[i].replace(' ', '_')} {_line(texts[i])}" for i in order)
            path.write_text("\n".join(lines) + "\n", encoding="utf-8")
            self.model = fasttext.train_supervised(
                input=str(path),
                epoch=p.epoch,
                lr=p.lr,
                wordNgrams=p.word_ngrams,
                minn=p.minn,
                maxn=p.maxn,
                dim=p.dim,
                bucket=p.bucket,
                seed=self.seed,
                thread=1,
                verbose=0,
            )
        self.label_names = {label.replace(" ", "_"): label for label in labels}

    def _predict(self, texts: list[str]) -> list[Any]:
        predicted, _ = self.model.predict([_line(text) for text in texts], k=1)
        labels = [self.label_names.get(top[0][len(LABEL_PREFIX) :], top[0][len(LABEL_PREFIX) :]) for top in predicted]
        if self.classes is not None:
            return labels
        return [century_centre(int(label)) for label in labels]

    def _save_state(self, root: Path) -> dict[str, Any]:
        write_atomic(root / MODEL_BIN, lambda tmp: self.model.save_model(str(tmp)))
        return {"file": MODEL_BIN, "label_names": self.label_names}

    def _load_state(self, root: Path, state: dict[str, Any]) -> None:
        import fasttext

        names = state.get("label_names", {})
        if not isinstance(names, dict) or not all(isinstance(v, str) for v in names.values()):
            msg = f"{root / MODEL_FILE}: field `state.label_names` must map labels to names (got {shown(names)})"
            raise InputError(msg)
        self.model = fasttext.load_model(str(state_path(root, state, "file")))
        self.label_names = names
