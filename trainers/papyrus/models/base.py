"""The model interface, its parameter handling, and the `model.json` that names a saved model's kind.

A saved model is a folder: `model.json` (format, kind, objective, seed, params, classes and a `state` mapping
that names the state files) plus those files, in formats that cannot run code when read: JSON, numpy `.npy`
read with `allow_pickle=False`, and safetensors for torch weights. Loading treats the folder as untrusted:
every field is checked, state files must lie inside the folder, and a damaged folder is a one-line
`InputError` naming the file and field.
"""

from __future__ import annotations

import dataclasses
import importlib
import json
import reprlib
from abc import ABC, abstractmethod
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any, ClassVar, Literal, Self

import numpy as np
from pydantic import BaseModel, ConfigDict, Field, StrictInt, StrictStr, ValidationError

from synth.core.config import format_validation_error
from synth.core.errors import ConfigError, InputError, MissingDependencyError
from synth.core.sink import write_json_atomic

Objective = Literal["classification", "regression"]
MODEL_FILE = "model.json"
MODEL_FORMAT = "synth-papyrus-model/2"
#: Formats written by earlier versions, refused on load: their state was a pickle (joblib, torch.save).
PICKLE_FORMATS = ("synth-papyrus-model/1",)
#: The largest JSON file of a model folder that is read (model.json, training.json, metrics.json, vocabularies).
MAX_JSON_BYTES = 64 * 1024 * 1024

_SHOWN = reprlib.Repr()
_SHOWN.maxstring = _SHOWN.maxother = 60
_SHOWN.maxlist = _SHOWN.maxdict = 4


def shown(value: Any) -> str:
    """A short repr of a value read from a file, for an error message (long strings and lists are cut)."""
    return _SHOWN.repr(value)


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
        """Write the model to `directory` (created if needed): its files, then `model.json` last.

        Each file is written under a temp name and renamed into place; an older `model.json` is removed first,
        so an interrupted save never leaves a folder that loads as a model.
        """
        if not self.fitted:
            msg = f"model `{self.kind}` is not fitted; nothing to save"
            raise ValueError(msg)
        root = Path(directory)
        root.mkdir(parents=True, exist_ok=True)
        (root / MODEL_FILE).unlink(missing_ok=True)
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
        write_json_atomic(root / MODEL_FILE, meta)
        return root

    @classmethod
    def load(cls, directory: str | Path) -> Self:
        """Load a model saved by `save`. Nothing in the folder is unpickled or executed (see the module docstring)."""
        root = Path(directory)
        meta = read_model_meta(root)
        source = root / MODEL_FILE
        if meta.kind != cls.kind:
            msg = f"{source}: field `kind` is {meta.kind!r}, expected {cls.kind!r}"
            raise InputError(msg)
        try:
            model = cls(objective=meta.objective, seed=meta.seed, params=meta.params)
        except ConfigError as error:
            msg = f"{source}: field `params`: {error}"
            raise InputError(msg) from None
        model.classes = meta.classes
        try:
            model._load_state(root, meta.state)
        except InputError:
            raise
        except (KeyError, TypeError, ValueError, OSError, RuntimeError) as error:
            reason = (str(error).splitlines() or [type(error).__name__])[0]
            msg = f"{source}: the saved `{cls.kind}` state does not load ({type(error).__name__}: {reason})"
            raise InputError(msg) from None
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


class ModelMeta(BaseModel):
    """The checked fields of a `model.json`."""

    model_config = ConfigDict(extra="ignore", frozen=True)

    format: StrictStr
    kind: StrictStr
    objective: Objective
    seed: StrictInt = Field(ge=0, lt=2**32)
    params: dict[StrictStr, Any]
    classes: list[StrictStr] | None
    state: dict[StrictStr, Any]


