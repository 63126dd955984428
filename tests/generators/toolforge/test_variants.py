"""Variant rewriting and the dual similarity gate (near-duplicates and drift both rejected)."""

from __future__ import annotations

from dataclasses import replace

import numpy as np
import pytest
from jsonschema import Draft202012Validator

from synth.generators.toolforge.tools import BASE_TOOLS, FAMILIES, base_tool
from synth.generators.toolforge.variants import (
    GateSettings,
    SimilarityGate,
    gate_variants,
    make_variant,
    rename_parameter,
)


@pytest.fixture(scope="module")
def gate_with_bases() -> SimilarityGate:
    return SimilarityGate(tools=list(BASE_TOOLS))


@pytest.mark.parametrize("family", FAMILIES)
def test_variant_differs_from_its_base_and_keeps_query(family: str) -> None:
    base = base_tool(family)
    rng = np.random.default_rng(3)
    for _ in range(5):
        variant = make_variant(family, rng)
        assert variant.family == family and variant.origin == "variant"
        assert variant.name != base.name and variant.description != base.description
        Draft202012Validator.check_schema(variant.parameters)
        assert variant.required[0] == "query" and variant.properties["query"]["type"] == "string"
        assert set(variant.required) <= set(variant.properties)
        added = len(variant.properties) - len(base.properties)
        assert 1 <= added <= 3
        assert len(base.required) <= len(variant.required) <= len(base.required) + 2 + added
        renamed = set(base.properties) - {"query"} - set(variant.properties)
        assert len(renamed) >= len(base.properties) - 2  # nearly every base parameter got a new name


def test_variants_are_deterministic_by_seed() -> None:
    def draw(seed: int) -> list[str]:
        rng = np.random.default_rng(seed)
        return [make_variant("person_information", rng).to_json() for _ in range(4)]

    assert draw(11) == draw(11)
    assert draw(11) != draw(12)


def test_property_order_is_shuffled() -> None:
    rng = np.random.default_rng(0)
    orders = {next(iter(make_variant("legal_information", rng).properties)) for _ in range(20)}
    assert len(orders) > 1


def test_rename_parameter_avoids_query_and_taken_names() -> None:
    rng = np.random.default_rng(0)
    for _ in range(50):
        name = rename_parameter("person_name", rng, taken={"individual_name", "person_label"})
        assert name not in {"query", "person_name", "individual_name", "person_label"}
    assert rename_parameter("zzz", rng) in {"target_zzz", "preferred_zzz", "zzz_filter", "zzz_value", "zzz_hint"}


def test_exact_copy_is_a_near_duplicate(gate_with_bases: SimilarityGate) -> None:
    decision = gate_with_bases.check(replace(BASE_TOOLS[0], origin="variant"))
    assert decision.verdict == "near_duplicate"
    assert "already exists" in decision.reason


def test_trivially_renamed_copy_is_a_near_duplicate(gate_with_bases: SimilarityGate) -> None:
    base = base_tool("sports_information")
    renamed = replace(base, name="sports_info_lookup", origin="variant")
    decision = gate_with_bases.check(renamed)
    assert decision.verdict == "near_duplicate" and decision.nearest == base.name
    extra = dict(base.properties) | {"venue": {"type": "string", "description": "Stadium."}}
    padded = replace(renamed, parameters=dict(base.parameters) | {"properties": extra})
    assert gate_with_bases.check(padded).verdict == "near_duplicate"


def test_tool_of_another_family_is_drift(gate_with_bases: SimilarityGate) -> None:
    sports = make_variant("sports_information", np.random.default_rng(1))
    decision = gate_with_bases.check(replace(sports, family="person_information"))
    assert decision.verdict == "drift"
    assert decision.best_other_family == "sports_information"
    assert decision.other_score > decision.family_score


def test_unrelated_description_is_drift(gate_with_bases: SimilarityGate) -> None:
    base = base_tool("medical_information")
    unrelated = replace(
        base,
        name="medical_data_tool",
        description="Converts audio files between formats and adjusts playback volume and equalizer presets.",
        parameters={"type": "object", "properties": {"query": {"type": "string"}}, "required": ["query"]},
    )
    assert gate_with_bases.check(unrelated).verdict == "drift"


def test_a_fresh_variant_passes(gate_with_bases: SimilarityGate) -> None:
    variant = make_variant("education_information", np.random.default_rng(2))
    decision = gate_with_bases.check(variant)
    assert decision.accepted, decision.reason
    assert decision.family_score >= GateSettings().drift


def test_gate_variants_counts_every_candidate() -> None:
    gate = SimilarityGate(tools=list(BASE_TOOLS))
    accepted = gate_variants(gate, "creation_information", count=6, rng=np.random.default_rng(0), max_attempts=60)
    assert len(accepted) == 6
    stats = gate.stats_dict()["creation_information"]
    assert stats["accepted"] == 6
    assert stats["candidates"] == stats["accepted"] + stats["rejected_near_duplicate"] + stats["rejected_drift"]
    assert len({tool.name for tool in gate.tools}) == len(gate.tools)


def test_strict_threshold_rejects_variants_as_near_duplicates() -> None:
    gate = SimilarityGate(settings=GateSettings(near_duplicate=0.3), tools=list(BASE_TOOLS))
    accepted = gate_variants(gate, "military_information", count=3, rng=np.random.default_rng(0), max_attempts=5)
    assert accepted == []
    assert gate.stats_dict()["military_information"]["rejected_near_duplicate"] == 5
