"""What an instruction asks for: size and density ranges, a difficulty and knob constraints of one family.

A challenger turns a request into a concrete `InstanceSpec` inside it (`make_spec`); `asked()` is the part an
instruction-following verifier checks against the built model.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

from synth.validators.optiscribe.difficulty import BandTable, EffortBand, effort_band
from synth.validators.optiscribe.spec import (
    Difficulty,
    Family,
    InstanceSpec,
    KnobValue,
    SpecError,
    family_spec,
    quoted,
)

IntRange = tuple[int, int]
FloatRange = tuple[float, float]


def _check_range(where: str, low: float, high: float) -> None:
    if low > high:
        msg = f"{where}: range [{low:g}, {high:g}] is empty (low above high)"
        raise SpecError(msg, code="empty_range")


@dataclass(frozen=True)
class InstanceRequest:
    """An instruction's demands on one family; sizes not asked take the difficulty's standard sizes."""

    family: Family
    sizes: Mapping[str, IntRange] = field(default_factory=dict)
    density: FloatRange | None = None
    difficulty: Difficulty | None = None
    knob_ranges: Mapping[str, FloatRange] = field(default_factory=dict)
    knob_choices: Mapping[str, str] = field(default_factory=dict)
    target_nodes: int | None = None
    bands: BandTable | None = None

    def __post_init__(self) -> None:
        family = family_spec(self.family)
        self.effort()  # an impossible node target fails here
        for name, (low, high) in self.sizes.items():
            if name not in family.sizes:
                msg = f"{self.family}: size {quoted(name)} does not apply; sizes are {list(family.sizes)}"
                raise SpecError(msg, code="unknown_size")
            _check_range(f"{self.family}: size `{name}`", low, high)
        if self.density is not None:
            _check_range(f"{self.family}: `density`", *self.density)
        for name, (low, high) in self.knob_ranges.items():
            knob = family.knob(name)
            _check_range(f"{self.family}: knob `{name}`", low, high)
            if high < knob.low or low > knob.high:
                msg = f"{self.family}: knob `{name}` range [{low:g}, {high:g}] outside [{knob.low:g}, {knob.high:g}]"
                raise SpecError(msg, code="invalid_knob")
        for name, value in self.knob_choices.items():
            family.knob(name).check(value, family=self.family)
        self.make_spec()  # impossible combinations (sizes vs density vs knobs) fail here, with the spec's reason

    def effort(self) -> EffortBand | None:
        """The band of SCIP nodes asked (an explicit target, else the difficulty's band, calibrated when the request
        carries `bands`), or None."""
        return effort_band(self.difficulty, self.target_nodes, bands=self.bands)

    def size_range(self, name: str) -> IntRange:
        """The asked range of size `name` (the difficulty's standard size when not asked)."""
        if name in self.sizes:
            return self.sizes[name]
        standard = family_spec(self.family).default_sizes[self.difficulty or "easy"][name]
        return standard, standard

    def density_range(self) -> FloatRange | None:
        """The asked density range; the family default as a point when not asked; None without density."""
        if self.density is not None:
            return self.density
        default = family_spec(self.family).density
        return None if default is None else (default, default)

    def knob_range(self, name: str) -> tuple[float, float]:
        """The allowed interval of numeric knob `name`: the family bounds narrowed by the request."""
        knob = family_spec(self.family).knob(name)
        low, high = self.knob_ranges.get(name, (knob.low, knob.high))
        return max(low, knob.low), min(high, knob.high)

    def make_spec(
        self,
        *,
        sizes: Mapping[str, int] | None = None,
        density: float | None = None,
        knobs: Mapping[str, KnobValue] | None = None,
    ) -> InstanceSpec:
        """A spec inside this request: given values are clipped into the asked ranges, the rest take midpoints."""
        family = family_spec(self.family)
        chosen_sizes = {}
        for name in family.sizes:
            low, high = self.size_range(name)
            value = (sizes or {}).get(name, round((low + high) / 2))
            chosen_sizes[name] = int(min(max(value, low), high))
        chosen_density = None
        asked_density = self.density_range()
        if asked_density is not None:
            low, high = asked_density
            chosen_density = round(min(max(density if density is not None else (low + high) / 2, low), high), 6)
        chosen_knobs: dict[str, KnobValue] = {}
        for knob in family.knobs:
            if knob.kind == "choice":
                default = knob.default
                if knob.name == "graph" and self.density is not None:
                    default = "erdos_renyi"  # an asked density means a G(n, m) graph
                chosen_knobs[knob.name] = self.knob_choices.get(knob.name, (knobs or {}).get(knob.name, default))
                continue
            low, high = self.knob_range(knob.name)
            value = float((knobs or {}).get(knob.name, knob.default))
            if knob.name in self.knob_ranges and knobs is None:
                value = (low + high) / 2
            value = min(max(value, low), high)
            chosen_knobs[knob.name] = round(value) if knob.kind == "int" else value
        return InstanceSpec(
            family=self.family,
            sizes=chosen_sizes,
            density=chosen_density,
            difficulty=self.difficulty,
            knobs=chosen_knobs,
        )

    def violations(self, spec: InstanceSpec) -> list[str]:
        """One reason per way `spec` leaves this request (family, sizes, density, fixed knobs)."""
        if spec.family != self.family:
            return [f"family {spec.family} is not the asked {self.family}"]
        reasons = []
        for name in family_spec(self.family).sizes:
            low, high = self.size_range(name)
            if not low <= spec.sizes[name] <= high:
                reasons.append(f"size `{name}` is {spec.sizes[name]}, asked [{low}, {high}]")
        if self.density is not None and not (
            spec.density is not None and self.density[0] <= spec.density <= self.density[1]
        ):
            reasons.append(f"density is {spec.density}, asked [{self.density[0]:g}, {self.density[1]:g}]")
        for name, value in self.knob_choices.items():
            if spec.knobs[name] != value:
                reasons.append(f"knob `{name}` is {spec.knobs[name]!r}, asked {value!r}")
        for name, (low, high) in self.knob_ranges.items():
            if not low <= float(spec.knobs[name]) <= high:
                reasons.append(f"knob `{name}` is {spec.knobs[name]}, asked [{low:g}, {high:g}]")
        return reasons

    def asked(self) -> dict[str, Any]:
        """The checkable demands as plain JSON: size ranges, the density range (None when not asked) and, when a
        difficulty or node target is asked, the `effort` band of B&B nodes (`[low, high]`, high None when open)."""
        family = family_spec(self.family)
        asked: dict[str, Any] = {
            "family": self.family,
            "sizes": {name: list(self.size_range(name)) for name in family.sizes},
            "density": list(self.density) if self.density is not None else None,
        }
        band = self.effort()
        if band is not None:
            asked["effort"] = band.to_list()
        return asked
