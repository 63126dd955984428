"""Automatic tool variants (no LLM) and the dual similarity gate that keeps only useful ones.

`make_variant` rewrites a family's base tool the way ToolForge's rewrite prompt asks an LLM to: a synonym
name, a paraphrased description, renamed parameters, 1-3 added optional parameters, shuffled property order
and 0-2 more required parameters, with `query` kept and required.

`SimilarityGate` keeps a candidate only when it is neither a near-duplicate of an accepted tool nor drifted
away from its family (ToolForge's dual gate, with hashed character n-gram TF-IDF cosine standing in for the
embedding model and rapidfuzz's token-set ratio as a second near-duplicate signal).
"""

from __future__ import annotations

import keyword
import math
import re
import zlib
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field, replace
from typing import Any, Literal

import numpy as np
from rapidfuzz import fuzz, process

from synth.generators.toolforge.tools import (
    BASE_TOOLS,
    PROFILE_BY_FAMILY,
    QUERY,
    FamilyProfile,
    ParamSpec,
    build_parameters,
)
from synth.validators.toolforge.model import ToolSpec

VERBS: tuple[str, ...] = (
    "lookup", "finder", "query", "retriever", "explorer", "locator", "fetcher", "seeker", "navigator",
    "resolver", "search", "browser",
)  # fmt: skip
INFO_NOUNS: tuple[str, ...] = (
    "info", "details", "facts", "data", "records", "knowledge", "insights", "reference", "information",
)  # fmt: skip
_NAME_PATTERNS: tuple[str, ...] = ("{noun}_{info}_{verb}", "{verb}_{noun}_{info}", "{noun}_{verb}", "{noun}_{info}")

_TEMPLATES: tuple[str, ...] = (
    "Look up {subject}; the results cover {aspects}. Suited to questions on {usage}.",
    "Retrieves {subject}, including {aspects}, to answer questions about {usage}.",
    "Finds {subject} and reports {aspects}. Call it when the user asks about {usage}.",
    "A {noun} {verb} for {subject}. It provides {aspects} and helps with {usage}.",
    "Queries a reference source for {subject}. Output: {aspects}. Best for {usage}.",
    "Use this to {action} {subject}: it returns {aspects}, which answers {usage}.",
    "{Action} {subject}. Each result gives {aspects}.",
    "Searches a knowledge base of {subject} and lists {aspects}; good for {usage}.",
)
_ACTIONS: tuple[str, ...] = ("find", "look up", "retrieve", "research", "query", "explore")
_WORD_SYNONYMS: Mapping[str, tuple[str, ...]] = {
    "information": ("details", "facts", "data", "knowledge"),
    "such as": ("like", "including", "for example"),
    "about": ("on", "concerning", "regarding"),
    "questions": ("queries", "requests"),
    "returns": ("gives", "yields"),
    "whether": ("if",),
}

