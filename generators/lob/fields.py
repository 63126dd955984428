"""The message-field model shared by ReLOBGen and the rejection baseline, fit by counting on real messages.

Every field is a categorical over integer values (a "token") or a quantile table, and every categorical can be
sampled under a prefix mask (only values ≤ a bound), which is how ReLOBGen admits only consistent values.
The rejection baseline samples the very same distributions without masks.

Fields (LOBSTER types 1–4; types 5–7 do not change the visible book and are not generated):
- `event`: (type, side) given the context: spread bucket × L1-imbalance bucket.
- `delay`: seconds to the next message, per type (quantile table; ties at 0 are kept).
- `limit_offset`: a new order's price in ticks from its own side's best, positive towards the opposite side
  (0 joins the best, 1 improves it by a tick), per spread bucket.
- `size`: per type; `full`: the chance that a cancel/execution takes the whole remaining order.
- `reference_depth`, `reference_age`: the price level (ticks behind the same-side best) and the age of the
  order a cancel/execution refers to; the rejection baseline samples them free-form, ReLOBGen's pointer replaces
  them with a choice among the resting orders.
"""

from __future__ import annotations

from bisect import bisect_right
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

import numpy as np

SPREAD_EDGES = (1, 2, 4, 8, 12, 16, 24)
"""Upper edges (ticks) of the spread buckets; a last bucket takes wider spreads, another an empty side."""
IMBALANCE_EDGES = (-1 / 3, 1 / 3)
EVENT_TYPES = (1, 2, 3, 4)
SIDES = (1, -1)
QUANTILES = 257


def spread_bucket(spread_ticks: int | None) -> int:
    """Bucket index of a spread in ticks (None, an empty side, has the last bucket)."""
    if spread_ticks is None:
        return len(SPREAD_EDGES) + 1
    return bisect_right(SPREAD_EDGES, spread_ticks - 1) if spread_ticks > 0 else 0


def context_index(spread_ticks: int | None, imbalance: float) -> int:
    """The conditioning context of the event head: spread bucket × imbalance bucket."""
    return spread_bucket(spread_ticks) * (len(IMBALANCE_EDGES) + 1) + bisect_right(IMBALANCE_EDGES, imbalance)


CONTEXTS = (len(SPREAD_EDGES) + 2) * (len(IMBALANCE_EDGES) + 1)
SPREAD_BUCKETS = len(SPREAD_EDGES) + 2


def event_index(event: int, side: int) -> int:
    """Position of (type, side) in the event head: types 1..4 × (buy, sell)."""
    return 2 * (event - 1) + (side != 1)


@dataclass(frozen=True)
class Categorical:
    """A distribution over sorted integer `values` with `counts`, smoothed over every integer of [low, high].

    The smoothing spreads a `smoothing` share of the total mass evenly over the range, so a masked draw always has
    support.
    """

    values: tuple[int, ...]
    counts: tuple[float, ...]
    low: int
    high: int
    smoothing: float = 0.01
    _cumulative: np.ndarray = field(init=False, repr=False, compare=False)
    _per_integer: float = field(init=False, repr=False, compare=False)

    def __post_init__(self) -> None:
        if self.low > self.high:
            msg = f"empty range [{self.low}, {self.high}]"
            raise ValueError(msg)
        cumulative = np.cumsum(np.asarray(self.counts, dtype=np.float64))
        total = float(cumulative[-1]) if len(cumulative) else 1.0
        object.__setattr__(self, "_cumulative", cumulative)
        object.__setattr__(self, "_per_integer", self.smoothing * total / (self.high - self.low + 1))

    @classmethod
    def fit(cls, observed: Sequence[int], *, low: int, high: int, smoothing: float = 0.01) -> Categorical:
        """Count `observed` values, clipped into [low, high]."""
        clipped = np.clip(np.asarray(observed, dtype=np.int64), low, high)
        values, counts = np.unique(clipped, return_counts=True)
        return cls(tuple(int(v) for v in values), tuple(float(c) for c in counts), low, high, smoothing)

    def sample(self, u: float, *, at_most: int | None = None) -> int | None:
        """Draw with uniform `u` ∈ [0, 1) from the values ≤ `at_most` (all values without a bound); None if none."""
        high = self.high if at_most is None else min(self.high, at_most)
        if high < self.low:
            return None
        kept = bisect_right(self.values, high)
        counted = float(self._cumulative[kept - 1]) if kept else 0.0
        smooth = self._per_integer * (high - self.low + 1)
        target = u * (counted + smooth)
        if target < counted:
            return self.values[int(np.searchsorted(self._cumulative, target, side="right"))]
        share = (target - counted) / smooth if smooth else 0.0
        return min(self.low + int(share * (high - self.low + 1)), high)

    def to_dict(self) -> dict[str, Any]:
        """JSON-ready form."""
        return {
            "values": list(self.values),
            "counts": list(self.counts),
            "low": self.low,
            "high": self.high,
            "smoothing": self.smoothing,
        }

    @classmethod
    def from_dict(cls, data: Mapping[str, Any]) -> Categorical:
        """Inverse of `to_dict`."""
        return cls(tuple(data["values"]), tuple(data["counts"]), data["low"], data["high"], data["smoothing"])


