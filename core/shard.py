"""What one shard produces: batches of kept and rejected rows, and the shard's counters and timings."""

from __future__ import annotations

from collections import Counter
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

import pyarrow as pa


@dataclass(slots=True)
class ShardStats:
    """Counters and timings of one shard; merged into the manifest and the dataset card."""

    generated: int = 0
    kept: int = 0
    rejected: Counter[str] = field(default_factory=Counter)
    verifier_passed: Counter[str] = field(default_factory=Counter)
    verifier_total: Counter[str] = field(default_factory=Counter)
    seconds: Counter[str] = field(default_factory=Counter)
    categories: dict[str, Counter[str]] = field(default_factory=dict)

    def count_categories(self, table: pa.Table, columns: Sequence[str]) -> None:
        """Count the values of category columns over kept rows (each element of a list column counts once)."""
        for column in columns:
            counter = self.categories.setdefault(column, Counter())
            for value in table.column(column).to_pylist():
                counter.update(str(v) for v in (dict.fromkeys(value) if isinstance(value, list) else (value,)))

    def to_dict(self) -> dict[str, Any]:
        """Return the stats as JSON-ready values."""
        categories = {name: dict(sorted(counts.items())) for name, counts in sorted(self.categories.items())}
        return ({"categories": categories} if categories else {}) | {
            "generated": self.generated,
            "kept": self.kept,
            "rejected": dict(sorted(self.rejected.items())),
            "verifiers": {
                name: {"passed": self.verifier_passed[name], "total": total}
                for name, total in sorted(self.verifier_total.items())
            },
            "seconds": {name: round(value, 4) for name, value in sorted(self.seconds.items())},
        }


@dataclass(frozen=True, slots=True)
class BatchOutput:
    """One processed batch: rows kept and rows rejected (with `filter_reason`), both schema-cast."""

    kept: pa.Table
    rejected: pa.Table
