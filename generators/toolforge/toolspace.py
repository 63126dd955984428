"""The tool space: base tools, gated variants and user tools, with lookups and passage routing.

User tools come from a YAML or JSON file in one of two shapes:

- a list of OpenAI-style tools, each with an extra `family` key naming a built-in family;
- a mapping from family to a list of tools, or to `{keywords: [...], tools: [...]}`; a family that is not
  built in must give `keywords` (used to route passages to it), and a built-in one may add keywords.

Every user tool is validated (one-line `ConfigError` naming the file, the tool and the field) and then passes
through the same similarity gate as the variants; the ones it turns away are kept in `ToolSpace.rejected`.
"""

from __future__ import annotations

import json
import re
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np
import yaml
from jsonschema import Draft202012Validator
from jsonschema.exceptions import SchemaError

from synth.core.errors import ConfigError
from synth.generators.toolforge.tools import BASE_TOOLS, FAMILIES, KEYWORDS, route_family
from synth.generators.toolforge.variants import GateSettings, SimilarityGate, gate_variants
from synth.validators.toolforge.model import ToolSpec

_NAME = re.compile(r"^[A-Za-z0-9_-]{1,64}$")
_QUERY_HINT = "every ToolForge tool takes a natural-language `query` string (the simulated retrieval is driven by it)"


@dataclass(frozen=True, slots=True)
class UserTools:
    """Tools read from a user file, and the routing keywords it declares by family."""

    tools: tuple[ToolSpec, ...]
    keywords: Mapping[str, tuple[str, ...]]


@dataclass(frozen=True, slots=True)
class Rejection:
    """A user tool the gate turned away, and why."""

    name: str
    family: str
    verdict: str
    reason: str


def _fail(path: Path, where: str, message: str) -> ConfigError:
    return ConfigError(" ".join(f"{path}: {where}: {message}".split()))


def _read_document(path: Path) -> Any:
    try:
        text = path.read_text(encoding="utf-8")
    except OSError as error:
        raise ConfigError(f"{path}: cannot read the user tool file ({error.strerror})") from None
    suffix = path.suffix.lower()
    if suffix == ".json":
        try:
            return json.loads(text)
        except json.JSONDecodeError as error:
            raise ConfigError(f"{path}: not valid JSON ({error.msg} at line {error.lineno})") from None
    if suffix in {".yaml", ".yml"}:
        try:
            return yaml.safe_load(text)
        except yaml.YAMLError as error:
            mark = getattr(error, "problem_mark", None)
            line = f" at line {mark.line + 1}" if mark is not None else ""
            problem = getattr(error, "problem", None) or "parse error"
            raise ConfigError(f"{path}: not valid YAML ({problem}{line})") from None
    msg = f"{path}: user tool files must end in .json, .yaml or .yml, not `{path.suffix}`"
    raise ConfigError(msg)


def _entries(path: Path, document: Any) -> tuple[list[tuple[str, Any]], dict[str, tuple[str, ...]]]:
    """(family, raw tool) pairs in file order, and the declared keywords by family."""
    if isinstance(document, list):
        pairs = []
        for index, item in enumerate(document):
            family = item.get("family") if isinstance(item, Mapping) else None
            if not isinstance(family, str) or not family:
                raise _fail(path, f"tool #{index}", "`family` is missing (each listed tool names its family)")
            pairs.append((family, item))
        return pairs, {}
    if not isinstance(document, Mapping):
        msg = f"{path}: expected a list of tools or a mapping from family to tools, got {type(document).__name__}"
        raise ConfigError(msg)
    pairs, keywords = [], {}
    for family, value in document.items():
        section = value if isinstance(value, Mapping) else {"tools": value}
        tools, words = section.get("tools"), section.get("keywords", [])
        if not isinstance(tools, list):
            raise _fail(path, f"family `{family}`", "`tools` must be a list of tools")
        if not isinstance(words, list) or not all(isinstance(w, str) and w.strip() for w in words):
            raise _fail(path, f"family `{family}`", "`keywords` must be a list of non-empty strings")
        if words:
            keywords[str(family)] = tuple(words)
        pairs.extend((str(family), item) for item in tools)
    return pairs, keywords


