"""The model interface, its parameter handling, and the `model.json` that names a saved model's kind."""

from __future__ import annotations

import dataclasses
import importlib
import json
from abc import ABC, abstractmethod
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any, ClassVar, Literal, Self

import numpy as np

from synth.core.errors import ConfigError, InputError, MissingDependencyError, read_json_file

Objective = Literal["classification", "regression"]
MODEL_FILE = "model.json"
MODEL_FORMAT = "synth-papyrus-model/1"

MODEL_KINDS: dict[str, str] = {
    "tfidf": "synth.trainers.papyrus.models.tfidf:TfidfModel",
    "charcnn": "synth.trainers.papyrus.models.charcnn:CharCNNModel",
    "bytes": "synth.trainers.papyrus.models.bytes_encoder:ByteEncoderModel",
    "fasttext": "synth.trainers.papyrus.models.fasttext_model:FastTextModel",
}


class TextModel(ABC):
    """A text classifier or regressor: `fit(texts, labels)`, `predict(texts)`, `save(dir)`, `load(dir)`.

    Subclasses set `kind`, `params_type` (a dataclass of hyper-parameters with defaults) and `requires`
    (optional packages as `(module, pip hint)`), and implement `_fit`, `_predict`, `_save_state` and
    `_load_state`. Classification labels are strings; regression targets are floats.
    """

    kind: ClassVar[str]
    params_type: ClassVar[type[Any]]
    requires: ClassVar[tuple[tuple[str, str], ...]] = ()

    def __init__(self, *, objective: Objective, seed: int = 0, params: Mapping[str, Any] | None = None) -> None:
        check_requirements(self.kind, self.requires)
        if objective not in ("classification", "regression"):
            msg = f"`objective` must be 'classification' or 'regression', got {objective!r}"
            raise ConfigError(msg)
        self.objective: Objective = objective
        self.seed = int(seed)
        self.params = parse_params(self.kind, self.params_type, params or {})
        self.classes: list[str] | None = None
        self.fitted = False

    def fit(self, texts: Sequence[str], labels: Sequence[Any]) -> Self:
        """Train on `texts` with `labels` (strings to classify, or float targets to regress)."""
        texts = [str(text) for text in texts]
        if len(texts) != len(labels) or not texts:
            msg = f"`fit` needs as many labels as texts and at least one of each, got {len(texts)} and {len(labels)}"
            raise ValueError(msg)
        if self.objective == "classification":
            targets: list[Any] = [str(label) for label in labels]
            self.classes = sorted(set(targets))
            if len(self.classes) < 2:
                msg = f"`fit` needs at least 2 classes to classify, got {self.classes}"
                raise ValueError(msg)
        else:
            targets = [float(label) for label in labels]
            if not np.all(np.isfinite(targets)):
                msg = "`fit` regression targets must be finite numbers"
                raise ValueError(msg)
        self._fit(texts, targets)
        self.fitted = True
        return self

    def predict(self, texts: Sequence[str]) -> np.ndarray:
        """Predicted labels (an object array of str) or targets (float64), one per text."""
        if not self.fitted:
            msg = f"model `{self.kind}` is not fitted; call `fit` or `load_model` first"
            raise ValueError(msg)
        texts = [str(text) for text in texts]
        if not texts:
            return np.array([], dtype=object if self.objective == "classification" else np.float64)
        predictions = self._predict(texts)
        if self.objective == "classification":
            return np.array([str(label) for label in predictions], dtype=object)
        return np.asarray(predictions, dtype=np.float64)

    def save(self, directory: str | Path) -> Path:
        """Write the model to `directory` (created if needed): its files, then `model.json` last."""
        if not self.fitted:
            msg = f"model `{self.kind}` is not fitted; nothing to save"
            raise ValueError(msg)
        root = Path(directory)
        root.mkdir(parents=True, exist_ok=True)
        state = self._save_state(root)
        meta = {
            "format": MODEL_FORMAT,
            "kind": self.kind,
            "objective": self.objective,
            "seed": self.seed,
            "params": dataclasses.asdict(self.params),
            "classes": self.classes,
            "state": state,
        }
        (root / MODEL_FILE).write_text(json.dumps(meta, indent=2, ensure_ascii=False) + "\n", encoding="utf-8")
        return root

    @classmethod
    def load(cls, directory: str | Path) -> Self:
        """Load a model saved by `save`; only load directories you trust (they may hold pickles)."""
        root = Path(directory)
        meta = read_model_meta(root)
        if meta["kind"] != cls.kind:
            msg = f"{root / MODEL_FILE}: `kind` is {meta['kind']!r}, expected {cls.kind!r}"
            raise InputError(msg)
        model = cls(objective=meta["objective"], seed=meta["seed"], params=meta["params"])
        model.classes = meta.get("classes")
        model._load_state(root, meta.get("state") or {})
        model.fitted = True
        return model

    @abstractmethod
    def _fit(self, texts: list[str], targets: list[Any]) -> None: ...

    @abstractmethod
    def _predict(self, texts: list[str]) -> Sequence[Any]: ...

    @abstractmethod
    def _save_state(self, root: Path) -> dict[str, Any]:
        """Write the fitted state's files under `root`; return small JSON-ready state for `model.json`."""

    @abstractmethod
    def _load_state(self, root: Path, state: dict[str, Any]) -> None: ...


