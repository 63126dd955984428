"""A third learner for the scripted challenger: Bayesian optimisation with a Gaussian-process surrogate.

The CEM keeps only the current round's elite, so with one noisy solve per proposal its means follow seed luck and
its spreads collapse within a few rounds; the bandit averages rewards per arm but per dimension, blind to knobs
that only pay together. This learner keeps every (draws, reward) observation, fits a Gaussian process over the
normalised dimensions (choices one-hot; Matérn 5/2 with one length scale per feature, plus a white-noise term
that absorbs instance-seed noise; scikit-learn), and proposes by Thompson sampling: one joint posterior draw over
a pool of points (uniform, some snapped to the range edges, and perturbations of the best observed ones), taking
the pool point where the draw is highest. "Best observed" means highest posterior mean, not highest raw reward: one
lucky instance seed does not anchor the search. Until `initial_samples` observations exist it proposes uniformly
over the box (the initial design). Thompson sampling explores by design; the `trained` policy that generates after
self-play exploits instead, inside a trust region: among the best observed points and perturbations of them, the
one where the posterior mean is highest (a fresh pool per draw, so its specs still vary around the best region;
never a corner of the box the GP only extrapolates to). The observations are the state, as plain JSON.
"""

from __future__ import annotations

import warnings
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field, replace
from typing import Any

import numpy as np

from synth.generators.optiscribe.policy import Dimension, Draws, KnobLearner, Observed


def _features(dims: Sequence[Dimension], draws: Mapping[str, float | str]) -> list[float]:
    row: list[float] = []
    for dim in dims:
        if dim.kind == "choice":
            row += [1.0 if draws[dim.name] == choice else 0.0 for choice in dim.choices]
        else:
            row.append(float(draws[dim.name]))
    return row


