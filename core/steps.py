"""Step contracts: one base class per block type, one method to implement.

- `Generator.generate(ctx)` yields `GeneratedBatch`es for one shard, deterministic per (seed, shard index).
- `Verifier.verify(table)` returns one `Verdict` per row; the runner adds score and verdict columns.
- `Filter.keep(row)` returns True, or `(False, code)` / `(False, code, detail)`; dropped rows go to `rejected/`.

Every drop has a stable reason code (`too_short`, `scip:infeasible`): the manifest and the card count by code;
the values behind it (sizes, counts, messages) go to the row's `filter_detail`.

Steps are frozen keyword-only dataclasses: settings are fields, variants come from `dataclasses.replace`.
"""

from __future__ import annotations

import importlib.util
from collections.abc import Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any, ClassVar, TypeVar

import numpy as np
import polars as pl
import pyarrow as pa

from synth.core.errors import MissingDependencyError
from synth.core.records import Verdict, check_reason_code, stable_seed

T = TypeVar("T")


@dataclass(frozen=True, slots=True)
class ShardContext:
    """Where a generator is in the run: the run seed, this shard, and the config fingerprint."""

    seed: int
    shard_index: int
    num_shards: int
    config_hash: str

    def rng(self, *salt: object) -> np.random.Generator:
        """Return a PCG64 generator seeded from (run seed, shard index, salt), independent of order."""
        key = "|".join(str(part) for part in (self.seed, self.shard_index, *salt))
        return np.random.Generator(np.random.PCG64(stable_seed(key)))

    def partition(self, items: Sequence[T]) -> Sequence[T]:
        """Return this shard's contiguous slice of `items` (sizes differ by at most one)."""
        base, extra = divmod(len(items), self.num_shards)
        start = self.shard_index * base + min(self.shard_index, extra)
        stop = start + base + (1 if self.shard_index < extra else 0)
        return items[start:stop]


@dataclass(frozen=True, slots=True)
class Rejection:
    """An item a generator could not turn into a row, kept in `rejected/` with its reason code and detail."""

    reason: str
    values: Mapping[str, Any] = field(default_factory=dict)
    parent_ids: tuple[str, ...] = ()
    detail: str = ""


@dataclass(slots=True)
class GeneratedBatch:
    """Rows (dicts over the domain schema) with their parent ids, plus generator-level rejections."""

    rows: list[dict[str, Any]] = field(default_factory=list)
    parent_ids: list[tuple[str, ...]] = field(default_factory=list)
    rejections: list[Rejection] = field(default_factory=list)

    def add(self, row: dict[str, Any], *, parents: Sequence[str] = ()) -> None:
        """Append one row and its parent ids."""
        self.rows.append(row)
        self.parent_ids.append(tuple(parents))

    def reject(
        self,
        reason: str,
        *,
        detail: str = "",
        values: Mapping[str, Any] | None = None,
        parents: Sequence[str] = (),
    ) -> None:
        """Record one item that did not become a row: a stable reason code, the detail behind it, its values."""
        check_reason_code(reason)
        self.rejections.append(Rejection(reason, dict(values or {}), tuple(parents), detail))


@dataclass(frozen=True, kw_only=True)
class Step:
    """Settings shared by every step. `requires` names optional packages as (module, pip extra)."""

    name: str
    version: str = "1"
    batch_size: int = 1024
    requires: ClassVar[tuple[tuple[str, str], ...]] = ()

    def __post_init__(self) -> None:
        for module, extra in self.requires:
            if importlib.util.find_spec(module) is None:
                msg = f"step `{self.name}` needs the `{module}` package; install it with `pip install '{extra}'`"
                raise MissingDependencyError(msg)


@dataclass(frozen=True, kw_only=True)
class Generator(Step):
    """Produces the rows of one shard. Subclasses set `schema` and implement `generate`.

    `categories` names columns whose value counts over kept rows go to the manifest and the dataset card.
    """

    schema: ClassVar[pa.Schema]
    categories: ClassVar[tuple[str, ...]] = ()

    def generate(self, ctx: ShardContext) -> Iterator[GeneratedBatch]:
        """Yield the batches of shard `ctx.shard_index`; the same ctx must give the same batches."""
        raise NotImplementedError

    def describe_input(self) -> dict[str, Any]:
        """Facts about the input recorded in the manifest (paths, counts); empty by default."""
        return {}


@dataclass(frozen=True, kw_only=True)
class Verifier(Step):
    """Scores rows; never drops them. Subclasses set `reads` and `scores` and implement `verify`."""

    reads: ClassVar[tuple[str, ...]] = ()
    scores: ClassVar[tuple[str, ...]] = ()

    def verify(self, table: pa.Table) -> list[Verdict]:
        """Return one verdict per row of `table` (which holds at least the `reads` columns)."""
        raise NotImplementedError


Decision = bool | tuple[bool, str] | tuple[bool, str, str]


@dataclass(frozen=True, kw_only=True)
class Filter(Step):
    """Drops rows with a reason code. Implement `keep` (per row) or override `keep_frame` (vectorised)."""

    reads: ClassVar[tuple[str, ...]] = ()

    def keep(self, row: Mapping[str, Any]) -> Decision:
        """Return True to keep `row`, or `(False, code)` / `(False, code, detail)` to drop it."""
        raise NotImplementedError

    def keep_frame(self, frame: pl.DataFrame) -> pl.DataFrame:
        """Return string columns `reason` (null keeps the row, a code drops it) and `detail` (null or the values)."""
        return self.decide_rows(frame, range(frame.height))

    def decide_rows(self, frame: pl.DataFrame, positions: Sequence[int]) -> pl.DataFrame:
        """`keep_frame`'s columns with `keep` asked for the rows at `positions` only; every other row is kept."""
        reasons: list[str | None] = [None] * frame.height
        details: list[str | None] = [None] * frame.height
        rows = frame.select(self.reads or frame.columns)[list(positions)].iter_rows(named=True)
        for position, row in zip(positions, rows, strict=True):
            decision = self.keep(row)
            kept, reason, detail = (decision, "dropped", "") if isinstance(decision, bool) else (*decision, "")[:3]
            if not kept:
                reasons[position], details[position] = check_reason_code(reason), detail or None
        return pl.DataFrame({"reason": reasons, "detail": details}, schema={"reason": pl.String, "detail": pl.String})
