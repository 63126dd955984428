"""The instruction grammar of the scripted challenger: English instructions to `InstanceRequest`s and back.

Recognised (case-insensitive, any order): one family name; sizes as `N <noun>`, `A-B <noun>`, `A to B <noun>`,
`between A and B <noun>`, `at least/at most N <noun>`; density as `density 0.3`, `30% density`,
`density between 0.2 and 0.3`, `edge probability 0.3`, `sparse`, `dense`; a difficulty (`easy`, `medium`,
`hard` and synonyms); knob phrases (`tight capacities`, `single-sourcing`, `strongly correlated`,
`weights from 1 to 5`, `barabasi-albert`, `affinity 4`, `costs up to 50`, `capacity ratio 2.5`); an effort target
(`needs about 10,000 nodes`, `5k B&B nodes`), read before sizes so its number is never a graph size.

Unknown families, sizes that do not apply or cannot be built, counts the size patterns cannot read (`-5 nodes`,
`2.5 nodes`: `invalid_size`; `twenty nodes`: `instruction_unparsed`) and contradictions (two difficulties, `tight`
and `loose`, two values for one size) raise `SpecError` with one line and a stable `code`.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from dataclasses import dataclass

from synth.validators.optiscribe.request import FloatRange, InstanceRequest, IntRange
from synth.validators.optiscribe.spec import FAMILIES, Difficulty, Family, SpecError, family_spec

FAMILY_PATTERNS: dict[Family, str] = {
    "facility_location": r"\b(?:capacitated\s+)?facility[\s-]+location\b|\bcfl\b",
    "max_cut": r"\bmax(?:imum)?[\s-]*cut\b",
    "set_cover": r"\bset[\s-]+cover(?:ing)?\b",
    "combinatorial_auction": r"\bcombinatorial[\s-]+auctions?\b",
    "independent_set": r"\b(?:independent|stable)[\s-]+set\b",
    "knapsack": r"\bknapsack\b(?!s)",
}
FAMILY_WORDS: dict[Family, str] = {
    "facility_location": "capacitated facility location",
    "max_cut": "max-cut",
    "set_cover": "set cover",
    "combinatorial_auction": "combinatorial auction",
    "independent_set": "independent set",
    "knapsack": "multiple knapsack",
}
SIZE_NOUNS: dict[str, str] = {
    "customers": "customers",
    "clients": "customers",
    "facilities": "facilities",
    "warehouses": "facilities",
    "nodes": "nodes",
    "vertices": "nodes",
    "rows": "rows",
    "elements": "rows",
    "columns": "cols",
    "cols": "cols",
    "sets": "cols",
    "subsets": "cols",
    "items": "items",
    "goods": "items",
    "bids": "bids",
    "knapsacks": "knapsacks",
}
DIFFICULTY_WORDS: dict[str, Difficulty] = {
    "easy": "easy",
    "simple": "easy",
    "medium": "medium",
    "moderate": "medium",
    "hard": "hard",
    "difficult": "hard",
    "challenging": "hard",
}
SPARSE: FloatRange = (0.02, 0.1)
DENSE: FloatRange = (0.5, 0.9)
DENSITY_TOLERANCE = 0.1
NUM = r"(\d+(?:\.\d+)?)"
INT = r"(\d[\d,]*)"
NOUNS = "|".join(sorted(SIZE_NOUNS, key=len, reverse=True))
MAX_DIGITS = 12
_NUMBER_WORD_TEXT = (
    "zero one two three four five six seven eight nine ten eleven twelve thirteen fourteen fifteen sixteen "
    "seventeen eighteen nineteen twenty thirty forty fifty sixty seventy eighty ninety hundred hundreds thousand "
    "thousands million dozen dozens few several many"
)
NUMBER_WORDS = frozenset(_NUMBER_WORD_TEXT.split())


@dataclass(frozen=True)
class KnobPhrase:
    """A phrase that sets a knob: a numeric range (from the match) or a choice."""

    family: Family
    pattern: str
    knob: str
    value: Callable[[re.Match[str]], FloatRange | str]
    label: str


def _number(match: re.Match[str], group: int = 1) -> float:
    return float(match.group(group))


KNOB_PHRASES: tuple[KnobPhrase, ...] = (
    KnobPhrase("facility_location", r"\btight\s+capacit(?:y|ies)\b", "ratio", lambda m: (1.2, 2.5), "tight"),
    KnobPhrase("facility_location", r"\b(?:loose|ample)\s+capacit(?:y|ies)\b", "ratio", lambda m: (6.0, 10.0), "loose"),
    KnobPhrase(
        "facility_location", rf"\bcapacity\s+ratio\s+(?:of\s+)?{NUM}", "ratio", lambda m: (_number(m),) * 2, "ratio"
    ),
    KnobPhrase("facility_location", r"\bsingle[\s-]+sourc(?:e|ing)\b", "assignment", lambda m: "binary", "single"),
    KnobPhrase("facility_location", r"\bsplittable\s+demands?\b", "assignment", lambda m: "continuous", "split"),
    KnobPhrase(
        "max_cut",
        rf"\bweights?\s+(?:from|between)\s+{INT}\s+(?:to|and)\s+{INT}",
        "weights",
        lambda m: (_int(m.group(1)), _int(m.group(2))),
        "weights",
    ),
    KnobPhrase("max_cut", r"\b(?:unit\s+weights|unweighted)\b", "weights", lambda m: (1, 1), "weights"),
    KnobPhrase(
        "max_cut",
        rf"\b{NUM}%\s+negative\s+weights\b",
        "negative_fraction",
        lambda m: (_number(m) / 100,) * 2,
        "negative",
    ),
    KnobPhrase("set_cover", rf"\bcosts?\s+up\s+to\s+{INT}", "max_coef", lambda m: (1, _int(m.group(1))), "costs"),
    KnobPhrase(
        "independent_set", r"\b(?:barab[aá]si[\s-]+albert|scale[\s-]+free)\b", "graph", lambda m: "barabasi_albert", "g"
    ),
    KnobPhrase(
        "independent_set", r"\b(?:erd[oő]s[\s-]+r[eé]nyi|random\s+graph)\b", "graph", lambda m: "erdos_renyi", "g"
    ),
    KnobPhrase(
        "independent_set", rf"\baffinity\s+(?:of\s+)?{INT}", "affinity", lambda m: (_int(m.group(1)),) * 2, "affinity"
    ),
    *(
        KnobPhrase("knapsack", pattern, "correlation", lambda m, v=value: v, value)
        for pattern, value in (
            (r"\buncorrelated\b", "uncorrelated"),
            (r"\bweakly[\s-]+correlated\b", "weakly_correlated"),
            (r"\bstrongly[\s-]+correlated\b", "strongly_correlated"),
            (r"\bsubset[\s-]+sum\b", "subset_sum"),
        )
    ),
    KnobPhrase(
        "knapsack", rf"\bcapacity\s+fraction\s+(?:of\s+)?{NUM}", "capacity_fraction", lambda m: (_number(m),) * 2, "f"
    ),
)


def _int(text: str) -> int:
    digits = text.replace(",", "")
    if len(digits) > MAX_DIGITS:
        msg = f"number {text[:16]!r} has {len(digits)} digits, more than the {MAX_DIGITS} a size or count may have"
        raise SpecError(msg, code="invalid_size")
    return int(digits)


def _one_line(text: str) -> str:
    return " ".join(text.split())


def find_family(text: str) -> Family:
    """The one family named in `text`, or raise naming what was found."""
    found = [family for family, pattern in FAMILY_PATTERNS.items() if re.search(pattern, text)]
    if len(found) > 1:
        msg = f"instruction names several families {found}; ask for one"
        raise SpecError(msg, code="ambiguous_family")
    if not found:
        named = re.search(r"\b(?:an?\s+)?([a-z][\w\s-]{0,40}?)\s+problem\b", text)
        what = f"{named.group(1)!r}" if named else "no family"
        msg = f"unknown family in instruction ({what}); choose from {list(FAMILIES)}"
        raise SpecError(msg, code="unknown_family")
    return found[0]


def _set_once(store: dict[str, tuple[float, float]], key: str, value: tuple[float, float], what: str) -> None:
    if key in store and store[key] != value:
        msg = f"contradictory {what}: {list(store[key])} and {list(value)}"
        raise SpecError(msg, code="contradiction")
    store[key] = value


def find_sizes(text: str, family: Family) -> dict[str, IntRange]:
    """Size ranges by canonical name; a noun of another family or two different values raise."""
    patterns = (
        (rf"\bbetween\s+{INT}\s+and\s+{INT}\s+({NOUNS})\b", lambda m: (_int(m[1]), _int(m[2]), m[3])),
        (rf"\b{INT}\s*(?:-|–|to)\s*{INT}\s+({NOUNS})\b", lambda m: (_int(m[1]), _int(m[2]), m[3])),
        (rf"\bat\s+least\s+{INT}\s+({NOUNS})\b", lambda m: (_int(m[1]), None, m[2])),
        (rf"\bat\s+most\s+{INT}\s+({NOUNS})\b", lambda m: (None, _int(m[1]), m[2])),
        (rf"(?<![\d.,-])\b{INT}\s+({NOUNS})\b", lambda m: (_int(m[1]), _int(m[1]), m[2])),
    )
    spec = family_spec(family)
    sizes: dict[str, tuple[float, float]] = {}
    consumed = text
    for pattern, read in patterns:
        for match in re.finditer(pattern, consumed):
            low, high, noun = read(match)
            name = SIZE_NOUNS[noun]
            if name not in spec.sizes:
                msg = f"{family}: `{noun}` does not apply; sizes are {list(spec.sizes)}"
                raise SpecError(msg, code="unknown_size")
            low = spec.min_sizes[name] if low is None else low
            high = max(low, spec.default_sizes["hard"][name]) * 4 if high is None else high
            if low < spec.min_sizes[name]:
                msg = f"{family}: {low} {noun} is impossible; size `{name}` must be at least {spec.min_sizes[name]}"
                raise SpecError(msg, code="invalid_size")
            _set_once(sizes, name, (low, high), f"`{name}` sizes")
        consumed = re.sub(pattern, " ", consumed)
    _refuse_unread_sizes(consumed, family)
    return {name: (int(low), int(high)) for name, (low, high) in sizes.items()}


def _refuse_unread_sizes(rest: str, family: Family) -> None:
    """Raise on a size noun left after the size patterns whose count is a number they cannot read: negative or
    fractional (`invalid_size`) or spelled out (`instruction_unparsed`), so no such size falls back to a default."""
    spec = family_spec(family)
    for match in re.finditer(rf"(\S+)\s+({NOUNS})\b", rest):
        count, noun = match[1].strip("(,;:"), match[2]
        name = SIZE_NOUNS[noun]
        fragment = f"{count} {noun}"
        if re.search(r"\d", count):
            msg = (
                f"{family}: {fragment!r} is not a size; size `{name}` must be a whole number of at least "
                f"{spec.min_sizes.get(name, 1)} (e.g. '{spec.default_sizes['easy'].get(name, 10)} {noun}')"
            )
            raise SpecError(msg, code="invalid_size")
        if all(part in NUMBER_WORDS for part in count.split("-")):
            msg = (
                f"{family}: {fragment!r} is not read as a size; write it in digits "
                f"(e.g. '{spec.default_sizes['easy'].get(name, 10)} {noun}')"
            )
            raise SpecError(msg, code="instruction_unparsed")


def _percent(value: str, sign: str | None) -> float:
    return float(value) / 100 if sign else float(value)


def find_density(text: str) -> FloatRange | None:
    """The asked density range; an exact value gets a ±10 % band; `sparse` and `dense` are ranges."""
    found: dict[str, tuple[float, float]] = {}
    between = re.search(rf"\bdensity\s+between\s+{NUM}(%?)\s+and\s+{NUM}(%?)", text)
    if between:
        _set_once(found, "d", (_percent(between[1], between[2]), _percent(between[3], between[4])), "densities")
    for match in re.finditer(rf"\b(?:density|edge\s+probability)\s+(?:of\s+|=\s*)?{NUM}(%?)|{NUM}(%?)\s+density", text):
        value = _percent(match[1], match[2]) if match[1] else _percent(match[3], match[4])
        _set_once(
            found,
            "d",
            (round(value * (1 - DENSITY_TOLERANCE), 6), round(value * (1 + DENSITY_TOLERANCE), 6)),
            "densities",
        )
    for word, band in (("sparse", SPARSE), ("dense", DENSE)):
        if re.search(rf"\b{word}\b", text):
            _set_once(found, "d", band, "densities")
    if "d" not in found:
        return None
    low, high = found["d"]
    if not 0 < low <= high <= 1:
        msg = f"`density` [{low:g}, {high:g}] is impossible; densities lie in (0, 1]"
        raise SpecError(msg, code="invalid_density")
    return low, high


TARGET_PATTERNS = (
    rf"\b(?:needs?|needing|requires?|requiring|takes?|taking)\s+(?:about|around|roughly|approximately|~)?\s*"
    rf"{INT}\s*(k?)\s+(?:(?:b&b|branch[\s-]and[\s-]bound|search|scip|solver)\s+)?nodes\b",
    rf"(?:\b(?:about|around|roughly|approximately)\s+|~\s*)?\b{INT}\s*(k?)\s+"
    rf"(?:b&b|branch[\s-]and[\s-]bound|search|scip|solver)\s+nodes\b",
)


def find_target(text: str) -> tuple[int | None, str]:
    """An explicit effort target ("needs about 10,000 nodes", "5k B&B nodes") and the text without it, so its
    number is never read as a graph size; two different targets raise."""
    targets: dict[str, tuple[float, float]] = {}
    for pattern in TARGET_PATTERNS:
        for match in re.finditer(pattern, text):
            value = _int(match[1]) * (1000 if match[2] else 1)
            _set_once(targets, "nodes", (value, value), "node targets")
        text = re.sub(pattern, " ", text)
    return (int(targets["nodes"][0]) if targets else None), text


def find_difficulty(text: str) -> Difficulty | None:
    """The one difficulty named, or None; two different ones raise."""
    found = {DIFFICULTY_WORDS[w] for w in re.findall(rf"\b({'|'.join(DIFFICULTY_WORDS)})\b", text)}
    if len(found) > 1:
        msg = f"contradictory difficulties {sorted(found)}"
        raise SpecError(msg, code="contradiction")
    return found.pop() if found else None


def find_knobs(text: str, family: Family) -> tuple[dict[str, FloatRange], dict[str, str]]:
    """Knob ranges and choices from knob phrases; a phrase of another family or two different settings raise."""
    ranges: dict[str, tuple[float, float]] = {}
    choices: dict[str, str] = {}
    for phrase in KNOB_PHRASES:
        match = re.search(phrase.pattern, text)
        if not match:
            continue
        if phrase.family != family:
            msg = f"{family}: {match.group(0)!r} does not apply (it is a {phrase.family} setting)"
            raise SpecError(msg, code="invalid_knob")
        value = phrase.value(match)
        if isinstance(value, str):
            if choices.get(phrase.knob, value) != value:
                msg = f"contradictory `{phrase.knob}`: {choices[phrase.knob]!r} and {value!r}"
                raise SpecError(msg, code="contradiction")
            choices[phrase.knob] = value
        elif phrase.knob == "weights":
            _set_once(ranges, "weight_low", (value[0], value[0]), "`weight_low`")
            _set_once(ranges, "weight_high", (value[1], value[1]), "`weight_high`")
        else:
            _set_once(ranges, phrase.knob, value, f"`{phrase.knob}`")
    return ranges, choices


def parse_instruction(instruction: str) -> InstanceRequest:
    """Parse an English instruction into a validated request.

    Example:
        >>> request = parse_instruction("a capacitated facility location problem with 40 customers and "
        ...                             "15 facilities, tight capacities, hard")
        >>> request.sizes["customers"], request.knob_ranges["ratio"], request.difficulty
        ((40, 40), (1.2, 2.5), 'hard')
    """
    text = _one_line(instruction).lower()
    if not text:
        msg = "empty instruction"
        raise SpecError(msg, code="instruction_unparsed")
    family = find_family(text)
    target, text = find_target(text)
    ranges, choices = find_knobs(text, family)
    return InstanceRequest(
        family=family,
        sizes=find_sizes(text, family),
        density=find_density(text),
        difficulty=find_difficulty(text),
        knob_ranges=ranges,
        knob_choices=choices,
        target_nodes=target,
    )


def _size_words(request: InstanceRequest) -> list[str]:
    nouns = {"cols": "columns"}
    words = []
    for name, (low, high) in request.sizes.items():
        noun = nouns.get(name, name)
        words.append(f"{low} {noun}" if low == high else f"between {low} and {high} {noun}")
    return words


def render_instruction(request: InstanceRequest) -> str:
    """The instruction `parse_instruction` reads back into `request` (sizes, density, difficulty, knobs)."""
    words = FAMILY_WORDS[request.family]
    article = "an" if words[0] in "aeiou" else "a"
    sizes = _size_words(request)
    parts = [f"{article} {words} problem" + (" with " + " and ".join(sizes) if sizes else "")]
    if request.density is not None:
        parts.append(f"density between {request.density[0]:g} and {request.density[1]:g}")
    ranges = dict(request.knob_ranges)
    if "weight_low" in ranges and "weight_high" in ranges:
        low, high = ranges.pop("weight_low")[0], ranges.pop("weight_high")[1]
        parts.append(f"weights from {int(low)} to {int(high)}")
    for name, (low, high) in ranges.items():
        parts.append(_knob_words(request.family, name, low, high))
    for name, value in request.knob_choices.items():
        parts.append(_choice_words(name, value))
    if request.target_nodes is not None:
        parts.append(f"needing about {request.target_nodes} B&B nodes")
    if request.difficulty:
        parts.append(request.difficulty)
    return ", ".join(part for part in parts if part)


def _knob_words(family: Family, name: str, low: float, high: float) -> str:
    if (name, low, high) == ("ratio", 1.2, 2.5):
        return "tight capacities"
    if (name, low, high) == ("ratio", 6.0, 10.0):
        return "loose capacities"
    if name in {"ratio", "capacity_fraction"} and low == high:
        return f"{name.replace('_', ' ')} {low:g}"
    if name == "negative_fraction" and low == high:
        return f"{low * 100:g}% negative weights"
    if name == "affinity":
        return f"affinity {int(low)}"
    if name == "max_coef":
        return f"costs up to {int(high)}"
    msg = f"{family}: knob `{name}` range [{low:g}, {high:g}] has no instruction wording"
    raise SpecError(msg, code="no_wording")


def _choice_words(name: str, value: str) -> str:
    words = {
        "binary": "single-sourcing",
        "continuous": "splittable demands",
        "barabasi_albert": "barabasi-albert",
        "erdos_renyi": "erdos-renyi",
    }
    return words.get(value, value.replace("_", " "))
