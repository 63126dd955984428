"""Shaped turn rewards, the undiscounted trajectory return, and group-relative (GRPO) advantages.

A turn's reward (research note, section 5): an invalid response gets `invalid`; a valid one gets
`progress_weight` × the mean over scored properties of clip(gain / threshold, −1, 1), plus `similarity_weight` ×
Tanimoto to the source, plus `success_bonus` when it succeeds with similarity at least `similarity_floor`, minus
`repeat_penalty` when it repeats the source or an earlier turn's molecule.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np

from synth.validators.marco.evaluator import Evaluation
from synth.validators.marco.properties import SPECS


@dataclass(frozen=True, slots=True)
class RewardSettings:
    """Weights of the shaped turn reward."""

    invalid: float = -1.0
    progress_weight: float = 1.0
    similarity_weight: float = 0.5
    success_bonus: float = 1.0
    repeat_penalty: float = 0.5
    similarity_floor: float = 0.4


def turn_reward(evaluation: Evaluation, *, seen: Sequence[str], settings: RewardSettings) -> float:
    """The shaped reward of one graded turn; `seen` holds the source and earlier turns' canonical SMILES."""
    if not evaluation.valid:
        return settings.invalid
    scored = [c for c in evaluation.changes if c.scored and c.gain is not None]
    progress = (
        sum(float(np.clip(c.gain / SPECS[c.key].threshold, -1.0, 1.0)) for c in scored) / len(scored)  # type: ignore[operator]
        if scored
        else 0.0
    )
    similarity = evaluation.similarity or 0.0
    reward = settings.progress_weight * progress + settings.similarity_weight * similarity
    if evaluation.success and similarity >= settings.similarity_floor:
        reward += settings.success_bonus
    if evaluation.canonical in seen:
        reward -= settings.repeat_penalty
    return reward


def trajectory_return(rewards: Sequence[float]) -> float:
    """The undiscounted return: the sum of the turn rewards."""
    return float(sum(rewards))


def group_advantages(returns: Sequence[float], *, eps: float = 1e-6) -> tuple[float, float, list[float]]:
    """GRPO statistics of one group: (mean, population std, (R − mean) / (std + eps) per trajectory)."""
    values = np.asarray(returns, dtype=np.float64)
    if values.size == 0:
        msg = "`returns` is empty: a group needs at least one trajectory"
        raise ValueError(msg)
    mean, std = float(values.mean()), float(values.std())
    return mean, std, [float(v) for v in (values - mean) / (std + eps)]
