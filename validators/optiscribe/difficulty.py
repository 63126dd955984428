"""Difficulty as measured SCIP effort: the node band an instruction's `easy`/`medium`/`hard` or explicit target
("needs about 10,000 nodes") asks for, how far a solve lands from it, and the band-following reward.

Bands are in B&B nodes (`getNTotalNodes()`, restarts included) under the row's fixed SCIP settings (the median
over SCIP seeds when they set `effort_seeds` > 1), measured at the asked size: easy 1–10 nodes (closed at or near
the root), medium 11–299, hard 300 and more (an instance stopped by the node cap with a solution counts as hard).
An explicit target N asks for [N/3, 3N]: node counts of one parameterisation spread over a factor of about 3
between instance seeds. A band whose lower edge is above the node cap cannot be shown and is refused.

Fixed node edges mean different things at different sizes (a 30-node max-cut never needs 300 nodes under most
parameterisations). `calibrate_bands` measures the effort a family reaches at the asked size instead: the node
counts of specs drawn uniformly over the request's free knobs, whose 10th-90th percentile range is split into
log-tertiles (easy below the first edge, hard from the second), the medium band no narrower than the seed noise
of one parameterisation (`seed_spread`: the same spec solved under several instance seeds), since a band narrower
than that cannot be followed by any challenger. A request carrying such a table uses it for its difficulty words;
the row records the band it was asked, so the verifier checks the calibrated one.
"""

from __future__ import annotations

import math
import statistics
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from synth.validators.optiscribe.spec import Difficulty, SpecError

BandTable = Mapping[Difficulty, tuple[int, int | None]]
DIFFICULTY_BANDS: dict[Difficulty, tuple[int, int | None]] = {"easy": (1, 10), "medium": (11, 299), "hard": (300, None)}
CALIBRATION_QUANTILES = (0.1, 0.9)
TARGET_FACTOR = 3.0
SPREAD_COVERAGE = 0.9
CAPPED_STATUSES = ("totalnodelimit", "nodelimit")


@dataclass(frozen=True)
class EffortBand:
    """A band of B&B nodes, `high` None for open above; `label` is the difficulty or `about N nodes`."""

    low: int
    high: int | None
    label: str

    def to_list(self) -> list[int | None]:
        """`[low, high]` as stored in a row's `asked` (high null when open)."""
        return [self.low, self.high]

    def contains(self, nodes: int, *, capped: bool = False) -> bool:
        """Whether a solve with `nodes` lies in the band; a capped solve only shows "at least `nodes`". An instance
        SCIP closes in presolving reports 0 nodes and counts as 1 (the root): it is as easy as an instance can be."""
        nodes = max(nodes, 1)
        if capped:
            return self.high is None and nodes >= self.low
        return self.low <= nodes and (self.high is None or nodes <= self.high)

    def distance(self, nodes: int, *, capped: bool = False) -> float:
        """Decades (log10) between `nodes` and the band; 0 inside."""
        if self.contains(nodes, capped=capped):
            return 0.0
        value = max(nodes, 1)
        if value < self.low:
            return math.log10(self.low / value)
        return math.log10(value / self.high) if self.high is not None else 0.0


def target_band(target: int) -> EffortBand:
    """The band of an explicit node target: [target/3, 3·target]."""
    if target < 1:
        msg = f"node target {target} must be at least 1"
        raise SpecError(msg, code="invalid_target")
    low = max(1, math.ceil(target / TARGET_FACTOR))
    return EffortBand(low, math.floor(target * TARGET_FACTOR), f"about {target} nodes")


def effort_band(
    difficulty: Difficulty | None, target_nodes: int | None, *, bands: BandTable | None = None
) -> EffortBand | None:
    """The band asked by an explicit target (preferred) or a difficulty word (from `bands`, a calibrated table,
    else `DIFFICULTY_BANDS`); None when neither is asked."""
    if target_nodes is not None:
        return target_band(target_nodes)
    if difficulty is None:
        return None
    low, high = (bands or DIFFICULTY_BANDS)[difficulty]
    return EffortBand(low, high, difficulty)


def seed_spread(groups: Sequence[Sequence[int]], *, coverage: float = SPREAD_COVERAGE) -> float:
    """Half-width in decades that holds `coverage` of one parameterisation's node counts around its median: the
    `coverage` quantile of |log10(nodes / median of the group)| over groups of solves of one spec under different
    instance seeds (groups of fewer than 2 solves are skipped)."""
    deviations = sorted(
        abs(math.log10(max(n, 1) / median))
        for group in groups
        if len(group) >= 2
        for median in [max(statistics.median(group), 1)]
        for n in group
    )
    if not deviations:
        msg = "seed spread needs at least one spec solved under 2 or more instance seeds"
        raise SpecError(msg, code="calibration_too_small")
    return deviations[min(len(deviations) - 1, round(coverage * (len(deviations) - 1)))]


