"""Typed MILP instance specs: the six families, their sizes, density and difficulty knobs (Ecole-style defaults).

An `InstanceSpec` is one point (exact sizes and knob values) that a family generator turns into a model. An
`InstanceRequest` is what an instruction asks for: size and density ranges, a difficulty and knob constraints;
a challenger picks a spec inside it. Both validate on construction and raise `SpecError` with one line naming
the field and value.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any, Literal, get_args

Family = Literal["facility_location", "max_cut", "set_cover", "combinatorial_auction", "independent_set", "knapsack"]
Difficulty = Literal["easy", "medium", "hard"]
KnobValue = float | int | str
FAMILIES: tuple[Family, ...] = get_args(Family)
DIFFICULTIES: tuple[Difficulty, ...] = get_args(Difficulty)
MAX_VARIABLES = 200_000


class SpecError(ValueError):
    """An instance spec or request that cannot be built; the message is one line naming the field, `code` the stable
    reason code (`invalid_size`, `instruction_unparsed`, `unknown_family`, …) a rejected row is counted under."""

    def __init__(self, message: str, *, code: str = "invalid_spec") -> None:
        super().__init__(message)
        self.code = code


def quoted(name: object) -> str:
    """A user-given name for a one-line message: in backticks, or as its repr when it holds control characters."""
    text = str(name)
    return f"`{text}`" if text.isprintable() else repr(text)


@dataclass(frozen=True)
class KnobSpec:
    """One difficulty knob of a family: a bounded number or a closed choice, with its standard default."""

    name: str
    kind: Literal["float", "int", "choice"]
    default: KnobValue
    low: float = 0.0
    high: float = 0.0
    choices: tuple[str, ...] = ()

    def check(self, value: Any, *, family: str) -> KnobValue:
        """Return `value` typed for this knob, or raise naming the knob and the value."""
        where = f"{family}: knob `{self.name}`"
        if self.kind == "choice":
            if value not in self.choices:
                msg = f"{where}: unknown value {value!r}; choose from {list(self.choices)}"
                raise SpecError(msg, code="invalid_knob")
            return str(value)
        if isinstance(value, bool) or not isinstance(value, int | float):
            msg = f"{where}: expected a number, got {value!r}"
            raise SpecError(msg, code="invalid_knob")
        if self.kind == "int" and float(value) != int(value):
            msg = f"{where}: expected an integer, got {value!r}"
            raise SpecError(msg, code="invalid_knob")
        if not self.low <= value <= self.high:
            msg = f"{where}: {value!r} outside [{self.low:g}, {self.high:g}]"
            raise SpecError(msg, code="invalid_knob")
        return int(value) if self.kind == "int" else float(value)


@dataclass(frozen=True)
class FamilySpec:
    """What a family takes: named sizes with bounds and defaults per difficulty, density, knobs."""

    name: Family
    sizes: tuple[str, ...]
    min_sizes: Mapping[str, int]
    default_sizes: Mapping[Difficulty, Mapping[str, int]]
    knobs: tuple[KnobSpec, ...]
    density: float | None = None

    def knob(self, name: str) -> KnobSpec:
        """The knob called `name`, or raise naming the family's knobs."""
        for knob in self.knobs:
            if knob.name == name:
                return knob
        msg = f"{self.name}: unknown knob {quoted(name)}; choose from {[k.name for k in self.knobs]}"
        raise SpecError(msg, code="invalid_knob")


