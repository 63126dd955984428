"""The tool space registry: build, lookups, determinism, user tool files (valid, gated, invalid)."""

from __future__ import annotations

import doctest
import json
from pathlib import Path

import pytest
import yaml

from synth.core.errors import ConfigError
from synth.generators.toolforge import tools, toolspace
from synth.generators.toolforge.tools import BASE_TOOLS, FAMILIES
from synth.generators.toolforge.toolspace import ToolSpace, load_user_tools

QUERY_SCHEMA = {"type": "object", "properties": {"query": {"type": "string"}}, "required": ["query"]}
RECIPE = {
    "type": "function",
    "function": {
        "name": "recipe_search",
        "description": "Find cooking recipes by dish, ingredient and cuisine, with cooking times and steps.",
        "parameters": {
            "type": "object",
            "properties": {
                "query": {"type": "string", "description": "What to cook."},
                "ingredients": {"type": "array", "items": {"type": "string"}},
                "max_minutes": {"type": "integer"},
            },
            "required": ["query"],
        },
    },
}
RESTAURANT = {
    "name": "restaurant_finder",
    "description": "Find restaurants and cafes in a city with price level, ratings and opening hours.",
    "parameters": {
        "type": "object",
        "properties": {"query": {"type": "string"}, "city": {"type": "string"}, "cuisine": {"type": "string"}},
        "required": ["query", "city"],
    },
}
STADIUM = {
    "name": "stadium_capacity_lookup",
    "description": "Look up sports stadiums and arenas: seating capacity, home teams, league and opening year.",
    "parameters": {
        "type": "object",
        "properties": {"query": {"type": "string"}, "stadium": {"type": "string"}, "league": {"type": "string"}},
        "required": ["query", "stadium"],
    },
}


@pytest.fixture(scope="module")
def space() -> ToolSpace:
    return ToolSpace.build(variants_per_family=2, seed=7)


def _write(folder: Path, name: str, document: object) -> Path:
    path = folder / name
    text = json.dumps(document) if name.endswith(".json") else yaml.safe_dump(document, sort_keys=False)
    path.write_text(text, encoding="utf-8")
    return path


def test_build_lookups(space: ToolSpace) -> None:
    assert space.families == FAMILIES
    assert len(space) == len(space.names) == 19 * 3
    for family in FAMILIES:
        tools = space.by_family(family)
        assert [tool.origin for tool in tools] == ["base", "variant", "variant"]
        assert tools[0].name == f"{family}_search"
        assert all(space.family(tool.name) == family and space.get(tool.name) is tool for tool in tools)
        stats = space.gate_stats[family]
        assert stats["accepted"] == 2
        assert stats["candidates"] == 2 + stats["rejected_near_duplicate"] + stats["rejected_drift"]
    assert "person_information_search" in space and "nope" not in space
    assert space.by_family("nope") == ()
    with pytest.raises(KeyError, match="no tool named `nope`"):
        space.get("nope")


def test_same_seed_same_space(space: ToolSpace) -> None:
    again = ToolSpace.build(variants_per_family=2, seed=7)
    assert again.to_json_lines() == space.to_json_lines()
    assert [list(tool.properties) for tool in again.tools] == [list(tool.properties) for tool in space.tools]
    assert ToolSpace.build(variants_per_family=2, seed=8).to_json_lines() != space.to_json_lines()


def test_build_refuses_negative_settings() -> None:
    with pytest.raises(ValueError, match="non-negative"):
        ToolSpace.build(variants_per_family=1, seed=-1)


def test_json_list_file_round_trip(tmp_path: Path) -> None:
    wrapped = {"type": "function", "function": RESTAURANT, "family": "lifestyle_service_information"}
    path = _write(tmp_path, "tools.json", [wrapped])
    built = ToolSpace.build(variants_per_family=0, seed=0, user_tools=path)
    tool = built.get("restaurant_finder")
    assert tool.origin == "user" and tool.family == "lifestyle_service_information"
    assert tool.to_openai()["function"] == RESTAURANT
    assert built.rejected == ()
    assert built.gate_stats["lifestyle_service_information"]["accepted"] == 1
    assert set(built.gate_stats["person_information"].values()) == {0}


def test_yaml_mapping_file_with_a_new_family(tmp_path: Path) -> None:
    document = {
        "cooking_information": {"keywords": ["recipe", "cookbook", "ingredient"], "tools": [RECIPE]},
        "sports_information": [STADIUM],
    }
    path = _write(tmp_path, "tools.yaml", document)
    loaded = load_user_tools(path)
    assert [tool.name for tool in loaded.tools] == ["recipe_search", "stadium_capacity_lookup"]
    assert loaded.keywords == {"cooking_information": ("recipe", "cookbook", "ingredient")}
    built = ToolSpace.build(variants_per_family=1, seed=0, user_tools=path)
    assert built.families == (*FAMILIES, "cooking_information")
    assert built.get("stadium_capacity_lookup").to_openai()["function"] == STADIUM
    assert [tool.origin for tool in built.by_family("sports_information")] == ["base", "user", "variant"]
    family, reason = built.route("Apple pie", "The apple pie recipe is a cookbook entry listing each ingredient.")
    assert family == "cooking_information", reason


