"""The curate config: ordered operations, each declaring the text or columns it reads.

    operations:
      - {kind: verdict}                                         # keep rows every verifier passed
      - {kind: exact_dedup, text: {preset: toolforge_question}}
      - {kind: near_dedup, text: {preset: toolforge_dialogue}, threshold: 0.8}
      - kind: decontaminate
        text: {preset: toolforge_dialogue}
        eval_sets: [{name: hotpotqa_dev, path: generators/toolforge/data/hotpotqa_dev_sample.json, column: question}]
      - {kind: balance, column: paradigm}

Each operation sees the rows the operations before it kept; a dropped row names the first operation that dropped
it (`filter_step`), a stable code (`filter_reason`) and the row or evaluation item behind it (`filter_detail`).
"""

from __future__ import annotations

from pathlib import Path
from typing import Annotated, Any, ClassVar, Literal

from pydantic import Field, PositiveInt, ValidationError, model_validator

from synth.core.config import CardConfig, StrictModel, format_validation_error, read_config_mapping
from synth.core.errors import ConfigError
from synth.validators.curation.hashing import Unit
from synth.validators.curation.text import DEFAULT_NORMALIZATION, PRESETS, Normalization, Preset


class TextSpec(StrictModel):
    """The text an operation reads: `columns` (joined by a space) or a domain `preset`, then `normalize`."""

    columns: list[str] | None = Field(None, min_length=1)
    preset: Preset | None = None
    normalize: list[Normalization] | None = Field(
        None, description="steps in order; default: the preset's or nfkc, lower, strip_punctuation"
    )

    @model_validator(mode="after")
    def _one_source(self) -> TextSpec:
        if (self.columns is None) == (self.preset is None):
            msg = "give exactly one of `columns` or `preset`"
            raise ValueError(msg)
        return self

    def reads(self) -> list[str]:
        """The columns this text is built from."""
        return list(self.columns) if self.columns is not None else list(PRESETS[self.preset or ""][0])

    def steps(self) -> list[Normalization]:
        if self.normalize is not None:
            return list(self.normalize)
        return list(PRESETS[self.preset][1]) if self.preset else list(DEFAULT_NORMALIZATION)


class Operation(StrictModel):
    """Fields every operation has; `reason` is the stable code of the rows it drops."""

    reason: ClassVar[str]
    name: str | None = Field(
        None, pattern=r"^[a-z][a-z0-9_]*$", description="step name on dropped rows (default: kind)"
    )

    def reads(self) -> list[str]:
        """Columns this operation reads."""
        return []


class ExactDedup(Operation):
    """Drop rows whose normalised text equals an earlier row's (a 128-bit hash of it)."""

    reason: ClassVar[str] = "curate:exact_duplicate"
    kind: Literal["exact_dedup"]
    text: TextSpec

    def reads(self) -> list[str]:
        return self.text.reads()


class NearDedup(Operation):
    """Drop rows whose Jaccard similarity to an earlier kept row is at least `threshold`: MinHash + LSH banding
    find candidate pairs, which are then confirmed by their exact shingle Jaccard (or the MinHash estimate)."""

    reason: ClassVar[str] = "curate:near_duplicate"
    kind: Literal["near_dedup"]
    text: TextSpec
    unit: Unit = Field("word", description="shingle unit: words, or bytes of the normalised UTF-8 text")
    ngram: PositiveInt = Field(5, le=64, description="shingle length in units")
    num_perm: PositiveInt = Field(128, le=1024, description="MinHash permutations (all used to verify a pair)")
    bands: PositiveInt = Field(20, description="LSH bands")
    rows_per_band: PositiveInt = Field(6, description="signature values per band (bands x rows <= num_perm)")
    threshold: float = Field(0.8, gt=0, le=1, description="estimated Jaccard at or above which a pair is a duplicate")
    seed: int = Field(1, ge=0, lt=2**63, description="seed of the permutations")
    verify: Literal["exact", "minhash"] = Field(
        "exact", description="confirm LSH candidates by exact shingle Jaccard, or by the MinHash estimate"
    )
    all_pairs_up_to: PositiveInt = Field(
        32, description="buckets up to this size compare all pairs (else a star + chain)"
    )

    @model_validator(mode="after")
    def _bands_fit(self) -> NearDedup:
        if self.bands * self.rows_per_band > self.num_perm:
            msg = f"bands x rows_per_band ({self.bands} x {self.rows_per_band}) exceeds num_perm ({self.num_perm})"
            raise ValueError(msg)
        return self

    def reads(self) -> list[str]:
        return self.text.reads()


class EvalSet(StrictModel):
    """An evaluation set: a JSONL/JSON/Parquet/CSV file, a synth dataset or a Hugging Face dataset folder."""

    name: str = Field(pattern=r"^[a-z0-9][a-z0-9_.-]*$")
    path: Path
    columns: list[str] = Field(min_length=1, description="text columns of the items (joined by a space)")
    id_column: str | None = Field(None, description="column naming each item (default: its row number)")
    format: Literal["auto", "jsonl", "json", "parquet", "csv", "synth", "hf"] = "auto"
    split: str | None = Field(None, description="split of a Hugging Face dataset (default: the only or `test`)")
    rows: str | None = Field(
        None, pattern=r"^\d*:\d*$", description="a `start:stop` slice of the items (a held-out split)"
    )