FAMILY_SPECS: dict[Family, FamilySpec] = {
    spec.name: spec
    for spec in (
        FamilySpec(
            "facility_location",
            ("customers", "facilities"),
            {"customers": 2, "facilities": 2},
            {
                "easy": {"customers": 100, "facilities": 100},
                "medium": {"customers": 200, "facilities": 100},
                "hard": {"customers": 400, "facilities": 100},
            },
            (
                KnobSpec("ratio", "float", 5.0, 1.0, 10.0),
                KnobSpec("fixed_cost_scale", "float", 1.0, 0.1, 10.0),
                KnobSpec("fixed_cost_exponent", "float", 0.5, 0.5, 1.0),
                KnobSpec("assignment", "choice", "continuous", choices=("continuous", "binary")),
            ),
        ),
        FamilySpec(
            "max_cut",
            ("nodes",),
            {"nodes": 3},
            {"easy": {"nodes": 30}, "medium": {"nodes": 40}, "hard": {"nodes": 60}},
            (
                KnobSpec("weight_low", "int", 1, 1, 100),
                KnobSpec("weight_high", "int", 10, 1, 100),
                KnobSpec("negative_fraction", "float", 0.0, 0.0, 1.0),
            ),
            density=0.3,
        ),
        FamilySpec(
            "set_cover",
            ("rows", "cols"),
            {"rows": 2, "cols": 2},
            {
                "easy": {"rows": 500, "cols": 1000},
                "medium": {"rows": 1000, "cols": 1000},
                "hard": {"rows": 2000, "cols": 1000},
            },
            (KnobSpec("max_coef", "int", 100, 1, 1000),),
            density=0.05,
        ),
        FamilySpec(
            "combinatorial_auction",
            ("items", "bids"),
            {"items": 2, "bids": 1},
            {
                "easy": {"items": 100, "bids": 500},
                "medium": {"items": 200, "bids": 1000},
                "hard": {"items": 300, "bids": 1500},
            },
            (
                KnobSpec("add_item_prob", "float", 0.7, 0.05, 0.95),
                KnobSpec("value_deviation", "float", 0.5, 0.0, 1.0),
                KnobSpec("additivity", "float", 0.2, -0.5, 1.0),
                KnobSpec("max_sub_bids", "int", 5, 1, 10),
            ),
        ),
        FamilySpec(
            "independent_set",
            ("nodes",),
            {"nodes": 3},
            {"easy": {"nodes": 500}, "medium": {"nodes": 1000}, "hard": {"nodes": 1500}},
            (
                KnobSpec("graph", "choice", "barabasi_albert", choices=("barabasi_albert", "erdos_renyi")),
                KnobSpec("affinity", "int", 4, 1, 50),
            ),
        ),
        FamilySpec(
            "knapsack",
            ("items", "knapsacks"),
            {"items": 1, "knapsacks": 1},
            {
                "easy": {"items": 100, "knapsacks": 5},
                "medium": {"items": 200, "knapsacks": 10},
                "hard": {"items": 300, "knapsacks": 15},
            },
            (
                KnobSpec(
                    "correlation",
                    "choice",
                    "uncorrelated",
                    choices=("uncorrelated", "weakly_correlated", "strongly_correlated", "subset_sum"),
                ),
                KnobSpec("capacity_fraction", "float", 0.5, 0.05, 0.95),
            ),
        ),
    )
}


def family_spec(family: str) -> FamilySpec:
    """The spec of `family`, or raise listing the known families."""
    if not isinstance(family, str) or family not in FAMILY_SPECS:
        msg = f"unknown family {family!r}; choose from {list(FAMILIES)}"
        raise SpecError(msg, code="unknown_family")
    return FAMILY_SPECS[family]  # type: ignore[index]


def estimated_variables(family: str, sizes: Mapping[str, int], density: float | None) -> int:
    """A model-size estimate used to refuse instances too large to solve."""
    if family == "facility_location":
        return sizes["customers"] * sizes["facilities"] + sizes["facilities"]
    if family == "max_cut":
        n = sizes["nodes"]
        return n + int((density or 1.0) * n * (n - 1) / 2)
    if family == "set_cover":
        return sizes["cols"]
    if family == "combinatorial_auction":
        return sizes["bids"]
    if family == "independent_set":
        return sizes["nodes"]
    return sizes["items"] * sizes["knapsacks"]


def _check_sizes(family: FamilySpec, sizes: Mapping[str, int]) -> dict[str, int]:
    unknown = [name for name in sizes if name not in family.sizes]
    if unknown:
        msg = f"{family.name}: size {quoted(unknown[0])} does not apply; sizes are {list(family.sizes)}"
        raise SpecError(msg, code="unknown_size")
    checked = {}
    for name in family.sizes:
        if name not in sizes:
            msg = f"{family.name}: size `{name}` missing"
            raise SpecError(msg, code="missing_size")
        value = sizes[name]
        if isinstance(value, bool) or not isinstance(value, int) or value < family.min_sizes[name]:
            msg = f"{family.name}: size `{name}` must be an integer >= {family.min_sizes[name]}, got {value!r}"
            raise SpecError(msg, code="invalid_size")
        checked[name] = value
    return checked


def _check_density(family: FamilySpec, density: float | None) -> None:
    if density is None:
        return
    if isinstance(density, bool) or not isinstance(density, int | float):
        msg = f"{family.name}: `density` must be a number, got {density!r}"
        raise SpecError(msg, code="invalid_density")
    if family.density is None and family.name != "independent_set":
        msg = f"{family.name}: `density` does not apply to this family"
        raise SpecError(msg, code="invalid_density")
    if not 0.0 < density <= 1.0:
        msg = f"{family.name}: `density` must lie in (0, 1], got {density!r}"
        raise SpecError(msg, code="invalid_density")


