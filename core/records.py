"""Record schema helpers: stable row ids, the provenance struct and verdict structs.

Every dataset row is `id` + the domain's columns + verifier columns + `provenance`. The domain schema is
declared once as a pyarrow schema by the generator; this module adds the framework columns around it.
"""

from __future__ import annotations

import functools
import hashlib
import json
import json.encoder
import re
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

import pyarrow as pa

ID_FIELD = "id"
PROVENANCE_FIELD = "provenance"
FILTER_REASON_FIELD = "filter_reason"
FILTER_STEP_FIELD = "filter_step"
FILTER_DETAIL_FIELD = "filter_detail"

# A reason code: lowercase words joined by `_`, optionally namespaced with `:` (e.g. `scip:infeasible`).
REASON_CODE = re.compile(r"[a-z][a-z0-9_]*(?::[a-z0-9_]+)*")

PROVENANCE_TYPE = pa.struct(
    [
        ("generator", pa.string()),
        ("generator_version", pa.string()),
        ("seed", pa.int64()),
        ("shard_index", pa.int32()),
        ("config_hash", pa.string()),
        ("parent_ids", pa.list_(pa.string())),
        ("code_version", pa.string()),
    ]
)


def _canonical_encoder() -> Callable[[Any], str]:
    """`json.dumps(value, sort_keys=True, separators=(",", ":"), ensure_ascii=False, default=str)`, with the C
    encoder built once instead of on every call (the same text; a cycle raises RecursionError, not ValueError)."""
    make = json.encoder.c_make_encoder
    if make is None:  # an interpreter without the C accelerator
        return functools.partial(json.dumps, sort_keys=True, separators=(",", ":"), ensure_ascii=False, default=str)
    # (markers, default, encoder, indent, key_separator, item_separator, sort_keys, skipkeys, allow_nan)
    chunks = make(None, str, json.encoder.encode_basestring, None, ":", ",", True, False, True)
    return lambda value: "".join(chunks(value, 0))


_CANONICAL = _canonical_encoder()


def canonical_json(value: Any) -> str:
    """Serialise `value` to JSON with sorted keys and no whitespace, for hashing."""
    return _CANONICAL(value)


def stable_seed(text: str) -> int:
    """A 64-bit integer derived from `text` (blake2b), the same in every process and on every machine."""
    return int.from_bytes(hashlib.blake2b(text.encode(), digest_size=8).digest(), "little")


def make_row_id(generator: str, content: Mapping[str, Any]) -> str:
    """Return a stable 32-hex-digit id derived from the generator name and the row's content."""
    digest = _id_prefix(generator).copy()
    digest.update(canonical_json(content).encode())
    return digest.hexdigest()


@functools.lru_cache(maxsize=64)
def _id_prefix(generator: str) -> Any:
    """The row-id hash state after `generator` and its separator (copied for every row)."""
    return hashlib.blake2b(generator.encode() + b"\x00", digest_size=16)


def check_reason_code(code: str) -> str:
    """Return `code` if it is a stable reason code (`snake_case`, `:`-namespaced); raise ValueError otherwise."""
    if not REASON_CODE.fullmatch(code):
        msg = f"reason code {code!r} is not stable (use snake_case, e.g. `too_short`; values go in the detail)"
        raise ValueError(msg)
    return code


def split_reason(reason: str) -> tuple[str, str]:
    """Split a verifier reason `code` or `code: detail` into (code, detail); the code must be stable."""
    code, _, detail = reason.partition(": ")
    return check_reason_code(code), detail


def verdict_column(verifier_name: str) -> str:
    """Name of the verdict struct column a verifier adds."""
    return f"verdict_{verifier_name}"


def score_column(verifier_name: str, score: str) -> str:
    """Name of one top-level score column a verifier adds."""
    return f"{verifier_name}_{score}"


def verdict_type(score_names: Sequence[str]) -> pa.StructType:
    """Arrow type of a verdict: `{passed, reasons, scores{...}}` with one float64 per score."""
    scores = pa.struct([(name, pa.float64()) for name in score_names]) if score_names else pa.struct([])
    return pa.struct([("passed", pa.bool_()), ("reasons", pa.list_(pa.string())), ("scores", scores)])


@dataclass(frozen=True, slots=True)
class Verdict:
    """One verifier's judgement of one row; each reason is a stable code, or `code: detail` with the values."""

    passed: bool
    reasons: tuple[str, ...] = ()
    scores: Mapping[str, float] = field(default_factory=dict)

    def __post_init__(self) -> None:
        for reason in self.reasons:
            split_reason(reason)

    def to_dict(self) -> dict[str, Any]:
        """Return the verdict as a plain dict matching `verdict_type`."""
        return {"passed": self.passed, "reasons": list(self.reasons), "scores": dict(self.scores)}


def output_schema(domain_schema: pa.Schema, verifier_scores: Sequence[tuple[str, Sequence[str]]]) -> pa.Schema:
    """Assemble the full row schema: id, domain columns, score and verdict columns, provenance."""
    fields: list[pa.Field] = [pa.field(ID_FIELD, pa.string(), nullable=False)]
    fields.extend(domain_schema)
    for name, scores in verifier_scores:
        fields.extend(pa.field(score_column(name, s), pa.float64()) for s in scores)
        fields.append(pa.field(verdict_column(name), verdict_type(scores)))
    fields.append(pa.field(PROVENANCE_FIELD, PROVENANCE_TYPE))
    names = [f.name for f in fields]
    duplicates = sorted({n for n in names if names.count(n) > 1})
    if duplicates:
        msg = f"duplicate column names in the output schema: {duplicates}"
        raise ValueError(msg)
    return pa.schema(fields, metadata=domain_schema.metadata)


def rejected_schema(schema: pa.Schema) -> pa.Schema:
    """Schema of `rejected/` shards: every output column made nullable, plus the reason code, the step, and the
    detail (the row's values behind the code; null when the code says it all)."""
    fields = [f.with_nullable(True) for f in schema]
    fields.append(pa.field(FILTER_REASON_FIELD, pa.string(), nullable=False))
    fields.append(pa.field(FILTER_STEP_FIELD, pa.string(), nullable=False))
    fields.append(pa.field(FILTER_DETAIL_FIELD, pa.string()))
    return pa.schema(fields, metadata=schema.metadata)
