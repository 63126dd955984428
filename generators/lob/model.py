"""The fitted LOB model: field distributions, pointer weights and Santa Fe rates, saved as one JSON file."""

from __future__ import annotations

import json
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from synth.core.errors import InputError, read_json_file
from synth.core.sink import write_text_atomic
from synth.generators.lob.fields import FieldModel
from synth.generators.lob.pointer import Pointer, PointerModel
from synth.generators.lob.zero_intelligence import ZIParameters

MODEL_FILE = "lob_model.json"
FORMAT_VERSION = 1
DEFAULT_MODEL = Path(__file__).parent / "data" / MODEL_FILE
"""The model `synth train lob` fits on the shipped AMZN day with its defaults (first 60 % of the messages)."""


@dataclass(frozen=True)
class LobModel:
    """Everything generation needs from training; `training` records how it was fit."""

    fields: FieldModel
    pointer: Pointer
    zero_intelligence: ZIParameters
    training: Mapping[str, Any] = field(default_factory=dict)

    def to_dict(self) -> dict[str, Any]:
        """JSON-ready form."""
        return {
            "format_version": FORMAT_VERSION,
            "fields": self.fields.to_dict(),
            "pointer": self.pointer.to_dict(),
            "zero_intelligence": self.zero_intelligence.to_dict(),
            "training": dict(self.training),
        }

    def save(self, path: Path) -> Path:
        """Write the model to `path` (a directory gets `lob_model.json`); returns the file written."""
        target = path / MODEL_FILE if path.is_dir() or not path.suffix else path
        target.parent.mkdir(parents=True, exist_ok=True)
        write_text_atomic(target, json.dumps(self.to_dict(), indent=1, sort_keys=True) + "\n")
        return target


def load_model(path: str | Path | None = None) -> LobModel:
    """Read a model file (or a directory holding `lob_model.json`); None reads the shipped default."""
    target = Path(path) if path is not None else DEFAULT_MODEL
    if target.is_dir():
        target = target / MODEL_FILE
    if not target.is_file():
        msg = f"{target}: LOB model not found; fit one with `synth train lob --out DIR`"
        raise InputError(msg)
    data = read_json_file(target)
    if not isinstance(data, dict) or data.get("format_version") != FORMAT_VERSION:
        found = data.get("format_version") if isinstance(data, dict) else None
        msg = f"{target}: field `format_version`: expected {FORMAT_VERSION}, found {found!r}"
        raise InputError(msg)
    try:
        return LobModel(
            fields=FieldModel.from_dict(data["fields"]),
            pointer=_pointer_from_dict(data["pointer"]),
            zero_intelligence=ZIParameters.from_dict(data["zero_intelligence"]),
            training=data.get("training", {}),
        )
    except (KeyError, TypeError, ValueError) as error:
        msg = f"{target}: malformed LOB model ({type(error).__name__}: {error})"
        raise InputError(msg) from None


def _pointer_from_dict(data: Mapping[str, Any]) -> Pointer:
    kind = data.get("kind", "logit")
    if kind == "attention":
        from synth.generators.lob.neural_pointer import AttentionPointer

        return AttentionPointer.from_dict(data)
    if kind != "logit":
        msg = f"unknown pointer kind {kind!r} (expected logit or attention)"
        raise ValueError(msg)
    return PointerModel.from_dict(data)
