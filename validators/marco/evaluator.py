"""The MARCO evaluator: grade one candidate SMILES against its source for a set of task properties.

Two success protocols (research note, section 1):

- `gellmo` (default): property values rounded to 2 decimals; success when every scored task property is strictly
  better in its direction (mutagenicity lower), with no magnitude threshold.
- `repo`: raw predictor values; success when every scored task property is strictly better, mutagenicity ignored.

Properties whose predictor is unavailable (BBBP, DRD2, HIA, mutagenicity offline) are listed in `unavailable` and
left out of success: it is computed over the scored properties only (`scope="scored"`), and is False when no task
property could be scored. Each property also reports whether its gain reaches its improvement threshold.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any, Literal

from synth.validators.marco.molecules import FragmentPolicy, InvalidKind, ParsedMolecule, parse_smiles
from synth.validators.marco.properties import SPECS, PropertyPredictor, resolve_predictors
from synth.validators.marco.similarity import morgan_fingerprint

SuccessProtocol = Literal["gellmo", "repo"]
PROTOCOLS: tuple[SuccessProtocol, ...] = ("gellmo", "repo")
ROUNDING = 2


class InvalidSourceError(ValueError):
    """A source molecule that does not parse; `kind` is the stable invalid kind (`valence`, `parse_error`, …)."""

    def __init__(self, message: str, *, kind: InvalidKind) -> None:
        super().__init__(message)
        self.kind: InvalidKind = kind


@dataclass(frozen=True, slots=True)
class PropertyChange:
    """One task property of a candidate: source and candidate values, the gain in the goal direction."""

    key: str
    source: float | None
    value: float | None
    gain: float | None = None
    improved: bool = False
    meets_threshold: bool = False
    scored: bool = True
    reason: str = ""


@dataclass(frozen=True)
class SourceProfile:
    """A parsed source molecule with its property values and fingerprint, computed once per source."""

    parsed: ParsedMolecule
    values: Mapping[str, float | None]
    fingerprint: Any

    @property
    def canonical(self) -> str:
        """The source's canonical SMILES."""
        return self.parsed.canonical or ""


@dataclass(frozen=True)
class Evaluation:
    """The grade of one candidate: validity (or why not), property changes, similarity, success."""

    text: str
    canonical: str | None
    invalid_kind: InvalidKind | None
    invalid_reason: str | None
    similarity: float | None
    changes: tuple[PropertyChange, ...] = ()
    success: bool = False
    protocol: SuccessProtocol = "gellmo"
    unavailable: tuple[str, ...] = field(default=())

    @property
    def valid(self) -> bool:
        """True when the candidate parsed to one sanitised molecule."""
        return self.canonical is not None

    @property
    def failing(self) -> tuple[str, ...]:
        """Scored task properties that did not improve."""
        return tuple(c.key for c in self.changes if c.scored and not c.improved)

    def values(self) -> dict[str, float | None]:
        """Candidate property values by key."""
        return {c.key: c.value for c in self.changes}


def _gain(source: float, value: float, key: str) -> float:
    delta = value - source
    return -delta if SPECS[key].direction == "decrease" else delta