def test_near_duplicate_user_tool_is_rejected_with_a_reason(tmp_path: Path) -> None:
    base = BASE_TOOLS[FAMILIES.index("person_information")].to_openai()
    copy = {**base, "function": {**base["function"], "name": "person_info_lookup"}, "family": "person_information"}
    off_topic = {**RECIPE, "family": "lifestyle_service_information"}  # cooking is not dining out
    path = _write(tmp_path, "tools.json", [copy, {**RESTAURANT, "family": "lifestyle_service_information"}, off_topic])
    built = ToolSpace.build(variants_per_family=0, seed=0, user_tools=path)
    assert "restaurant_finder" in built
    assert "person_info_lookup" not in built and "recipe_search" not in built
    duplicate, drift = built.rejected
    assert (duplicate.name, duplicate.verdict) == ("person_info_lookup", "near_duplicate")
    assert "person_information_search" in duplicate.reason
    assert (drift.name, drift.family, drift.verdict) == ("recipe_search", "lifestyle_service_information", "drift")
    assert built.gate_stats["person_information"]["rejected_near_duplicate"] == 1
    assert built.gate_stats["lifestyle_service_information"] == {
        "candidates": 2, "accepted": 1, "rejected_near_duplicate": 0, "rejected_drift": 1,
    }  # fmt: skip


def _tool(**changes: object) -> dict:
    function = {"name": "my_tool", "description": "Find things.", "parameters": QUERY_SCHEMA} | changes
    return {"type": "function", "function": function, "family": "general_information"}


BAD_FILES = [
    ("tools.json", [_tool(parameters={"type": "object", "properties": {}})], "#0 `my_tool`",
     "`parameters.properties.query` must be a string property"),
    ("tools.json", [_tool(parameters={"type": "object", "properties": {"query": {"type": "string"}}})],
     "`my_tool`", "`parameters.required` must list `query`"),
    ("tools.json", [_tool(parameters={"type": 5})], "`my_tool`", "`parameters` is not a valid JSON Schema"),
    ("tools.json", [_tool(parameters={"type": "string"})], "`my_tool`", '`parameters.type` must be "object"'),
    ("tools.json", [_tool(name="bad name!")], "tool #0", "`name` must match"),
    ("tools.json", [_tool(description="")], "`my_tool`", "`description` must be a non-empty string"),
    ("tools.json", [_tool(), _tool()], "tool #1 `my_tool`", "`name` is already used"),
    ("tools.json", [_tool(name="person_information_search")], "#0", "`name` is already used"),
    ("tools.json", [{**_tool(), "family": "cooking"}], "`my_tool`", "`family` `cooking` is not built in"),
    ("tools.json", [{"name": "x"}], "tool #0", "`family` is missing"),
    ("tools.yaml", {"cooking": {"keywords": "recipe", "tools": []}}, "family `cooking`", "`keywords` must be"),
    ("tools.yaml", {"cooking": {"keywords": ["recipe"]}}, "family `cooking`", "`tools` must be a list"),
    ("tools.yaml", "just text", "", "expected a list of tools or a mapping"),
]  # fmt: skip


@pytest.mark.parametrize(("name", "document", "where", "message"), BAD_FILES)
def test_bad_user_files_give_one_line_errors(
    tmp_path: Path, name: str, document: object, where: str, message: str
) -> None:
    path = _write(tmp_path, name, document)
    with pytest.raises(ConfigError) as caught:
        load_user_tools(path, reserved_names=[tool.name for tool in BASE_TOOLS])
    text = str(caught.value)
    assert "\n" not in text
    assert text.startswith(str(path)) and where in text and message in text


@pytest.mark.parametrize(
    ("name", "text", "message"),
    [
        ("tools.yaml", "a: [b\n", "not valid YAML"),
        ("tools.json", "[{", "not valid JSON"),
        ("tools.txt", "[]", "must end in .json, .yaml or .yml"),
    ],
)
def test_unreadable_user_files(tmp_path: Path, name: str, text: str, message: str) -> None:
    path = tmp_path / name
    path.write_text(text, encoding="utf-8")
    with pytest.raises(ConfigError, match=message) as caught:
        ToolSpace.build(variants_per_family=0, seed=0, user_tools=path)
    assert "\n" not in str(caught.value)


@pytest.mark.parametrize("module", [tools, toolspace], ids=lambda module: module.__name__.rsplit(".", 1)[-1])
def test_docstring_examples_run(module) -> None:
    result = doctest.testmod(module)
    assert result.attempted > 0 and result.failed == 0
