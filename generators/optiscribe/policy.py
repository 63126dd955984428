"""The scripted challenger's learner: a cross-entropy-method policy over the free knobs of a request.

Each free dimension (a numeric knob, size or density the instruction leaves a range for) has a Gaussian over
its normalised position in [0, 1] (log-scaled when the range spans a factor of 10 or more); each free choice
knob has a categorical distribution. After a round, the elite (top `elite_fraction` by reward) pulls the means,
spreads and choice probabilities towards itself with `smoothing`. The state is plain JSON, so training can
stop after any round and resume from the saved file.
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any, Literal

import numpy as np

from synth.validators.optiscribe.request import InstanceRequest
from synth.validators.optiscribe.spec import InstanceSpec, KnobValue, family_spec

MIN_PROB = 0.02


@dataclass(frozen=True)
class Dimension:
    """One free dimension of a request: a number in [low, high] (maybe log-scaled) or a choice."""

    name: str
    kind: Literal["float", "int", "choice"]
    low: float = 0.0
    high: float = 0.0
    choices: tuple[str, ...] = ()
    default: KnobValue = 0.0

    @property
    def log_scale(self) -> bool:
        """Whether positions are spread on a log scale (positive ranges spanning 10x or more)."""
        return self.kind != "choice" and self.low > 0 and self.high / self.low >= 10

    def value(self, position: float) -> float | int:
        """The value at normalised `position` in [0, 1]."""
        if self.log_scale:
            value = math.exp(math.log(self.low) + position * (math.log(self.high) - math.log(self.low)))
        else:
            value = self.low + position * (self.high - self.low)
        return round(value) if self.kind == "int" else round(value, 6)

    def position(self, value: float) -> float:
        """The normalised position of `value` (clipped into the range)."""
        value = min(max(value, self.low), self.high)
        if self.high == self.low:
            return 0.5
        if self.log_scale:
            return (math.log(value) - math.log(self.low)) / (math.log(self.high) - math.log(self.low))
        return (value - self.low) / (self.high - self.low)


def free_dimensions(request: InstanceRequest) -> list[Dimension]:
    """The sizes, density and knobs a request leaves open, in a fixed order."""
    family = family_spec(request.family)
    dims = []
    for name in family.sizes:
        low, high = request.size_range(name)
        if low < high:
            dims.append(Dimension(f"size:{name}", "int", low, high, default=(low + high) / 2))
    density = request.density_range()
    if density is not None and density[0] < density[1]:
        dims.append(Dimension("density", "float", *density, default=sum(density) / 2))
    for knob in family.knobs:
        if knob.kind == "choice":
            if knob.name not in request.knob_choices:
                dims.append(Dimension(f"knob:{knob.name}", "choice", choices=knob.choices, default=knob.default))
            continue
        low, high = request.knob_range(knob.name)
        if low < high:
            dims.append(Dimension(f"knob:{knob.name}", knob.kind, low, high, default=knob.default))
    return dims


@dataclass(frozen=True)
class Proposal:
    """A sampled spec and the normalised positions / choices that produced it."""

    spec: InstanceSpec
    draws: Mapping[str, float | str]


def spec_from_draws(
    request: InstanceRequest, dims: Sequence[Dimension], draws: Mapping[str, float | str]
) -> InstanceSpec:
    """Turn drawn positions and choices into a spec inside `request`."""
    sizes: dict[str, int] = {}
    knobs: dict[str, KnobValue] = {}
    density = None
    for dim in dims:
        drawn = draws[dim.name]
        value = drawn if dim.kind == "choice" else dim.value(float(drawn))
        kind, _, name = dim.name.partition(":")
        if kind == "size":
            sizes[name] = int(value)
        elif kind == "knob":
            knobs[name] = value
        else:
            density = float(value)
    if "weight_low" in knobs or "weight_high" in knobs:  # repair: the lower weight bound never exceeds the upper
        base = request.make_spec().knobs
        low, high = knobs.get("weight_low", base["weight_low"]), knobs.get("weight_high", base["weight_high"])
        knobs["weight_low"], knobs["weight_high"] = min(low, high), max(low, high)  # type: ignore[type-var]
    return request.make_spec(sizes=sizes, density=density, knobs={**request.make_spec().knobs, **knobs})


Draws = dict[str, float | str]
Observed = Sequence[Mapping[str, float | str]]


class KnobLearner:
    """A learner over the free dimensions of a request: `draw` normalised positions and choices for them, `update`
    from the rewards of proposals (their draws); `sample` turns a draw into a spec inside the request."""

    def draw(self, dims: Sequence[Dimension], rng: np.random.Generator) -> Draws:
        """Positions in [0, 1] for numeric dimensions and a choice for the others."""
        raise NotImplementedError

    def update(self, proposals: Observed, rewards: Sequence[float], *, tiebreak: Sequence[float] | None = None) -> None:
        """Learn from each proposal's reward (`tiebreak` orders equal rewards where the learner ranks them)."""
        raise NotImplementedError

    def trained(self) -> KnobLearner:
        """The policy that generates once training is over (the learner itself, unless it explores on purpose)."""
        return self

    def sample(self, request: InstanceRequest, rng: np.random.Generator) -> Proposal:
        """Draw one spec inside `request`."""
        dims = free_dimensions(request)
        draws = self.draw(dims, rng)
        return Proposal(spec_from_draws(request, dims, draws), draws)