PARAM_SYNONYMS: Mapping[str, tuple[str, ...]] = {
    "name": ("label", "title", "designation"), "person": ("individual", "people"), "type": ("kind", "class"),
    "category": ("kind", "class", "type"), "include": ("with", "show", "return"), "min": ("minimum", "lowest"),
    "max": ("maximum", "most"), "region": ("area", "zone", "territory"), "country": ("nation", "state"),
    "location": ("place", "area", "locale"), "place": ("location", "site", "locale"),
    "topic": ("subject", "theme", "focus"), "subject": ("topic", "entity", "target"),
    "aspects": ("facets", "fields", "details"), "aspect": ("facet", "focus", "angle"),
    "attributes": ("properties", "fields", "facts"), "types": ("kinds", "categories"),
    "terms": ("keywords", "concepts"), "level": ("depth", "tier", "grade"), "detail": ("depth", "granularity"),
    "author": ("writer", "researcher"), "creator": ("author", "maker", "artist"), "work": ("piece", "creation"),
    "title": ("heading", "name"), "event": ("incident", "occurrence", "happening"),
    "start": ("from", "earliest", "begin"), "end": ("to", "latest", "until"),
    "participants": ("parties", "involved", "actors"), "language": ("lang", "tongue"),
    "sources": ("references", "providers"), "source": ("reference", "origin"),
    "texts": ("documents", "writings", "scriptures"), "condition": ("ailment", "illness", "disorder"),
    "symptoms": ("signs", "complaints"), "indicators": ("metrics", "measures", "statistics"),
    "stat": ("statistic", "metric"), "season": ("campaign", "term"), "competition": ("tournament", "contest"),
    "roster": ("squad", "lineup"), "position": ("role", "post"), "institution": ("school", "establishment"),
    "founded": ("established", "created"), "before": ("prior", "until"), "after": ("since", "from"),
    "service": ("offering", "business"), "keyword": ("term", "phrase"), "price": ("cost", "budget"),
    "features": ("amenities", "facilities", "options"), "rating": ("score", "stars"),
    "specifications": ("specs", "characteristics", "technical_data"), "office": ("post", "role"),
    "election": ("vote", "poll", "ballot"), "party": ("faction", "affiliation"), "hint": ("clue", "guess"),
    "results": ("hits", "matches", "answers"), "summary": ("overview", "abstract"), "entities": ("items", "concepts"),
    "related": ("associated", "linked"), "nationality": ("citizenship", "origin_country"),
    "occupation": ("profession", "job", "vocation"), "family": ("relatives", "kin"), "known": ("famous", "noted"),
    "aliases": ("alternative_names", "pseudonyms", "other_names"), "release": ("publication", "launch"),
    "credits": ("contributors", "crew"), "genre": ("style", "form"), "reception": ("reviews", "critique"),
    "original": ("source", "first"), "consequences": ("aftermath", "outcomes", "impact"),
    "era": ("period", "epoch", "age"), "period": ("era", "epoch", "timeframe"), "nearby": ("surrounding", "adjacent"),
    "population": ("inhabitants", "residents"), "administrative": ("governmental", "civil"),
    "concept": ("notion", "term", "idea"), "discipline": ("field", "domain", "branch"),
    "formulas": ("equations", "expressions"), "discovery": ("finding", "detection"), "rank": ("tier", "grade"),
    "units": ("measurement", "metric_system"), "published": ("issued", "printed"), "venue": ("outlet", "forum"),
    "document": ("record", "publication"), "reviewed": ("refereed", "vetted"), "citations": ("references", "cites"),
    "research": ("study", "scholarly"), "field": ("area", "domain"), "legal": ("law", "juridical"),
    "jurisdiction": ("legal_system", "territory", "court_system"), "court": ("tribunal", "bench"),
    "areas": ("domains", "fields"), "force": ("effect",), "data": ("figures", "information"),
    "fiscal": ("financial", "budget"), "currency": ("monetary_unit", "money"), "adjust": ("correct", "normalise"),
    "sector": ("industry", "branch"), "info": ("information", "detail"), "drug": ("medication", "medicine"),
    "interactions": ("contraindications", "conflicts"), "severity": ("seriousness", "grade"),
    "clinical": ("medical",), "trials": ("studies",), "tradition": ("custom", "practice", "observance"),
    "culture": ("people", "community", "society"), "celebration": ("festival", "observance"),
    "historical": ("past", "historic"), "practised": ("observed", "followed"), "conservation": ("protection",),
    "status": ("standing", "state"), "trends": ("changes", "trajectory"), "habitat": ("environment", "biome"),
    "protected": ("conserved", "safeguarded"), "entity": ("subject", "target", "item"), "sport": ("game",),
    "career": ("professional",), "mode": ("means", "modality"), "origin": ("departure", "from", "start"),
    "destination": ("arrival", "to", "target"), "operating": ("active", "running"),
    "transfers": ("changes", "connections"), "operator": ("carrier", "provider"), "vehicle": ("craft", "conveyance"),
    "degree": ("qualification", "award"), "programs": ("courses", "majors", "programmes"),
    "accredited": ("certified", "recognised"), "branch": ("arm", "division"),
    "conflicts": ("wars", "engagements", "campaigns"), "entry": ("introduction", "commissioning"),
    "religion": ("faith", "creed", "belief_system"), "interpretations": ("readings", "views"),
    "denomination": ("sect", "branch"), "incumbent": ("current", "sitting"),
    "constituency": ("district", "riding", "electorate"), "exact": ("strict", "precise"), "now": ("currently",),
    "booking": ("reservation",), "required": ("needed", "mandatory"), "year": ("yr", "year_value"),
    "month": ("calendar_month",), "age": ("years",), "only": ("exclusively",),
}  # fmt: skip
_MODIFIERS: tuple[str, ...] = ("target_{}", "preferred_{}", "{}_filter", "{}_value", "{}_hint")