class Decontaminate(Operation):
    """Drop rows sharing a word n-gram (or, `match: exact`, their whole text) with an evaluation item."""

    reason: ClassVar[str] = "curate:contaminated"
    kind: Literal["decontaminate"]
    text: TextSpec
    eval_sets: list[EvalSet] = Field(min_length=1)
    ngram: PositiveInt = Field(13, le=256)
    min_words: PositiveInt = Field(8, description="shorter evaluation items are not indexed (n-gram match)")
    match: Literal["ngram", "exact"] = "ngram"

    def reads(self) -> list[str]:
        return self.text.reads()


class VerdictFilter(Operation):
    """Drop rows whose verdict failed (every `verdict_*` column, or the verifiers named)."""

    reason: ClassVar[str] = "curate:verdict_failed"
    kind: Literal["verdict"]
    verifiers: list[str] | None = None


class RangeFilter(Operation):
    """Drop rows whose numeric `column` is null or outside [min, max]."""

    reason: ClassVar[str] = "curate:out_of_range"
    kind: Literal["range"]
    column: str
    min: float | None = None
    max: float | None = None

    def reads(self) -> list[str]:
        return [self.column]


class RegexFilter(Operation):
    """Drop rows whose string `column` does not match `pattern` (`keep: no_match`: rows that do)."""

    reason: ClassVar[str] = "curate:regex"
    kind: Literal["regex"]
    column: str
    pattern: str
    keep: Literal["match", "no_match"] = "match"

    def reads(self) -> list[str]:
        return [self.column]


class LengthFilter(Operation):
    """Drop rows whose normalised text is shorter than `min` or longer than `max` (`unit`s)."""

    reason: ClassVar[str] = "curate:length"
    kind: Literal["length"]
    text: TextSpec
    unit: Literal["chars", "words"] = "words"
    min: int | None = Field(None, ge=0)
    max: int | None = Field(None, ge=0)

    def reads(self) -> list[str]:
        return self.text.reads()


class QualityFilter(Operation):
    """A domain's quality rule: `optiscribe_nontrivial` (SCIP needed branching: solve_nodes > 0) or
    `marco_valid_turns` (every turn of the trajectory is a valid molecule)."""

    reason: ClassVar[str] = "curate:low_quality"
    kind: Literal["quality"]
    preset: Literal["optiscribe_nontrivial", "marco_valid_turns"]

    def reads(self) -> list[str]:
        return ["solve_nodes"] if self.preset == "optiscribe_nontrivial" else ["turns"]


class Balance(Operation):
    """Keep at most `per_value` rows per value of `column` (default: the smallest value's count), chosen by a
    seeded hash of the row's position (the same rows every run)."""

    reason: ClassVar[str] = "curate:over_quota"
    kind: Literal["balance"]
    column: str
    per_value: PositiveInt | None = None
    seed: int = Field(0, ge=0, lt=2**63)

    def reads(self) -> list[str]:
        return [self.column]


OperationSpec = Annotated[
    ExactDedup
    | NearDedup
    | Decontaminate
    | VerdictFilter
    | RangeFilter
    | RegexFilter
    | LengthFilter
    | QualityFilter
    | Balance,
    Field(discriminator="kind"),
]


class CurateConfig(StrictModel):
    """A whole curate run: operations in order, output shards, memory budget, card."""

    operations: list[OperationSpec] = Field(min_length=1)
    shards: PositiveInt = Field(1, le=9999, description="output shards (fixed for the life of OUT)")
    batch_rows: PositiveInt = Field(65536, description="rows per streamed input batch")
    memory_budget_mb: PositiveInt = Field(256, description="memory for one loaded index partition / pair group")
    card: CardConfig = Field(default_factory=CardConfig)

    @model_validator(mode="after")
    def _unique_names(self) -> CurateConfig:
        names = step_names(self)
        seen = sorted({n for n in names if names.count(n) > 1})
        if seen:
            msg = f"two operations are named {seen[0]!r}; give each a distinct `name`"
            raise ValueError(msg)
        return self

    def hashed(self) -> dict[str, Any]:
        """The fields that decide the output rows."""
        return self.model_dump(mode="json", exclude={"card"})


def step_names(config: CurateConfig) -> list[str]:
    """The step name of each operation (`name`, else `kind`)."""
    return [op.name or op.kind for op in config.operations]


def parse_curate_config(data: Any, *, source: str, prefix: str = "") -> CurateConfig:
    """Validate a curate config mapping; errors are one line `SOURCE: field `a.b`: ...`."""
    if not isinstance(data, dict):
        msg = f"{source}: expected a mapping at the top level, got {type(data).__name__}"
        raise ConfigError(msg)
    try:
        return CurateConfig.model_validate(data)
    except ValidationError as error:
        raise ConfigError(format_validation_error(error, source=source, prefix=prefix)) from None


def load_curate_config(path: str | Path) -> CurateConfig:
    """Read and validate a curate YAML file."""
    return parse_curate_config(read_config_mapping(path), source=str(path))
