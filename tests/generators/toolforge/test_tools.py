"""The 19 base tools (schemas, required `query`) and the passage router on the shipped HotpotQA seeds."""

from __future__ import annotations

import json
from collections import Counter
from pathlib import Path

import pytest
from jsonschema import Draft202012Validator

from synth.generators.toolforge import tools
from synth.generators.toolforge.tools import BASE_TOOLS, FAMILIES, base_tool, route_family, score_families

DEV_SAMPLE = Path(tools.__file__).parent / "data" / "hotpotqa_dev_sample.json"
EXPECTED_FAMILIES = (
    "person_information", "creation_information", "historical_event_information", "geographic_information",
    "scientific_information", "academic_research", "legal_information", "economic_information",
    "medical_information", "tradition_cultural_information", "environmental_information", "sports_information",
    "transportation_information", "education_information", "lifestyle_service_information",
    "military_information", "religious_information", "politics_information", "general_information",
)  # fmt: skip


def _kind(schema: dict) -> str:
    return "enum" if "enum" in schema else schema["type"]


def _dev_passages() -> dict[str, str]:
    records = json.loads(DEV_SAMPLE.read_text(encoding="utf-8"))
    return {title: "".join(sentences) for record in records for title, sentences in record["context"]}


def test_the_19_families_in_order() -> None:
    assert FAMILIES == EXPECTED_FAMILIES
    assert [tool.name for tool in BASE_TOOLS] == [f"{family}_search" for family in EXPECTED_FAMILIES]
    assert all(
        tool.family == family and tool.origin == "base" for tool, family in zip(BASE_TOOLS, FAMILIES, strict=True)
    )


@pytest.mark.parametrize("tool", BASE_TOOLS, ids=lambda tool: tool.name)
def test_base_tool_schema(tool) -> None:
    Draft202012Validator.check_schema(tool.parameters)
    assert tool.parameters["type"] == "object"
    assert tool.properties["query"]["type"] == "string"
    assert tool.required[0] == "query"
    others = [name for name in tool.properties if name != "query"]
    assert 3 <= len(others) <= 6
    assert 1 <= len(set(tool.required) - {"query"}) <= 3
    assert set(tool.required) <= set(tool.properties)
    assert len({_kind(tool.properties[name]) for name in others}) >= 3
    assert tool.description.isascii() and tool.description.endswith(".")
    assert all(schema.get("description") for schema in tool.properties.values())
    Draft202012Validator(tool.parameters).validate(
        {"query": "who?", **{n: _example(tool.properties[n]) for n in others}}
    )


def _example(schema: dict) -> object:
    kind = _kind(schema)
    if kind == "enum":
        return schema["enum"][0]
    if kind == "array":
        return schema["items"].get("enum", ["x"])[:1]
    return {"string": "x", "integer": 1, "boolean": True}[kind]


def test_parameter_types_cover_every_kind() -> None:
    kinds = Counter(_kind(schema) for tool in BASE_TOOLS for schema in tool.properties.values())
    assert set(kinds) == {"string", "enum", "array", "integer", "boolean"}
    assert base_tool("sports_information").to_json() == BASE_TOOLS[FAMILIES.index("sports_information")].to_json()


@pytest.mark.parametrize(
    ("title", "family"),
    [
        ("Scott Derrickson", "person_information"),
        ("Giuseppe Verdi", "person_information"),
        ("Richard Nixon", "person_information"),
        ("Ed Wood (film)", "creation_information"),
        ("2014 S/S", "creation_information"),
        ("Animorphs", "creation_information"),
        ("Woodson, Arkansas", "geographic_information"),
        ("Clinton, Minnesota", "geographic_information"),
        ("Billings Bulls", "sports_information"),
        ("Kasper Schmeichel", "sports_information"),
        ("Pelé", "sports_information"),
        ("2009 Singapore Grand Prix", "sports_information"),
        ("University of Kansas", "education_information"),
        ("Parma Airport", "transportation_information"),
        ("Sultan Ahmed Mosque", "religious_information"),
        ("United States Senate election in Illinois, 1978", "politics_information"),
    ],
)
def test_known_passages_route_to_their_family(title: str, family: str) -> None:
    routed, reason = route_family(title, _dev_passages()[title])
    assert routed == family, reason
    assert reason


def test_most_dev_passages_route_to_a_specific_family() -> None:
    passages = _dev_passages()
    counts = Counter(route_family(title, text)[0] for title, text in passages.items())
    # measured: 0 of 522 passages fall back; 18 families receive passages
    assert counts["general_information"] <= 0.02 * len(passages)
    assert len(counts) >= 15
    assert counts["creation_information"] > 0.15 * len(passages)
    assert counts["person_information"] > 0.15 * len(passages)


def test_fallback_and_ties() -> None:
    assert route_family("Zzyzx", "Qwerty asdf zxcv.") == (
        "general_information",
        "no family keyword matched; fallback to general_information",
    )
    # equal scores go to the family listed first
    lexicon = {"b_family": ("harbour",), "a_family": ("harbour",)}
    assert route_family("Harbour", "A harbour.", keywords=lexicon)[0] == "b_family"
    assert score_families("Harbour", "A harbour.", keywords=lexicon)["a_family"][1] == ("harbour",)


def test_athletes_go_to_sports_and_other_people_to_person() -> None:
    footballer = "John Doe (born 1 May 1980) is an English footballer who plays as a defender."
    actor = "Jane Doe (born 1 May 1980) is an English actor and singer."
    assert route_family("John Doe", footballer)[0] == "sports_information"
    assert route_family("Jane Doe", actor)[0] == "person_information"
