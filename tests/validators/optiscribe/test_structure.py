"""Instruction following: sizes and density measured from the model, with half an edge of rounding allowed."""

import pytest

pytest.importorskip("pyscipopt")

from synth.generators.optiscribe.build import build_model_text
from synth.validators.optiscribe.reading import read_model_text
from synth.validators.optiscribe.request import InstanceRequest
from synth.validators.optiscribe.structure import instruction_violations, measure_structure


def test_a_density_at_the_asked_bound_passes_within_half_an_edge():
    request = InstanceRequest(family="max_cut", sizes={"nodes": (30, 30)}, density=(0.27, 0.33))
    model = read_model_text(build_model_text(request.make_spec(density=0.33), seed=0))
    measured = measure_structure(model, "max_cut")
    assert measured["density"] == 144 / 435 > 0.33  # round(0.33 * 435) = 144 edges
    assert instruction_violations(measured, request.asked()) == []
    two_more = dict(measured, density=146 / 435)
    reasons = instruction_violations(two_more, request.asked())
    assert reasons == ["density_outside: density is 0.3356, asked [0.27, 0.33]"]


def test_models_without_the_naming_convention_fail_the_check():
    text = "Maximize\n obj: a + b\nSubject To\n c1: a + b <= 1\nBinaries\n a b\nEnd\n"
    measured = measure_structure(read_model_text(text), "max_cut")
    assert measured == {}
    asked = {"sizes": {"nodes": [2, 2]}, "density": [0.5, 1.0]}
    assert instruction_violations(measured, asked) == [
        "size_missing: size `nodes` not found in the model",
        "density_missing: density not measurable in the model",
    ]
