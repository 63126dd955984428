"""The self-play reward: a feasibility gate times a hardness score from B&B nodes and the post-cut root gap."""

from __future__ import annotations

import math
from collections.abc import Mapping
from dataclasses import asdict, dataclass
from typing import Any, Literal, get_args

from synth.validators.optiscribe.difficulty import CAPPED_STATUSES, EffortBand, band_reward

REWARD_VERSION = "3"
CappedPay = Literal["estimate", "count"]  # what a node-capped solve is paid for
CAPPED_PAYS: tuple[CappedPay, ...] = get_args(CappedPay)


@dataclass(frozen=True, kw_only=True)
class RewardSettings:
    """R = node_weight·clip(log(1+nodes)/log(1+node_cap)) + gap_weight·clip(postcut_gap/gap_cap) − timeout_penalty.

    The gate: SCIP found a feasible solution; otherwise R = 0. A solve stopped by the node cap is paid for the larger
    of its nodes and SCIP's estimate of the full tree (`estimated_nodes`): without it every capped instance earns
    the same node part, and a learner cannot tell one just past the cap from one that needs ten times more
    (reward version 3; `capped_nodes: count` pays the capped node count, as version 2 did). A time-limit stop is
    penalised because it is not reproducible. `hard_margin` (decades, 0 = off) changes what a request asking an
    open-above band (hard) is paid: the band reward with a margin (`margin_band_reward`) instead of the hardness
    reward, so that a challenger aims that far above the band's edge rather than wherever the post-cut gap pays
    most.
    """

    node_weight: float = 0.7
    gap_weight: float = 0.3
    node_cap: int = 5000
    gap_cap: float = 0.25
    timeout_penalty: float = 0.2
    hard_margin: float = 0.0
    capped_nodes: CappedPay = "estimate"

    def to_dict(self) -> dict[str, Any]:
        """Plain values."""
        return asdict(self)


def _clip(value: float) -> float:
    return min(max(value, 0.0), 1.0)


def hardness_score(nodes: float, postcut_gap: float | None, settings: RewardSettings) -> float:
    """The hardness part of the reward, in [0, node_weight + gap_weight]."""
    node_part = _clip(math.log1p(max(nodes, 0.0)) / math.log1p(settings.node_cap))
    gap_part = _clip((postcut_gap or 0.0) / settings.gap_cap)
    return settings.node_weight * node_part + settings.gap_weight * gap_part


def estimated_nodes(stats: Mapping[str, Any], settings: RewardSettings | None = None) -> float:
    """The nodes a solve is paid for: its count, or for a solve stopped by the node cap the larger of that and SCIP's
    tree-size estimate (`treesize_estimate`, when recorded; not with `capped_nodes: count`)."""
    nodes = float(stats["nodes"])
    estimate = stats.get("treesize_estimate")
    counted = (settings or RewardSettings()).capped_nodes == "count"
    if stats.get("status") in CAPPED_STATUSES and estimate is not None and not counted:
        return max(nodes, float(estimate))
    return nodes


def compute_reward(stats: Mapping[str, Any], settings: RewardSettings | None = None) -> float:
    """The reward of one solve, from SCIP statistics (`status`, `feasible`, `nodes`, `treesize_estimate`,
    `postcut_gap`)."""
    settings = settings or RewardSettings()
    if not stats.get("feasible"):
        return 0.0
    reward = hardness_score(estimated_nodes(stats, settings), stats.get("postcut_gap"), settings)
    if stats.get("status") == "timelimit":
        reward -= settings.timeout_penalty
    return max(reward, 0.0)


def margin_band_reward(band: EffortBand, *, margin: float, feasible: bool, nodes: int, status: str) -> float:
    """An open-above band's reward with a margin: below the edge as `band_reward` (at most 0.5, 0 a decade away);
    inside, 0.5 at the edge rising linearly in log10(nodes) to 1 at `margin` decades above it; 0 without a feasible
    solution. A solve stopped by the node cap pays what its node count shows."""
    if not feasible or nodes < band.low:
        return band_reward(band, feasible=feasible, nodes=nodes, status=status)
    return 0.5 + 0.5 * min(1.0, math.log10(max(nodes, 1) / band.low) / margin)


def request_reward(stats: Mapping[str, Any], band: EffortBand | None, settings: RewardSettings | None = None) -> float:
    """The reward of a solve for a request asking `band`: the hardness reward when no band or an open-above band
    (hard) is asked (with `hard_margin`, the hard band's margin reward instead), else the band reward (1 inside, 0 a
    decade away): an easy request is not paid for hardness."""
    settings = settings or RewardSettings()
    if band is None or (band.high is None and settings.hard_margin <= 0):
        return compute_reward(stats, settings)
    feasible, nodes, status = bool(stats.get("feasible")), int(stats.get("nodes") or 0), str(stats.get("status"))
    if band.high is None:
        return margin_band_reward(band, margin=settings.hard_margin, feasible=feasible, nodes=nodes, status=status)
    return band_reward(band, feasible=feasible, nodes=nodes, status=status)


def is_trivial(nodes: float, postcut_gap: float | None) -> bool:
    """At most one B&B node and a zero post-cut gap: SCIP closed it at the root."""
    return nodes <= 1 and (postcut_gap or 0.0) <= 1e-9
