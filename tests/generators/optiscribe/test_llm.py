"""Challengers behind the backend protocol: the scripted policy's specs, and validation of specs and LP answers."""

import json

import pytest

from synth.core.llm import SamplingParams, ScriptedBackend
from synth.generators.optiscribe.llm import challenger_request, read_challenger_answer, scripted_challenger_policy
from synth.validators.optiscribe.grammar import parse_instruction

INSTRUCTION = "a max-cut problem with 30 nodes, density between 0.2 and 0.4, hard"


def test_scripted_backend_answers_with_valid_distinct_specs_inside_the_instruction():
    backend = ScriptedBackend(scripted_challenger_policy)
    [result] = backend.generate([challenger_request(INSTRUCTION, sampling=SamplingParams(n=4))])
    assert result.schema_valid == (True,) * 4
    answers = [read_challenger_answer(text, instruction=INSTRUCTION) for text in result.texts]
    assert all(a.reason is None and a.spec.sizes == {"nodes": 30} for a in answers)
    assert all(0.2 <= a.spec.density <= 0.4 for a in answers)
    assert len({a.spec.to_json() for a in answers}) > 1
    assert backend.generate([challenger_request(INSTRUCTION, sampling=SamplingParams(n=4))])[0].texts == result.texts


def test_a_bad_instruction_is_refused_with_the_grammars_reason():
    [result] = ScriptedBackend(scripted_challenger_policy).generate([challenger_request("a sudoku problem")])
    grammar_reason = (
        "unknown family in instruction ('sudoku'); choose from ['facility_location', 'max_cut', "
        "'set_cover', 'combinatorial_auction', 'independent_set', 'knapsack']"
    )
    assert json.loads(result.texts[0]) == {"error": grammar_reason, "code": "unknown_family"}
    answer = read_challenger_answer(result.texts[0], instruction=INSTRUCTION)
    assert answer.code == "challenger_refused" and answer.reason == f"challenger refused: {grammar_reason}"


@pytest.mark.parametrize(
    ("instruction", "code", "fragment"),
    [
        ("a max-cut problem with -5 nodes", "invalid_size", "'-5 nodes' is not a size"),
        ("a max-cut problem with 2.5 nodes", "invalid_size", "'2.5 nodes' is not a size"),
        ("a max-cut problem with twenty nodes", "instruction_unparsed", "'twenty nodes' is not read as a size"),
    ],
)
def test_an_unreadable_size_is_refused_not_defaulted(instruction, code, fragment):
    [result] = ScriptedBackend(scripted_challenger_policy).generate([challenger_request(instruction)])
    refusal = json.loads(result.texts[0])
    assert refusal["code"] == code and fragment in refusal["error"]


@pytest.mark.parametrize(
    ("answer", "code", "reason"),
    [
        (
            '{"family": "max_cut", "sizes": {"nodes": 20}}',
            "ignores_instruction",
            "spec ignores the instruction: size `nodes` is 20, asked [30, 30]",
        ),
        (
            '{"family": "max_cut", "sizes": {"nodes": 2}}',
            "invalid_size",
            "spec: max_cut: size `nodes` must be an integer >= 3, got 2",
        ),
        (
            '{"family": "max_cut", "sizes": {"nodes": 30}, "colour": 1}',
            "malformed_spec",
            "spec: unknown field `colour`",
        ),
        (
            "{not json",
            "malformed_spec",
            "spec: not JSON (Expecting property name enclosed in double quotes at char 1)",
        ),
    ],
)
def test_bad_specs_are_refused_with_a_reason(answer, code, reason):
    refused = read_challenger_answer(answer, instruction=INSTRUCTION)
    assert (refused.code, refused.reason) == (code, reason)


def test_lp_answers_are_parsed_before_solving():
    pytest.importorskip("pyscipopt")
    from synth.generators.optiscribe.build import build_model_text

    text = build_model_text(parse_instruction(INSTRUCTION).make_spec(), seed=0)
    assert read_challenger_answer(text, instruction=INSTRUCTION).model_text == text
    malformed = "Maximize\n obj: 3 x + 2 y\nSubject To\n c1: x + y <= \nBounds\nEnd\n"
    refused = read_challenger_answer(malformed, instruction=INSTRUCTION)
    assert refused.code == "malformed_lp" and refused.reason == (
        "malformed LP: Syntax error in line 5 ('Bounds'): expected value as right hand side."
    )


def test_an_lp_answer_of_another_size_is_refused_before_solving():
    pytest.importorskip("pyscipopt")
    from synth.generators.optiscribe.build import build_model_text

    other = build_model_text(parse_instruction("a max-cut problem with 20 nodes, density 0.3").make_spec(), seed=0)
    refused = read_challenger_answer(other, instruction=INSTRUCTION)
    assert refused.code == "ignores_instruction" and refused.model_text is None
    assert refused.reason.startswith("LP ignores the instruction: ")