@dataclass
class GaussianProcessPolicy(KnobLearner):
    """Observed (draws, reward) pairs, and the Thompson-sampling proposal rule over a GP fitted to them."""

    observations: list[dict[str, Any]] = field(default_factory=list)
    initial_samples: int = 8
    pool_size: int = 256
    edge_share: float = 0.15
    local_share: float = 0.25
    local_std: float = 0.08
    exploit: bool = False
    _fitted: tuple[tuple[str, ...], int, Any] | None = field(default=None, repr=False, compare=False)

    def _matching(self, dims: Sequence[Dimension]) -> list[dict[str, Any]]:
        names = sorted(dim.name for dim in dims)
        return [obs for obs in self.observations if sorted(obs["draws"]) == names]

    def _uniform(self, dims: Sequence[Dimension], rng: np.random.Generator) -> Draws:
        return {
            dim.name: dim.choices[int(rng.integers(len(dim.choices)))] if dim.kind == "choice" else float(rng.random())
            for dim in dims
        }

    def _model(self, dims: Sequence[Dimension], seen: list[dict[str, Any]]) -> Any:
        """The GP fitted to `seen` (refitted only when observations were added since the last fit)."""
        key = tuple(dim.name for dim in dims)
        if self._fitted is not None and self._fitted[:2] == (key, len(seen)):
            return self._fitted[2]
        from sklearn.exceptions import ConvergenceWarning
        from sklearn.gaussian_process import GaussianProcessRegressor
        from sklearn.gaussian_process.kernels import ConstantKernel, Matern, WhiteKernel

        x = np.array([_features(dims, obs["draws"]) for obs in seen])
        y = np.array([float(obs["reward"]) for obs in seen])
        kernel = ConstantKernel(1.0, (1e-2, 1e2)) * Matern(
            length_scale=np.full(x.shape[1], 0.3), length_scale_bounds=(0.05, 5.0), nu=2.5
        ) + WhiteKernel(0.1, (1e-4, 1.0))
        model = GaussianProcessRegressor(kernel, normalize_y=True, n_restarts_optimizer=0, random_state=0)
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", ConvergenceWarning)
            model.fit(x, y)
        self._fitted = (key, len(seen), model)
        return model

    def _best_observed(self, dims: Sequence[Dimension], seen: list[dict[str, Any]], model: Any) -> list[Draws]:
        """The draws of the four observations with the highest posterior mean (the GP's denoised ranking)."""
        means = model.predict(np.array([_features(dims, obs["draws"]) for obs in seen]))
        return [dict(seen[i]["draws"]) for i in np.argsort(-means, kind="stable")[:4]]

    def _pool(
        self, dims: Sequence[Dimension], best: list[Draws], rng: np.random.Generator, *, local: int
    ) -> list[Draws]:
        """`local` perturbations of `best`, then uniform points (a share snapped to the edges) up to `pool_size`."""
        pool = []
        for index in range(self.pool_size):
            if index < local:
                draws = dict(best[index % len(best)])
                for dim in dims:
                    if dim.kind != "choice":
                        draws[dim.name] = float(np.clip(float(draws[dim.name]) + rng.normal(0, self.local_std), 0, 1))
                    elif rng.random() < 0.1:
                        draws[dim.name] = dim.choices[int(rng.integers(len(dim.choices)))]
            else:
                draws = self._uniform(dims, rng)
                for dim in dims:
                    if dim.kind != "choice" and rng.random() < self.edge_share:
                        draws[dim.name] = float(rng.integers(2))
            pool.append(draws)
        return pool

    def draw(self, dims: Sequence[Dimension], rng: np.random.Generator) -> Draws:
        """Uniform during the initial design, else the pool point where a posterior draw is highest (with `exploit`,
        where the posterior mean is highest among the best observed points and their perturbations)."""
        seen = self._matching(dims)
        if len(seen) < max(self.initial_samples, 2) or not dims:
            return self._uniform(dims, rng)
        model = self._model(dims, seen)
        best = self._best_observed(dims, seen, model)
        if self.exploit:
            pool = self._pool(dims, best, rng, local=self.pool_size)
            return pool[int(np.argmax(model.predict(np.array([_features(dims, draws) for draws in pool]))))]
        pool = self._pool(dims, best, rng, local=int(self.local_share * self.pool_size))
        x = np.array([_features(dims, draws) for draws in pool])
        drawn = model.sample_y(x, n_samples=1, random_state=int(rng.integers(2**31))).ravel()
        return pool[int(np.argmax(drawn))]

    def trained(self) -> GaussianProcessPolicy:
        """This policy exploiting its posterior mean (the same observations)."""
        return replace(self, exploit=True)

    def update(self, proposals: Observed, rewards: Sequence[float], *, tiebreak: Sequence[float] | None = None) -> None:
        """Record each proposal's reward (`tiebreak` is unused: the GP's noise term handles ties and noise)."""
        for draws, reward in zip(proposals, rewards, strict=True):
            self.observations.append({"draws": dict(draws), "reward": float(reward)})

    def to_dict(self) -> dict[str, Any]:
        """The state as plain JSON values."""
        return {
            "kind": "gp",
            "observations": [
                {"draws": dict(sorted(obs["draws"].items())), "reward": obs["reward"]} for obs in self.observations
            ],
            "initial_samples": self.initial_samples,
            "pool_size": self.pool_size,
            "edge_share": self.edge_share,
            "local_share": self.local_share,
            "local_std": self.local_std,
            "exploit": self.exploit,
        }

    @classmethod
    def from_dict(cls, data: Mapping[str, Any]) -> GaussianProcessPolicy:
        """Rebuild a policy saved by `to_dict`."""
        return cls(
            observations=[
                {"draws": dict(obs["draws"]), "reward": float(obs["reward"])} for obs in data["observations"]
            ],
            initial_samples=int(data["initial_samples"]),
            pool_size=int(data["pool_size"]),
            edge_share=float(data["edge_share"]),
            local_share=float(data["local_share"]),
            local_std=float(data["local_std"]),
            exploit=bool(data.get("exploit", False)),
        )