@dataclass(frozen=True)
class MoleculeEvaluator:
    """Grades candidates for the task properties `properties` under one success protocol.

    >>> evaluator = MoleculeEvaluator(properties=("qed", "plogp"))
    >>> grade = evaluator.evaluate("CCOc1ccccc1", evaluator.profile("COc1ccccc1"))
    >>> grade.valid, grade.success
    (True, True)
    """

    properties: tuple[str, ...]
    protocol: SuccessProtocol = "gellmo"
    fragments: FragmentPolicy = "reject"
    predictors: Mapping[str, PropertyPredictor] | None = None

    def __post_init__(self) -> None:
        unknown = [key for key in self.properties if key not in SPECS]
        if unknown or not self.properties:
            msg = f"`properties` must name known properties, got {list(self.properties)}; choose from {sorted(SPECS)}"
            raise ValueError(msg)
        if self.protocol not in PROTOCOLS:
            msg = f"unknown `protocol` {self.protocol!r}; choose from {list(PROTOCOLS)}"
            raise ValueError(msg)
        object.__setattr__(self, "predictors", resolve_predictors(self.predictors))

    def _predictor(self, key: str) -> PropertyPredictor:
        return self.predictors[key]  # type: ignore[index]  # resolved in __post_init__

    def unavailable(self) -> tuple[str, ...]:
        """Task properties with no usable predictor."""
        return tuple(key for key in self.properties if not self._predictor(key).available)

    def counted(self) -> tuple[str, ...]:
        """Task properties that success is computed over under this protocol (before availability)."""
        if self.protocol == "repo":
            return tuple(key for key in self.properties if key != "mutagenicity")
        return self.properties

    def predict(self, mol: Any) -> dict[str, float | None]:
        """Values of the task properties for a sanitised molecule (None where unavailable)."""
        return {key: self._predictor(key).predict(mol) for key in self.properties}

    def profile(self, smiles: str) -> SourceProfile:
        """Parse a source molecule and compute its properties and fingerprint; invalid sources raise
        `InvalidSourceError` (a ValueError) with the invalid kind."""
        parsed = parse_smiles(smiles, fragments=self.fragments)
        if not parsed.valid:
            msg = f"source SMILES {smiles!r} is invalid: {parsed.reason}"
            raise InvalidSourceError(msg, kind=parsed.kind or "parse_error")
        return SourceProfile(parsed, self.predict(parsed.mol), morgan_fingerprint(parsed.mol))

    def _change(self, key: str, source: float | None, value: float | None) -> PropertyChange:
        predictor = self._predictor(key)
        if not predictor.available:
            reason = f"unavailable: {predictor.unavailable_reason}"
            return PropertyChange(key, source, None, scored=False, reason=reason)
        if source is None or value is None:
            return PropertyChange(key, source, value, scored=False, reason="the predictor gave no value")
        if self.protocol == "gellmo":
            source, value = round(source, ROUNDING), round(value, ROUNDING)
        gain = _gain(source, value, key)
        if self.protocol == "gellmo":
            gain = round(gain, ROUNDING)
        counted = key in self.counted()
        return PropertyChange(
            key,
            source,
            value,
            gain=gain,
            improved=gain > 0,
            meets_threshold=gain >= SPECS[key].threshold,
            scored=counted,
            reason="" if counted else f"not counted under the {self.protocol} protocol",
        )

    def evaluate(self, text: str, source: SourceProfile) -> Evaluation:
        """Grade candidate `text` (a SMILES, possibly invalid) against `source`; never raises on any string."""
        from rdkit import DataStructs

        parsed = parse_smiles(text, fragments=self.fragments)
        if not parsed.valid:
            return Evaluation(
                parsed.text,
                None,
                parsed.kind,
                parsed.reason,
                None,
                protocol=self.protocol,
                unavailable=self.unavailable(),
            )
        values = self.predict(parsed.mol)
        changes = tuple(self._change(key, source.values.get(key), values[key]) for key in self.properties)
        scored = [c for c in changes if c.scored]
        similarity = DataStructs.TanimotoSimilarity(source.fingerprint, morgan_fingerprint(parsed.mol))
        return Evaluation(
            parsed.text,
            parsed.canonical,
            None,
            None,
            similarity,
            changes,
            success=bool(scored) and all(c.improved for c in scored),
            protocol=self.protocol,
            unavailable=self.unavailable(),
        )


def evaluate_many(evaluator: MoleculeEvaluator, texts: Sequence[str], source: SourceProfile) -> list[Evaluation]:
    """Grade several candidates against one source."""
    return [evaluator.evaluate(text, source) for text in texts]
