"""The self-play reward: a feasibility gate times a hardness score from B&B nodes and the post-cut root gap."""

from __future__ import annotations

import math
from collections.abc import Mapping
from dataclasses import asdict, dataclass
from typing import Any

from synth.validators.optiscribe.difficulty import EffortBand, band_reward

REWARD_VERSION = "2"


@dataclass(frozen=True, kw_only=True)
class RewardSettings:
    """R = node_weight·clip(log(1+nodes)/log(1+node_cap)) + gap_weight·clip(postcut_gap/gap_cap) − timeout_penalty.

    The gate: SCIP found a feasible solution; otherwise R = 0. A time-limit stop is penalised because it is not
    reproducible.
    """

    node_weight: float = 0.7
    gap_weight: float = 0.3
    node_cap: int = 5000
    gap_cap: float = 0.25
    timeout_penalty: float = 0.2

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


def compute_reward(stats: Mapping[str, Any], settings: RewardSettings | None = None) -> float:
    """The reward of one solve, from SCIP statistics (`status`, `feasible`, `nodes`, `postcut_gap`)."""
    settings = settings or RewardSettings()
    if not stats.get("feasible"):
        return 0.0
    reward = hardness_score(float(stats["nodes"]), stats.get("postcut_gap"), settings)
    if stats.get("status") == "timelimit":
        reward -= settings.timeout_penalty
    return max(reward, 0.0)


def request_reward(stats: Mapping[str, Any], band: EffortBand | None, settings: RewardSettings | None = None) -> float:
    """The reward of a solve for a request asking `band`: the hardness reward when no band or an open-above band
    (hard) is asked, else the band reward (1 inside, 0 a decade away): an easy request is not paid for hardness."""
    if band is None or band.high is None:
        return compute_reward(stats, settings)
    return band_reward(
        band, feasible=bool(stats.get("feasible")), nodes=int(stats.get("nodes") or 0), status=str(stats.get("status"))
    )


def is_trivial(nodes: float, postcut_gap: float | None) -> bool:
    """At most one B&B node and a zero post-cut gap: SCIP closed it at the root."""
    return nodes <= 1 and (postcut_gap or 0.0) <= 1e-9