def _check_parameters(path: Path, where: str, parameters: Any) -> None:
    if not isinstance(parameters, Mapping):
        raise _fail(path, where, "`parameters` must be a JSON Schema object")
    try:
        Draft202012Validator.check_schema(parameters)
    except SchemaError as error:
        at = "/".join(str(part) for part in error.absolute_path) or "(root)"
        raise _fail(path, where, f"`parameters` is not a valid JSON Schema: {error.message} at {at}") from None
    if parameters.get("type") != "object":
        raise _fail(path, where, '`parameters.type` must be "object"')
    query = parameters.get("properties", {}).get("query")
    if not isinstance(query, Mapping) or query.get("type") != "string":
        raise _fail(path, where, f"`parameters.properties.query` must be a string property: {_QUERY_HINT}")
    if "query" not in parameters.get("required", ()):
        raise _fail(path, where, f"`parameters.required` must list `query`: {_QUERY_HINT}")


def _parse_tool(path: Path, index: int, family: str, item: Any) -> ToolSpec:
    if not isinstance(item, Mapping):
        raise _fail(path, f"tool #{index}", "must be a mapping with `name`, `description` and `parameters`")
    function = item.get("function", item)
    if not isinstance(function, Mapping):
        raise _fail(path, f"tool #{index}", "`function` must be a mapping")
    name = function.get("name")
    if not isinstance(name, str) or not _NAME.match(name):
        raise _fail(path, f"tool #{index}", f"`name` must match {_NAME.pattern}, got {name!r}")
    where = f"tool #{index} `{name}`"
    if item.get("family", family) != family:
        raise _fail(path, where, f"`family` is `{item.get('family')}` but it is listed under `{family}`")
    description = function.get("description")
    if not isinstance(description, str) or not description.strip():
        raise _fail(path, where, "`description` must be a non-empty string")
    _check_parameters(path, where, function.get("parameters"))
    return ToolSpec.from_openai(function, family=family, origin="user")


def load_user_tools(path: Path, *, reserved_names: Iterable[str] = ()) -> UserTools:
    """Read and validate a user tool file (YAML or JSON); errors are one-line `ConfigError`s.

    Args:
        reserved_names: names already in the space (a user tool may not reuse them).

    >>> import tempfile
    >>> tool = {"name": "recipe_search", "description": "Find cooking recipes.", "parameters": {"type": "object",
    ...     "properties": {"query": {"type": "string"}}, "required": ["query"]}}
    >>> with tempfile.TemporaryDirectory() as folder:
    ...     file = Path(folder) / "tools.json"
    ...     _ = file.write_text(json.dumps({"cooking": {"keywords": ["recipe"], "tools": [tool]}}))
    ...     load_user_tools(file).tools[0].family
    'cooking'
    """
    pairs, keywords = _entries(path, _read_document(path))
    taken, tools = set(reserved_names), []
    for index, (family, item) in enumerate(pairs):
        tool = _parse_tool(path, index, family, item)
        where = f"tool #{index} `{tool.name}`"
        if tool.name in taken:
            raise _fail(path, where, "`name` is already used by another tool; tool names must be unique")
        if family not in FAMILIES and family not in keywords:
            hint = "declare it in the mapping form as `<family>: {keywords: [...], tools: [...]}`"
            raise _fail(path, where, f"`family` `{family}` is not built in and has no `keywords`; {hint}")
        taken.add(tool.name)
        tools.append(tool)
    return UserTools(tools=tuple(tools), keywords=keywords)