def read_model_meta(root: Path) -> ModelMeta:
    """The checked `model.json` of a saved model directory; a one-line `InputError` naming the field otherwise."""
    path = root / MODEL_FILE
    if not path.is_file():
        msg = f"{root}: no {MODEL_FILE} here; is this a model saved by `synth train papyrus fit`?"
        raise InputError(msg)
    meta = read_json_object(path)
    if meta.get("format") in PICKLE_FORMATS:
        msg = (
            f"{path}: field `format` is {meta['format']!r}, a model saved as a pickle, which is never loaded "
            "(it could run code); retrain it with `synth train papyrus fit`"
        )
        raise InputError(msg)
    if meta.get("format") != MODEL_FORMAT:
        msg = f"{path}: field `format` is {shown(meta.get('format'))}, expected {MODEL_FORMAT!r}"
        raise InputError(msg)
    if not isinstance(meta.get("kind"), str) or meta["kind"] not in MODEL_KINDS:
        msg = f"{path}: field `kind`: unknown model {shown(meta.get('kind'))}; known: {', '.join(MODEL_KINDS)}"
        raise InputError(msg)
    try:
        checked = ModelMeta.model_validate(meta)
    except ValidationError as error:
        raise InputError(format_validation_error(error, source=str(path))) from None
    if checked.objective == "classification":
        if checked.classes is None or len(checked.classes) < 2 or len(set(checked.classes)) != len(checked.classes):
            msg = (
                f"{path}: field `classes`: a classifier needs 2 or more distinct class names (got {checked.classes!r})"
            )
            raise InputError(msg)
    elif checked.classes is not None:
        msg = f"{path}: field `classes`: a regression model has no classes (got {checked.classes!r})"
        raise InputError(msg)
    return checked


def read_json_object(path: Path, *, max_bytes: int = MAX_JSON_BYTES) -> dict[str, Any]:
    """Parse a JSON file that must hold an object; a one-line `InputError` naming the file otherwise."""
    return _read_json(path, max_bytes=max_bytes, expected=dict)


def read_json_value(path: Path, *, expected: type, max_bytes: int = MAX_JSON_BYTES) -> Any:
    """Parse a JSON file whose top level must be an instance of `expected` (a list, say)."""
    return _read_json(path, max_bytes=max_bytes, expected=expected)


def _read_json(path: Path, *, max_bytes: int, expected: type) -> Any:
    try:
        size = path.stat().st_size
        if size > max_bytes:
            msg = f"{path}: file is {size:,} bytes, over the {max_bytes:,} bytes a model folder's JSON may hold"
            raise InputError(msg)
        with path.open("rb") as handle:
            value = json.loads(handle.read(max_bytes + 1).decode("utf-8"))
    except OSError as error:
        msg = f"{path}: cannot read file ({error.strerror or error})"
        raise InputError(msg) from None
    except UnicodeDecodeError:
        msg = f"{path}: not UTF-8 text"
        raise InputError(msg) from None
    except json.JSONDecodeError as error:
        msg = f"{path}: not valid JSON ({error.msg} at line {error.lineno})"
        raise InputError(msg) from None
    except (RecursionError, ValueError) as error:  # nesting too deep, an integer with too many digits
        msg = f"{path}: not valid JSON ({type(error).__name__})"
        raise InputError(msg) from None
    if not isinstance(value, expected):
        msg = f"{path}: expected a JSON {expected.__name__} at the top level, got {type(value).__name__}"
        raise InputError(msg)
    return value


def state_path(root: Path, state: Mapping[str, Any], field: str, *, directory: bool = False) -> Path:
    """The file (or folder) that `state[field]` names, which must lie inside the model folder `root`.

    Raises:
        InputError: The field is missing or not a string, names a path outside `root` (absolute, ``..``, or a
            link that leads out), or nothing of the right kind is there.
    """
    source = root / MODEL_FILE
    value = state.get(field)
    if not isinstance(value, str) or not value:
        msg = f"{source}: field `state.{field}` must name a file in the model folder (got {shown(value)})"
        raise InputError(msg)
    folder = root.resolve()
    try:
        candidate = (folder / value).resolve()
    except (OSError, ValueError):  # a NUL byte, a name too long, a link loop
        candidate = None
    if (
        candidate is None
        or Path(value).is_absolute()
        or ".." in Path(value).parts
        or not candidate.is_relative_to(folder)
    ):
        where = f"outside the model folder; it must name a file inside {root}"
        msg = f"{source}: field `state.{field}` is {shown(value)}, {where}"
        raise InputError(msg)
    if not (candidate.is_dir() if directory else candidate.is_file()):
        kind = "folder" if directory else "file"
        msg = f"{source}: field `state.{field}` names {shown(value)}, but there is no such {kind} in {root}"
        raise InputError(msg)
    return candidate


def state_number(root: Path, state: Mapping[str, Any], field: str) -> float:
    """A finite number stored in `state[field]`; a one-line `InputError` otherwise."""
    value = state.get(field)
    if isinstance(value, bool) or not isinstance(value, int | float) or not np.isfinite(value):
        msg = f"{root / MODEL_FILE}: field `state.{field}` must be a finite number (got {shown(value)})"
        raise InputError(msg)
    return float(value)


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
    return model_class(read_model_meta(root).kind).load(root)