def calibrate_bands(nodes: Sequence[int], *, spread: float | None = None) -> dict[Difficulty, tuple[int, int | None]]:
    """Easy / medium / hard node bands from node counts measured at one size: the [p10, p90] range of the counts
    (log scale) cut into thirds; easy is [1, e], medium [e+1, h−1], hard [h, open).

    The medium band is at least as wide as one parameterisation's seed noise, so a challenger that aims at its
    centre lands inside: `spread` (decades, from `seed_spread`) asks for a width of 2·spread, else a factor of 3
    (`TARGET_FACTOR`); the range is widened around its centre when a third of it is narrower. Node counts are
    integers, so the width is measured on the counts' half-node cover [low − ½, high + ½]: rounding the edges to
    whole nodes may not take it below the least width (near the root a factor-3 band of [4, 8] covers only 2.4,
    so the hard edge moves up to give [4, 10])."""
    if len(nodes) < 3:
        msg = f"band calibration needs at least 3 measured solves, got {len(nodes)}"
        raise SpecError(msg, code="calibration_too_small")
    ordered = sorted(max(int(n), 1) for n in nodes)
    low_q, high_q = (ordered[round(q * (len(ordered) - 1))] for q in CALIBRATION_QUANTILES)
    low, high = math.log10(low_q), math.log10(high_q)
    width = 2 * spread if spread is not None else math.log10(TARGET_FACTOR)
    if high - low < 3 * width:
        centre = 0.5 * (low + high)
        low = max(0.0, centre - 1.5 * width)
        high = low + 3 * width
    easy = max(1, round(10 ** (low + (high - low) / 3)))
    hard = max(easy + 2, round(10 ** (low + 2 * (high - low) / 3)), _least_hard_edge(easy, 10**width))
    return {"easy": (1, easy), "medium": (easy + 1, hard - 1), "hard": (hard, None)}


def _least_hard_edge(easy_edge: int, factor: float) -> int:
    """The least hard edge h whose medium band [e+1, h−1] covers `factor` on half-node edges: (h − ½)/(e + ½) ≥
    factor (a part in 10⁹ is forgiven, so a factor of exactly 3 is not pushed up by float rounding)."""
    cover_top = factor * (easy_edge + 0.5)
    return math.ceil(cover_top * (1 - 1e-9) + 0.5)


def calibrate_bands_under_cap(
    nodes: Sequence[int], *, spread: float | None, node_cap: int
) -> tuple[dict[Difficulty, tuple[int, int | None]], bool]:
    """`calibrate_bands` widened to the seed `spread` when the hard band's edge then stays at least a factor of 3
    below the node cap; otherwise (seed noise too wide for three bands under the cap: no parameterisation follows a
    band reliably, only generate-then-verify does) the fixed least width. Returns the table and whether it was
    widened."""
    if spread is not None:
        widened = calibrate_bands(nodes, spread=spread)
        hard_edge = widened["hard"][0]
        if hard_edge * TARGET_FACTOR <= node_cap:
            return widened, True
    return calibrate_bands(nodes), False


def band_table_from_dict(data: Mapping[str, Any]) -> dict[Difficulty, tuple[int, int | None]]:
    """A band table from plain JSON (`{"easy": [1, 5], …}`), checked: all three words, ordered, disjoint."""
    words: tuple[Difficulty, ...] = ("easy", "medium", "hard")
    if sorted(data) != sorted(words):
        msg = f"bands: give exactly {list(words)}, got {sorted(data)}"
        raise SpecError(msg, code="invalid_bands")
    table = {w: (int(data[w][0]), None if data[w][1] is None else int(data[w][1])) for w in words}
    previous = 0
    for word in words:
        low, high = table[word]
        if low != previous + 1 or (high is not None and high < low) or (high is None) != (word == "hard"):
            msg = f"bands: `{word}` {list(table[word])} does not follow the band before it (ends at {previous})"
            raise SpecError(msg, code="invalid_bands")
        previous = high or 0
    return table


def band_from_asked(asked: Any) -> EffortBand | None:
    """The band stored in a row's `asked["effort"]` (a `[low, high]` pair), or None."""
    effort = asked.get("effort") if isinstance(asked, dict) else None
    if effort is None:
        return None
    return EffortBand(int(effort[0]), None if effort[1] is None else int(effort[1]), "asked")


def check_band_reachable(band: EffortBand | None, node_cap: int) -> None:
    """Refuse a band SCIP's node cap cannot reach (its lower edge at or above the cap)."""
    if band is not None and band.low >= node_cap:
        msg = f"difficulty {band.label!r} needs at least {band.low} nodes, not below the node cap {node_cap}"
        raise SpecError(msg, code="band_above_cap")


def effort_violations(band: EffortBand | None, *, status: str | None, nodes: int | None) -> list[str]:
    """One reason (`effort_unmeasured`, `effort_outside`) when a solve is not in the asked band."""
    if band is None:
        return []
    if nodes is None or status is None:
        return ["effort_unmeasured: no recorded SCIP solve to compare with the asked difficulty"]
    capped = status in CAPPED_STATUSES
    if band.contains(nodes, capped=capped):
        return []
    shown = f"{nodes}{'+ (node cap)' if capped else ''} nodes"
    high = "inf" if band.high is None else str(band.high)
    return [f"effort_outside: {shown}, asked [{band.low}, {high}]"]


def band_reward(band: EffortBand, *, feasible: bool, nodes: int, status: str) -> float:
    """In [0.5, 1] inside the band, peaking at its (log-scale) centre (and below it when the band starts at 1 node)
    so a learner aims away from the edges; outside, 0.5 at the edge falling linearly to 0 one decade away; 0
    without a feasible solution. An open band (hard) pays 1 anywhere inside."""
    if not feasible:
        return 0.0
    capped = status in CAPPED_STATUSES
    if not band.contains(nodes, capped=capped):
        return max(0.0, 0.5 * (1.0 - band.distance(nodes, capped=capped)))
    if band.high is None or band.high <= band.low:
        return 1.0
    centre = 0.5 * (math.log10(band.low) + math.log10(band.high))
    half = 0.5 * (math.log10(band.high) - math.log10(band.low))
    offset = math.log10(max(nodes, 1)) - centre
    if band.low <= 1 and offset < 0:  # no count lies below 1 node: the low side of an easy band is safe
        return 1.0
    return 1.0 - 0.5 * min(abs(offset) / half, 1.0)