def check_requirements(kind: str, requires: Sequence[tuple[str, str]]) -> None:
    """Import each optional module a model needs; a one-line `MissingDependencyError` naming the fix."""
    for module, hint in requires:
        try:
            importlib.import_module(module)
        except ImportError as error:
            reason = (str(error).splitlines() or [type(error).__name__])[0]
            msg = f"model `{kind}` needs the `{module}` package ({reason}); install it with `pip install '{hint}'`"
            raise MissingDependencyError(msg) from None


def parse_params(kind: str, params_type: type[Any], given: Mapping[str, Any]) -> Any:
    """Build a params dataclass from a mapping, coercing JSON/YAML values to the defaults' types."""
    fields = {field.name for field in dataclasses.fields(params_type)}
    unknown = sorted(set(given) - fields)
    if unknown:
        msg = f"model `{kind}` has no parameter `{unknown[0]}`; known: {', '.join(sorted(fields))}"
        raise ConfigError(msg)
    defaults = params_type()
    values = {key: _coerce(kind, key, value, getattr(defaults, key)) for key, value in given.items()}
    return params_type(**values)


def _coerce(kind: str, key: str, value: Any, default: Any) -> Any:
    if isinstance(default, tuple):
        if isinstance(value, list | tuple) and value:
            return tuple(_coerce(kind, key, item, default[0]) for item in value)
    elif _accepts(default, value):
        return float(value) if isinstance(default, float) else value
    expected = "str or null" if default is None else type(default).__name__
    msg = f"model `{kind}` parameter `{key}`: expected {expected}, got {value!r}"
    raise ConfigError(msg)


def _accepts(default: Any, value: Any) -> bool:
    """Whether `value` may stand for a parameter whose default is `default` (bools are never numbers)."""
    if default is None:
        return value is None or isinstance(value, str)
    if isinstance(default, bool) or isinstance(value, bool):
        return isinstance(default, bool) and isinstance(value, bool)
    if isinstance(default, float):
        return isinstance(value, int | float)
    return isinstance(value, type(default))


def read_model_meta(root: Path) -> dict[str, Any]:
    """The parsed `model.json` of a saved model directory; a one-line `InputError` if it is unusable."""
    path = root / MODEL_FILE
    if not path.is_file():
        msg = f"{root}: no {MODEL_FILE} here; is this a model saved by `synth train papyrus`?"
        raise InputError(msg)
    meta = read_json_file(path)
    if meta.get("format") != MODEL_FORMAT:
        msg = f"{path}: `format` is {meta.get('format')!r}, expected {MODEL_FORMAT!r}"
        raise InputError(msg)
    if meta.get("kind") not in MODEL_KINDS:
        msg = f"{path}: unknown model `kind` {meta.get('kind')!r}; known: {', '.join(MODEL_KINDS)}"
        raise InputError(msg)
    return meta


def model_class(kind: str) -> type[TextModel]:
    """The class of a model kind, imported on demand."""
    if kind not in MODEL_KINDS:
        msg = f"unknown model {kind!r}; choose one of {', '.join(MODEL_KINDS)}"
        raise ConfigError(msg)
    module, _, name = MODEL_KINDS[kind].partition(":")
    return getattr(importlib.import_module(module), name)


def build_model(
    kind: str, *, objective: Objective, seed: int = 0, params: Mapping[str, Any] | None = None
) -> TextModel:
    """An unfitted model of `kind`.

    Example:
        >>> model = build_model("tfidf", objective="classification", params={"max_features": 5000})
        >>> model.fit(["αβγ δεζ", "αβγ αβγ", "κλμ νξο", "κλμ κλμ"], ["a", "a", "b", "b"]).predict(["αβγ"]).tolist()
        ['a']
    """
    return model_class(kind)(objective=objective, seed=seed, params=params)


def load_model(directory: str | Path) -> TextModel:
    """Load a saved model of any kind, dispatching on `kind` in its `model.json`."""
    root = Path(directory)
    return model_class(read_model_meta(root)["kind"]).load(root)