GENERIC_EXTRAS: tuple[ParamSpec, ...] = (
    ParamSpec("max_results", "integer", "Largest number of results to return."),
    ParamSpec("sort_by", "enum", "Order of the results.", enum=("relevance", "date", "popularity")),
    ParamSpec("result_language", "string", "Language of the results."),
    ParamSpec("include_sources", "boolean", "Whether to cite the source of each result."),
    ParamSpec("time_range", "string", "Time range of interest, such as 1990-2000."),
)


def _pick(rng: np.random.Generator, options: tuple[str, ...]) -> str:
    return options[int(rng.integers(len(options)))]


def variant_name(profile: FamilyProfile, rng: np.random.Generator) -> str:
    """A synonym name built from the family's nouns, an information noun and a search verb."""
    while True:
        pattern = _pick(rng, _NAME_PATTERNS)
        name = pattern.format(noun=_pick(rng, profile.nouns), info=_pick(rng, INFO_NOUNS), verb=_pick(rng, VERBS))
        if name != profile.base_name:
            return name


def _swap_words(text: str, rng: np.random.Generator, *, rate: float) -> str:
    for word, synonyms in _WORD_SYNONYMS.items():
        pieces = re.split(rf"\b{re.escape(word)}\b", text)
        swapped = [_pick(rng, synonyms) if rng.random() < rate else word for _ in pieces[1:]]
        text = pieces[0] + "".join(w + piece for w, piece in zip(swapped, pieces[1:], strict=True))
    return text


def _aspect_subset(aspects: str, rng: np.random.Generator) -> str:
    *head, last = aspects.split(", ")
    items = [*head, *last.rsplit(" and ", 1)]
    keep = max(2, int(rng.integers(len(items) - 1, len(items) + 1))) if len(items) > 2 else len(items)
    chosen = [items[int(i)] for i in rng.permutation(len(items))[:keep]]
    return ", ".join(chosen[:-1]) + " and " + chosen[-1] if len(chosen) > 1 else chosen[0]


def variant_description(profile: FamilyProfile, rng: np.random.Generator) -> str:
    """A paraphrase of the base description from the family's parts (never the base template)."""
    action = _pick(rng, _ACTIONS)
    text = _pick(rng, _TEMPLATES).format(
        subject=profile.subject,
        aspects=_aspect_subset(profile.aspects, rng),
        usage=profile.usage,
        noun=_pick(rng, profile.nouns).replace("_", " "),
        verb=_pick(rng, VERBS),
        action=action,
        Action=action[0].upper() + action[1:],
    )
    return _swap_words(text, rng, rate=0.5)


def usable_parameter_name(name: str) -> bool:
    """A name a model can write as a Python keyword argument: an identifier and not a (soft) keyword."""
    return name.isidentifier() and not keyword.iskeyword(name) and not keyword.issoftkeyword(name)