def _check_family_rules(spec: InstanceSpec) -> None:
    """Constraints between sizes, density and knobs that make a family impossible to build."""
    sizes, knobs = spec.sizes, spec.knobs
    where = spec.family
    if spec.family == "max_cut" and knobs["weight_low"] > knobs["weight_high"]:
        msg = f"{where}: knob `weight_low` ({knobs['weight_low']}) exceeds `weight_high` ({knobs['weight_high']})"
        raise SpecError(msg, code="infeasible_combination")
    if spec.family == "set_cover":
        nnz = int(sizes["rows"] * sizes["cols"] * (spec.density or 0.0))
        if nnz < max(2 * sizes["cols"], sizes["rows"]) or sizes["rows"] < 2:
            msg = (
                f"{where}: `density` {spec.density} gives {nnz} nonzeros, fewer than 2 per column and 1 per row "
                f"({max(2 * sizes['cols'], sizes['rows'])})"
            )
            raise SpecError(msg, code="infeasible_combination")
    if spec.family == "independent_set" and knobs["graph"] == "barabasi_albert" and knobs["affinity"] >= sizes["nodes"]:
        msg = f"{where}: knob `affinity` ({knobs['affinity']}) must be below `nodes` ({sizes['nodes']})"
        raise SpecError(msg, code="infeasible_combination")
    if spec.family == "independent_set" and knobs["graph"] == "barabasi_albert" and spec.density is not None:
        msg = f"{where}: `density` applies to erdos_renyi graphs; a barabasi_albert graph's is set by `affinity`"
        raise SpecError(msg, code="infeasible_combination")
    if spec.family == "independent_set" and knobs["graph"] == "erdos_renyi" and spec.density is None:
        msg = f"{where}: an erdos_renyi graph needs a `density`"
        raise SpecError(msg, code="infeasible_combination")
    if estimated_variables(spec.family, sizes, spec.density) > MAX_VARIABLES:
        msg = f"{where}: sizes {dict(sizes)} give more than {MAX_VARIABLES} variables"
        raise SpecError(msg, code="too_large")


@dataclass(frozen=True)
class InstanceSpec:
    """One instance to build: family, exact sizes, density (if the family has one), difficulty and knobs.

    Missing knobs take the family's standard (Ecole/Gasse) values; a missing density takes the family default.
    """

    family: Family
    sizes: Mapping[str, int]
    density: float | None = None
    difficulty: Difficulty | None = None
    knobs: Mapping[str, KnobValue] = field(default_factory=dict)

    def __post_init__(self) -> None:
        family = family_spec(self.family)
        object.__setattr__(self, "sizes", _check_sizes(family, self.sizes))
        density = self.density if self.density is not None else family.density
        _check_density(family, density)
        object.__setattr__(self, "density", None if density is None else float(density))
        if self.difficulty is not None and self.difficulty not in DIFFICULTIES:
            msg = f"{self.family}: unknown difficulty {self.difficulty!r}; choose from {list(DIFFICULTIES)}"
            raise SpecError(msg, code="unknown_difficulty")
        for name in self.knobs:
            family.knob(name)
        knobs = {k.name: k.check(self.knobs.get(k.name, k.default), family=self.family) for k in family.knobs}
        if self.family == "independent_set" and self.density is not None and "graph" not in self.knobs:
            knobs["graph"] = "erdos_renyi"
        object.__setattr__(self, "knobs", knobs)
        _check_family_rules(self)

    def to_dict(self) -> dict[str, Any]:
        """Plain JSON values (knobs and sizes in the family's order)."""
        return {
            "family": self.family,
            "sizes": dict(self.sizes),
            "density": self.density,
            "difficulty": self.difficulty,
            "knobs": dict(self.knobs),
        }

    def to_json(self) -> str:
        """Canonical JSON (sorted keys, no spaces): equal specs give equal text."""
        return json.dumps(self.to_dict(), sort_keys=True, separators=(",", ":"))

    @classmethod
    def from_dict(cls, data: Mapping[str, Any]) -> InstanceSpec:
        """Build and validate a spec from plain values (e.g. an LLM's structured output)."""
        unknown = sorted(set(data) - {"family", "sizes", "density", "difficulty", "knobs"})
        if unknown:
            msg = f"spec: unknown field `{unknown[0]}`"
            raise SpecError(msg, code="malformed_spec")
        if "family" not in data or "sizes" not in data:
            msg = "spec: fields `family` and `sizes` are required"
            raise SpecError(msg, code="malformed_spec")
        if not isinstance(data["sizes"], Mapping) or not isinstance(data.get("knobs") or {}, Mapping):
            msg = "spec: `sizes` and `knobs` must be objects"
            raise SpecError(msg, code="malformed_spec")
        return cls(
            family=data["family"],
            sizes=dict(data["sizes"]),
            density=data.get("density"),
            difficulty=data.get("difficulty"),
            knobs=dict(data.get("knobs") or {}),
        )

    @classmethod
    def from_json(cls, text: str) -> InstanceSpec:
        """Parse and validate a spec from JSON text."""
        try:
            data = json.loads(text)
        except json.JSONDecodeError as error:
            msg = f"spec: not JSON ({error.msg} at char {error.pos})"
            raise SpecError(msg, code="malformed_spec") from None
        if not isinstance(data, Mapping):
            msg = f"spec: expected a JSON object, got {type(data).__name__}"
            raise SpecError(msg, code="malformed_spec")
        return cls.from_dict(data)
