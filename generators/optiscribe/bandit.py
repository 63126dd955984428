"""A second learner for the scripted challenger: a factored Thompson-sampling bandit over binned knobs.

Each free dimension of a request is split into `bins` equal slices of its normalised range (choices are their
own arms); each arm keeps a count and a reward sum. To propose, every dimension draws a score per arm,
mean + N(0, 1)·scale/√(count+1) (untried arms start at `prior`), takes the best arm, and draws a position
uniformly inside it. Rewards are averaged per arm, so the bandit is robust to the heavy-tailed node counts
that make single-sample elites (CEM) noisy. State is plain JSON.
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from synth.generators.optiscribe.policy import Dimension, Draws, KnobLearner, Observed


def _arm(dim: Dimension, drawn: float | str, bins: int) -> str:
    if dim.kind == "choice":
        return str(drawn)
    return str(min(int(float(drawn) * bins), bins - 1))


@dataclass
class BanditPolicy(KnobLearner):
    """Per-dimension arm statistics (counts and reward sums), sampled by Gaussian Thompson sampling."""

    counts: dict[str, dict[str, int]] = field(default_factory=dict)
    sums: dict[str, dict[str, float]] = field(default_factory=dict)
    bins: int = 4
    scale: float = 0.3
    prior: float = 0.5

    def _arms(self, dim: Dimension) -> list[str]:
        return list(dim.choices) if dim.kind == "choice" else [str(b) for b in range(self.bins)]

    def _pick(self, dim: Dimension, rng: np.random.Generator) -> str:
        arms = self._arms(dim)
        counts, sums = self.counts.get(dim.name, {}), self.sums.get(dim.name, {})
        scores = []
        for arm in arms:
            count = counts.get(arm, 0)
            mean = sums.get(arm, 0.0) / count if count else self.prior
            scores.append(mean + rng.normal() * self.scale / math.sqrt(count + 1))
        return arms[int(np.argmax(scores))]

    def draw(self, dims: Sequence[Dimension], rng: np.random.Generator) -> Draws:
        """Each dimension's Thompson-sampled arm; a position drawn uniformly inside a numeric arm."""
        draws: Draws = {}
        for dim in dims:
            arm = self._pick(dim, rng)
            draws[dim.name] = arm if dim.kind == "choice" else (int(arm) + float(rng.random())) / self.bins
        return draws

    def update(self, proposals: Observed, rewards: Sequence[float], *, tiebreak: Sequence[float] | None = None) -> None:
        """Add each proposal's reward to the arms it used (`tiebreak` is unused: rewards are averaged)."""
        for draws, reward in zip(proposals, rewards, strict=True):
            for name, drawn in draws.items():
                kind = "choice" if isinstance(drawn, str) else "float"
                arm = _arm(Dimension(name, kind), drawn, self.bins)  # type: ignore[arg-type]
                self.counts.setdefault(name, {})[arm] = self.counts.get(name, {}).get(arm, 0) + 1
                self.sums.setdefault(name, {})[arm] = self.sums.get(name, {}).get(arm, 0.0) + float(reward)

    def best_arms(self) -> dict[str, str]:
        """The arm with the highest mean reward per dimension (ties: the first in sorted order)."""
        best = {}
        for name, counts in sorted(self.counts.items()):
            means = {arm: self.sums[name][arm] / count for arm, count in sorted(counts.items()) if count}
            best[name] = max(means, key=lambda arm: means[arm])
        return best

    def to_dict(self) -> dict[str, Any]:
        """The state as plain JSON values."""
        return {
            "kind": "bandit",
            "counts": {name: dict(sorted(c.items())) for name, c in sorted(self.counts.items())},
            "sums": {name: dict(sorted(s.items())) for name, s in sorted(self.sums.items())},
            "bins": self.bins,
            "scale": self.scale,
            "prior": self.prior,
        }

    @classmethod
    def from_dict(cls, data: Mapping[str, Any]) -> BanditPolicy:
        """Rebuild a policy saved by `to_dict`."""
        return cls(
            counts={name: dict(c) for name, c in data["counts"].items()},
            sums={name: dict(s) for name, s in data["sums"].items()},
            bins=int(data["bins"]),
            scale=float(data["scale"]),
            prior=float(data["prior"]),
        )