def rename_parameter(name: str, rng: np.random.Generator, *, taken: Iterable[str] = ()) -> str:
    """A synonym of a parameter name: each token swapped with probability 0.6, else a modifier added.

    Never a Python keyword (`class`, `from`, `with`, `return`...): prompt-mode models write calls as Python.
    """
    blocked = {"query", name, *taken}
    for _ in range(8):
        tokens = [
            _pick(rng, PARAM_SYNONYMS[t]) if PARAM_SYNONYMS.get(t) and rng.random() < 0.6 else t
            for t in name.split("_")
        ]
        candidate = "_".join(tokens)
        if candidate not in blocked and usable_parameter_name(candidate):
            return candidate
    for modifier in rng.permutation(len(_MODIFIERS)):
        candidate = _MODIFIERS[int(modifier)].format(name)
        if candidate not in blocked and usable_parameter_name(candidate):
            return candidate
    msg = f"cannot rename parameter `{name}`: every synonym is taken"
    raise ValueError(msg)


def _rewrite_param(param: ParamSpec, rng: np.random.Generator, taken: set[str]) -> ParamSpec:
    renamed = replace(param, name=rename_parameter(param.name, rng, taken=taken))
    renamed = replace(renamed, description=_swap_words(param.description, rng, rate=0.5))
    taken.add(renamed.name)
    return renamed


def variant_parameters(profile: FamilyProfile, rng: np.random.Generator) -> dict[str, Any]:
    """Renamed, extended, shuffled parameters; `query` stays and is required."""
    taken: set[str] = set()
    params = [_rewrite_param(p, rng, taken) for p in profile.params]
    pool = [p for p in (*profile.extras, *GENERIC_EXTRAS) if p.name not in {q.name for q in profile.params}]
    for index in rng.permutation(len(pool))[: int(rng.integers(1, 4))]:
        extra = pool[int(index)]
        if extra.name in taken or rng.random() < 0.5:
            extra = _rewrite_param(extra, rng, taken)
        else:
            taken.add(extra.name)
        params.append(extra)
    optional = [i for i, p in enumerate(params) if not p.required]
    for index in rng.permutation(len(optional))[: int(rng.integers(0, 3))]:
        params[optional[int(index)]] = replace(params[optional[int(index)]], required=True)
    ordered = [QUERY, *params]
    ordered = [ordered[int(i)] for i in rng.permutation(len(ordered))]
    schema = build_parameters(tuple(ordered))
    schema["required"] = ["query", *(name for name in schema["required"] if name != "query")]
    return schema


def make_variant(family: str, rng: np.random.Generator) -> ToolSpec:
    """One variant candidate of a built-in family's base tool."""
    profile = PROFILE_BY_FAMILY[family]
    return ToolSpec(
        name=variant_name(profile, rng),
        description=variant_description(profile, rng),
        parameters=variant_parameters(profile, rng),
        family=family,
        origin="variant",
    )


def signature(tool: ToolSpec) -> str:
    """The text the gate compares: name words, description and parameter-name words."""
    words = [tool.name.replace("_", " "), tool.description, *(n.replace("_", " ") for n in tool.properties)]
    return " ".join(words).lower()


class NgramVectorizer:
    """Hashed character n-gram (3-5, within words) TF-IDF vectors, L2-normalised; IDF fitted on given texts.

    Vectors are sparse: (sorted dimension indices, weights). Hashing uses crc32, so it is stable across runs.
    """

    def __init__(self, texts: Iterable[str], *, dims: int = 1 << 14) -> None:
        self.dims = dims
        self._word_keys: dict[str, tuple[int, ...]] = {}
        rows = [self._counts(text) for text in texts]
        df = np.zeros(dims)
        for row in rows:
            df[list(row)] += 1
        self.idf = np.log((1 + len(rows)) / (1 + df)) + 1.0

    def _keys(self, word: str) -> tuple[int, ...]:
        keys = self._word_keys.get(word)
        if keys is None:
            padded = f" {word} "
            grams = [padded[i : i + n] for n in (3, 4, 5) for i in range(max(1, len(padded) - n + 1))]
            keys = tuple(zlib.crc32(gram.encode()) % self.dims for gram in grams)
            self._word_keys[word] = keys
        return keys

    def _counts(self, text: str) -> dict[int, int]:
        counts: dict[int, int] = {}
        for word in re.findall(r"[a-z0-9]+", text.lower()):
            for key in self._keys(word):
                counts[key] = counts.get(key, 0) + 1
        return counts

    def transform(self, text: str) -> tuple[np.ndarray, np.ndarray]:
        """The sparse unit vector of a text: (indices, weights)."""
        counts = self._counts(text)
        ordered = sorted(counts.items())
        keys = np.array([key for key, _ in ordered], dtype=np.int64)
        weights = (1.0 + np.log(np.array([count for _, count in ordered], dtype=float))) * self.idf[keys]
        norm = math.sqrt(float(weights @ weights)) if len(weights) else 0.0
        return keys, (weights / norm if norm else weights)