def sample_uniform_specs(request: InstanceRequest, count: int, rng: np.random.Generator) -> list[InstanceSpec]:
    """`count` specs drawn uniformly over the request's free dimensions (positions in [0, 1], choices alike)."""
    dims = free_dimensions(request)
    specs = []
    for _ in range(count):
        draws: dict[str, float | str] = {
            d.name: (str(rng.choice(list(d.choices))) if d.kind == "choice" else float(rng.random())) for d in dims
        }
        specs.append(spec_from_draws(request, dims, draws))
    return specs


@dataclass
class CemPolicy(KnobLearner):
    """Gaussian and categorical distributions over normalised dimensions, updated by the cross-entropy method."""

    means: dict[str, float] = field(default_factory=dict)
    stds: dict[str, float] = field(default_factory=dict)
    probs: dict[str, dict[str, float]] = field(default_factory=dict)
    elite_fraction: float = 0.25
    smoothing: float = 0.5
    min_std: float = 0.1
    initial_std: float = 0.5

    def ensure(self, dims: Sequence[Dimension]) -> None:
        """Start dimensions not seen yet at the family default (choices: half the mass on the default)."""
        for dim in dims:
            if dim.kind == "choice" and dim.name not in self.probs:
                rest = 0.5 / max(len(dim.choices) - 1, 1)
                self.probs[dim.name] = {c: (0.5 if c == dim.default else rest) for c in dim.choices}
            elif dim.kind != "choice" and dim.name not in self.means:
                self.means[dim.name] = dim.position(float(dim.default))
                self.stds[dim.name] = self.initial_std

    def draw(self, dims: Sequence[Dimension], rng: np.random.Generator) -> Draws:
        """Gaussian positions (clipped into [0, 1]) and categorical choices."""
        self.ensure(dims)
        draws: Draws = {}
        for dim in dims:
            if dim.kind == "choice":
                choices = sorted(self.probs[dim.name])
                weights = np.array([self.probs[dim.name][c] for c in choices])
                draws[dim.name] = choices[int(rng.choice(len(choices), p=weights / weights.sum()))]
            else:
                draws[dim.name] = float(np.clip(rng.normal(self.means[dim.name], self.stds[dim.name]), 0.0, 1.0))
        return draws

    def update(self, proposals: Observed, rewards: Sequence[float], *, tiebreak: Sequence[float] | None = None) -> None:
        """Move the distributions towards the elite proposals.

        Equal rewards are ranked by `tiebreak` (higher first; self-play passes SCIP's deterministic time, so a
        round of root-solved instances still points somewhere), then by proposal order.
        """
        if not proposals:
            return
        count = max(1, math.ceil(self.elite_fraction * len(proposals)))
        second = tiebreak or [0.0] * len(proposals)
        order = sorted(range(len(proposals)), key=lambda i: (-rewards[i], -second[i], i))[:count]
        elite = [proposals[i] for i in order]
        alpha = self.smoothing
        for name in self.means:
            values = np.array([float(p[name]) for p in elite if name in p])
            if values.size:
                self.means[name] = float((1 - alpha) * self.means[name] + alpha * values.mean())
                self.stds[name] = float(max((1 - alpha) * self.stds[name] + alpha * values.std(), self.min_std))
        for name, probs in self.probs.items():
            picked = [p[name] for p in elite if name in p]
            if not picked:
                continue
            updated = {c: (1 - alpha) * q + alpha * picked.count(c) / len(picked) for c, q in probs.items()}
            floored = {c: max(q, MIN_PROB) for c, q in updated.items()}
            total = sum(floored.values())
            self.probs[name] = {c: q / total for c, q in floored.items()}

    def to_dict(self) -> dict[str, Any]:
        """The state as plain JSON values."""
        return {
            "kind": "cem",
            "means": dict(sorted(self.means.items())),
            "stds": dict(sorted(self.stds.items())),
            "probs": {name: dict(sorted(p.items())) for name, p in sorted(self.probs.items())},
            "elite_fraction": self.elite_fraction,
            "smoothing": self.smoothing,
            "min_std": self.min_std,
            "initial_std": self.initial_std,
        }

    @classmethod
    def from_dict(cls, data: Mapping[str, Any]) -> CemPolicy:
        """Rebuild a policy saved by `to_dict`."""
        return cls(
            means=dict(data["means"]),
            stds=dict(data["stds"]),
            probs={name: dict(p) for name, p in data["probs"].items()},
            elite_fraction=float(data["elite_fraction"]),
            smoothing=float(data["smoothing"]),
            min_std=float(data["min_std"]),
            initial_std=float(data["initial_std"]),
        )