@dataclass(frozen=True)
class QuantileTable:
    """An empirical distribution kept as evenly spaced quantiles; draws interpolate between them."""

    quantiles: tuple[float, ...]

    @classmethod
    def fit(cls, observed: Sequence[float]) -> QuantileTable:
        """Quantiles of `observed` (at least one value)."""
        if len(observed) == 0:
            return cls((0.0, 0.0))
        levels = np.linspace(0.0, 1.0, QUANTILES)
        return cls(tuple(float(q) for q in np.quantile(np.asarray(observed, dtype=np.float64), levels)))

    def sample(self, u: float) -> float:
        """The value at quantile `u` ∈ [0, 1)."""
        position = u * (len(self.quantiles) - 1)
        index = int(position)
        low = self.quantiles[index]
        if index + 1 >= len(self.quantiles):
            return low
        return low + (position - index) * (self.quantiles[index + 1] - low)


@dataclass(frozen=True)
class FieldModel:
    """All message-field distributions (see the module docstring); `tick` is the price grid."""

    tick: int
    event_counts: tuple[tuple[float, ...], ...]
    delay: Mapping[int, QuantileTable]
    limit_offset: tuple[Categorical, ...]
    size: Mapping[int, Categorical]
    full: Mapping[int, float]
    reference_depth: Mapping[int, Categorical]
    reference_age: QuantileTable
    _event_probabilities: np.ndarray = field(init=False, repr=False, compare=False)

    def __post_init__(self) -> None:
        counts = np.asarray(self.event_counts, dtype=np.float64) + 0.5
        object.__setattr__(self, "_event_probabilities", counts / counts.sum(axis=1, keepdims=True))

    def event_probabilities(self, context: int) -> np.ndarray:
        """p(type, side | context) over the 8 (type, side) pairs, in `event_index` order."""
        return self._event_probabilities[context]

    def to_dict(self) -> dict[str, Any]:
        """JSON-ready form."""
        return {
            "tick": self.tick,
            "event_counts": [list(row) for row in self.event_counts],
            "delay": {str(k): list(v.quantiles) for k, v in self.delay.items()},
            "limit_offset": [c.to_dict() for c in self.limit_offset],
            "size": {str(k): v.to_dict() for k, v in self.size.items()},
            "full": {str(k): v for k, v in self.full.items()},
            "reference_depth": {str(k): v.to_dict() for k, v in self.reference_depth.items()},
            "reference_age": list(self.reference_age.quantiles),
        }

    @classmethod
    def from_dict(cls, data: Mapping[str, Any]) -> FieldModel:
        """Inverse of `to_dict`."""
        return cls(
            tick=int(data["tick"]),
            event_counts=tuple(tuple(row) for row in data["event_counts"]),
            delay={int(k): QuantileTable(tuple(v)) for k, v in data["delay"].items()},
            limit_offset=tuple(Categorical.from_dict(c) for c in data["limit_offset"]),
            size={int(k): Categorical.from_dict(v) for k, v in data["size"].items()},
            full={int(k): float(v) for k, v in data["full"].items()},
            reference_depth={int(k): Categorical.from_dict(v) for k, v in data["reference_depth"].items()},
            reference_age=QuantileTable(tuple(data["reference_age"])),
        )