@dataclass(frozen=True, slots=True)
class GateSettings:
    """Thresholds of the dual gate.

    Attributes:
        near_duplicate: reject when the n-gram cosine to any accepted tool is at least this (θ_dup).
        near_duplicate_tokens: also reject when rapidfuzz's token-set ratio (0-1) of the signatures is at least
            this, for copies that only add or rename a little.
        drift: reject when the mean cosine to the family's accepted tools is below this (θ_drift).
        margin: the family mean must beat every other family's mean by more than this.
    """

    near_duplicate: float = 0.85
    near_duplicate_tokens: float = 0.95
    drift: float = 0.15
    margin: float = 0.0


Verdict = Literal["accepted", "near_duplicate", "drift"]


@dataclass(frozen=True, slots=True)
class GateDecision:
    """The gate's answer for one candidate, with the scores behind it."""

    verdict: Verdict
    reason: str
    nearest: str = ""
    duplicate_score: float = 0.0
    family_score: float = 0.0
    best_other_family: str = ""
    other_score: float = 0.0

    @property
    def accepted(self) -> bool:
        return self.verdict == "accepted"


@dataclass
class GateStats:
    """Counts of one family's candidates by outcome."""

    candidates: int = 0
    accepted: int = 0
    rejected_near_duplicate: int = 0
    rejected_drift: int = 0

    def to_dict(self) -> dict[str, int]:
        return {
            "candidates": self.candidates,
            "accepted": self.accepted,
            "rejected_near_duplicate": self.rejected_near_duplicate,
            "rejected_drift": self.rejected_drift,
        }