@dataclass(frozen=True)
class ToolSpace:
    """An immutable registry of tools by name and family, with the routing lexicon and gate statistics."""

    tools: tuple[ToolSpec, ...]
    keywords: Mapping[str, tuple[str, ...]] = field(default_factory=lambda: dict(KEYWORDS))
    gate_stats: Mapping[str, Mapping[str, int]] = field(default_factory=dict)
    rejected: tuple[Rejection, ...] = ()
    _by_name: dict[str, ToolSpec] = field(init=False, repr=False, compare=False)
    _by_family: dict[str, tuple[ToolSpec, ...]] = field(init=False, repr=False, compare=False)

    def __post_init__(self) -> None:
        by_name: dict[str, ToolSpec] = {}
        by_family: dict[str, list[ToolSpec]] = {}
        for tool in self.tools:
            if tool.name in by_name:
                msg = f"duplicate tool name `{tool.name}` in the tool space"
                raise ValueError(msg)
            by_name[tool.name] = tool
            by_family.setdefault(tool.family, []).append(tool)
        object.__setattr__(self, "_by_name", by_name)
        object.__setattr__(self, "_by_family", {f: tuple(t) for f, t in by_family.items()})

    @classmethod
    def build(
        cls,
        *,
        variants_per_family: int,
        seed: int,
        user_tools: Path | None = None,
        max_attempts: int | None = None,
        settings: GateSettings | None = None,
    ) -> ToolSpace:
        """Base tools, then user tools and variants that pass the gate; the same seed gives the same space.

        Args:
            variants_per_family: variants wanted for every built-in family (ToolForge made 20).
            seed: a non-negative integer; family `k` draws from `numpy.random.default_rng([seed, k])`.
            user_tools: a YAML or JSON file of extra tools (see `load_user_tools`).
            max_attempts: candidates tried per family before giving up; None means 10 × `variants_per_family`.

        >>> space = ToolSpace.build(variants_per_family=1, seed=0)
        >>> len(space.by_family("person_information"))
        2
        """
        if variants_per_family < 0 or seed < 0:
            msg = f"`variants_per_family` and `seed` must be non-negative, got {variants_per_family} and {seed}"
            raise ValueError(msg)
        attempts = 10 * variants_per_family if max_attempts is None else max_attempts
        gate = SimilarityGate(settings=settings or GateSettings(), tools=list(BASE_TOOLS))
        keywords = {family: tuple(words) for family, words in KEYWORDS.items()}
        rejected: list[Rejection] = []
        if user_tools is not None:
            loaded = load_user_tools(user_tools, reserved_names=(tool.name for tool in BASE_TOOLS))
            for family, words in loaded.keywords.items():
                keywords[family] = tuple(dict.fromkeys((*keywords.get(family, ()), *words)))
            for tool in loaded.tools:
                decision = gate.offer(tool)
                if not decision.accepted:
                    rejected.append(Rejection(tool.name, tool.family, decision.verdict, decision.reason))
        for index, family in enumerate(FAMILIES):
            rng = np.random.default_rng([seed, index])
            gate_variants(gate, family, count=variants_per_family, rng=rng, max_attempts=attempts)
        present = {tool.family for tool in gate.tools}
        stats = gate.stats_dict()
        families = [f for f in (*FAMILIES, *keywords) if f in present]
        return cls(
            tools=tuple(gate.tools),
            keywords={f: keywords[f] for f in dict.fromkeys(families)},
            gate_stats={f: stats.get(f, {}) for f in dict.fromkeys(families)},
            rejected=tuple(rejected),
        )

    def get(self, name: str) -> ToolSpec:
        """The tool called `name`."""
        try:
            return self._by_name[name]
        except KeyError:
            msg = f"no tool named `{name}` in the tool space"
            raise KeyError(msg) from None

    def family(self, name: str) -> str:
        """The family of the tool called `name`."""
        return self.get(name).family

    def by_family(self, family: str) -> tuple[ToolSpec, ...]:
        """The tools of a family (base tool first), empty for an unknown family."""
        return self._by_family.get(family, ())

    @property
    def families(self) -> tuple[str, ...]:
        """Families with at least one tool: built-in ones in their order, then user families in file order."""
        return tuple(self._by_family)

    @property
    def names(self) -> tuple[str, ...]:
        """Every tool name, in the space's order."""
        return tuple(self._by_name)

    def route(self, title: str, text: str) -> tuple[str, str]:
        """`route_family` with this space's lexicon (user families included)."""
        return route_family(title, text, keywords=self.keywords)

    def __len__(self) -> int:
        return len(self.tools)

    def __contains__(self, name: object) -> bool:
        return name in self._by_name

    def to_json_lines(self) -> Sequence[str]:
        """Every tool's canonical JSON (`ToolSpec.to_json`), in order."""
        return [tool.to_json() for tool in self.tools]