@dataclass
class SimilarityGate:
    """Accepted tools by family plus the dual near-duplicate / drift test for new candidates."""

    settings: GateSettings = field(default_factory=GateSettings)
    vectorizer: NgramVectorizer = field(default_factory=lambda: NgramVectorizer(signature(t) for t in BASE_TOOLS))
    tools: list[ToolSpec] = field(default_factory=list)
    stats: dict[str, GateStats] = field(default_factory=dict)
    _matrix: np.ndarray = field(init=False, repr=False)
    _signatures: list[str] = field(init=False, repr=False, default_factory=list)

    def __post_init__(self) -> None:
        self._matrix = np.zeros((self.vectorizer.dims, 0))  # one column per accepted tool
        admitted, self.tools = self.tools, []
        for tool in admitted:
            self.admit(tool)

    def admit(self, tool: ToolSpec) -> None:
        """Accept a tool without testing it (the base tools that anchor each family)."""
        count = len(self.tools)
        if count == self._matrix.shape[1]:
            grown = np.zeros((self.vectorizer.dims, max(64, 2 * count)))
            grown[:, :count] = self._matrix[:, :count]
            self._matrix = grown
        text = signature(tool)
        keys, weights = self.vectorizer.transform(text)
        self._matrix[keys, count] = weights
        self.tools.append(tool)
        self._signatures.append(text)
        self.stats.setdefault(tool.family, GateStats())

    def cosines(self, tool: ToolSpec) -> np.ndarray:
        """Cosine similarity of a tool's signature to every accepted tool, in acceptance order."""
        keys, weights = self.vectorizer.transform(signature(tool))
        return weights @ self._matrix[keys, : len(self.tools)]

    def check(self, candidate: ToolSpec) -> GateDecision:
        """Judge a candidate against the accepted tools without changing anything."""
        if any(tool.name == candidate.name for tool in self.tools):
            return GateDecision("near_duplicate", f"name `{candidate.name}` already exists", candidate.name, 1.0)
        if not self.tools:
            return GateDecision("accepted", "first tool of the space")
        cosines = self.cosines(candidate)
        nearest = int(np.argmax(cosines))
        duplicate = float(cosines[nearest])
        name = self.tools[nearest].name
        if duplicate >= self.settings.near_duplicate:
            return GateDecision("near_duplicate", f"cosine {duplicate:.2f} to `{name}`", name, duplicate)
        # token-set ratio within the family only: copies in another family already show a high cosine
        kin = [i for i, tool in enumerate(self.tools) if tool.family == candidate.family]
        cutoff = 100.0 * self.settings.near_duplicate_tokens
        choices = [self._signatures[i] for i in kin]
        match = process.extractOne(signature(candidate), choices, scorer=fuzz.token_set_ratio, score_cutoff=cutoff)
        if match is not None:
            other, ratio = self.tools[kin[match[2]]].name, match[1] / 100.0
            return GateDecision("near_duplicate", f"token-set ratio {ratio:.2f} to `{other}`", other, ratio)
        return self._drift_decision(candidate, cosines, name, duplicate)

    def _drift_decision(self, candidate: ToolSpec, cosines: np.ndarray, nearest: str, duplicate: float) -> GateDecision:
        means: dict[str, list[float]] = {}
        for tool, cosine in zip(self.tools, cosines, strict=True):
            means.setdefault(tool.family, []).append(float(cosine))
        family_mean = float(np.mean(means[candidate.family])) if candidate.family in means else None
        others = {f: float(np.mean(v)) for f, v in means.items() if f != candidate.family}
        other = max(others, key=lambda f: others[f], default="")
        other_mean = others.get(other, 0.0)
        scores = {"nearest": nearest, "duplicate_score": duplicate, "best_other_family": other}
        if family_mean is None:
            return GateDecision("accepted", "first tool of its family", other_score=other_mean, **scores)
        scores |= {"family_score": family_mean, "other_score": other_mean}
        if family_mean < self.settings.drift:
            reason = f"mean cosine {family_mean:.2f} to {candidate.family} is below {self.settings.drift}"
            return GateDecision("drift", reason, **scores)
        if family_mean <= other_mean + self.settings.margin:
            reason = f"closer to {other} ({other_mean:.2f}) than to {candidate.family} ({family_mean:.2f})"
            return GateDecision("drift", reason, **scores)
        return GateDecision("accepted", f"mean cosine {family_mean:.2f} to {candidate.family}", **scores)

    def offer(self, candidate: ToolSpec) -> GateDecision:
        """Judge a candidate, count the outcome under its family, and accept it if it passes."""
        decision = self.check(candidate)
        stats = self.stats.setdefault(candidate.family, GateStats())
        stats.candidates += 1
        if decision.verdict == "accepted":
            stats.accepted += 1
            self.admit(candidate)
        elif decision.verdict == "near_duplicate":
            stats.rejected_near_duplicate += 1
        else:
            stats.rejected_drift += 1
        return decision

    def stats_dict(self) -> dict[str, dict[str, int]]:
        """Gate statistics by family, in the order families were first seen."""
        return {family: stats.to_dict() for family, stats in self.stats.items()}


def gate_variants(
    gate: SimilarityGate, family: str, *, count: int, rng: np.random.Generator, max_attempts: int
) -> list[ToolSpec]:
    """Offer variant candidates of `family` until `count` pass or `max_attempts` were tried."""
    accepted: list[ToolSpec] = []
    for _ in range(max_attempts):
        if len(accepted) >= count:
            break
        candidate = make_variant(family, rng)
        if gate.offer(candidate).accepted:
            accepted.append(candidate)
    return accepted
