"""Fuzzing the MILP instruction grammar: any text is a request or one `SpecError` line with a stable code; a
request asks only sizes its text states; the CLI refuses an unreadable curriculum in one line, writing nothing."""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest
from hypothesis import HealthCheck, assume, given, settings
from hypothesis import strategies as st
from typer.testing import CliRunner

from synth.cli.app import app
from synth.core.records import REASON_CODE
from synth.validators.optiscribe.grammar import NOUNS, SIZE_NOUNS, parse_instruction, render_instruction
from synth.validators.optiscribe.request import InstanceRequest
from synth.validators.optiscribe.spec import SpecError

_WORD_TEXT = (
    "a|max-cut|set cover|knapsack|facility location|independent set|combinatorial auction|problem|with|and|between|"
    "to|at least|at most|-|nodes|items|customers|facilities|rows|columns|bids|knapsacks|density|sparse|dense|hard|"
    "easy|tight capacities|weights from|affinity|costs up to|twenty|-5|2.5|0|30|1,000|99999999999999|%|,|1e3|"
    "strongly correlated|barabasi-albert|capacity ratio"
)
WORDS = st.sampled_from(_WORD_TEXT.split("|"))
FAMILY_WORDS = st.sampled_from(["a max-cut problem", "a knapsack problem", "a set cover problem", "an independent set"])
COUNTS = st.one_of(
    st.integers(-50, 400).map(str),
    st.floats(-10, 100).map(lambda f: f"{f:.2f}"),
    st.sampled_from(["twenty", "five", "1,000", "1e3", "5k", "between 10 and 20", "10-20", "at least 40", "at most 9"]),
)
SIZE_PHRASES = st.tuples(COUNTS, st.sampled_from(sorted(SIZE_NOUNS))).map(" ".join)
TEMPLATED = st.builds(
    lambda family, sizes, extra: f"{family} with {' and '.join(sizes)}{extra}",
    FAMILY_WORDS,
    st.lists(SIZE_PHRASES, min_size=1, max_size=3),
    st.sampled_from(["", ", hard", ", density 0.3", ", sparse, easy", ", strongly correlated"]),
)
INSTRUCTIONS = st.one_of(
    TEMPLATED,
    st.lists(WORDS, max_size=14).map(" ".join),
    st.text(max_size=80),
    st.binary(max_size=80).map(lambda b: b.decode("utf-8", "replace")),
)
FUZZ = settings(max_examples=300, deadline=None)
runner = CliRunner()


def _stated_counts(text: str) -> set[str]:
    """Canonical size names whose noun follows a number somewhere in `text`."""
    return {SIZE_NOUNS[m[1]] for m in re.finditer(rf"\d\s+({NOUNS})\b", " ".join(text.split()).lower())}


@FUZZ
@given(text=INSTRUCTIONS)
def test_any_text_is_a_request_or_one_coded_line(text: str) -> None:
    try:
        request = parse_instruction(text)
    except SpecError as error:
        assert REASON_CODE.fullmatch(error.code), error.code
        assert str(error) and "\n" not in str(error)
        return
    assert isinstance(request, InstanceRequest)
    assert set(request.sizes) <= _stated_counts(text)  # no size without a number in the text
    again = parse_instruction(render_instruction(request))
    assert (again.family, dict(again.sizes), again.density) == (request.family, dict(request.sizes), request.density)


@given(
    noun=st.sampled_from(["nodes"]),
    count=st.one_of(
        st.integers(max_value=-1).map(str),
        st.floats(min_value=0.01, max_value=1e4).filter(lambda f: not f.is_integer()).map(lambda f: f"{f:.3f}"),
        st.sampled_from(["twenty", "five", "a dozen", "several", "forty-two"]),
    ),
)
@settings(max_examples=60, deadline=None)
def test_a_size_count_the_grammar_cannot_read_never_falls_back_to_the_default(noun: str, count: str) -> None:
    text = f"a max-cut problem with {count} {noun}, hard"
    try:
        request = parse_instruction(text)
    except SpecError as error:
        assert error.code in {"invalid_size", "instruction_unparsed"}
        assert f"{count.split()[-1]} {noun}" in str(error)
        return
    raise AssertionError(f"{text!r} parsed into {request}")


@settings(max_examples=15, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(text=INSTRUCTIONS)
def test_the_cli_refuses_an_unreadable_curriculum_in_one_line(tmp_path: Path, text: str) -> None:
    try:
        parse_instruction(text)
    except SpecError:
        pass
    else:
        assume(False)  # a readable curriculum would start a real self-play run
    out = tmp_path / "out"
    result = runner.invoke(
        app,
        [
            "generate",
            "optiscribe",
            "--out",
            str(out),
            "--no-progress",
            "--set",
            f"generator.curriculum={json.dumps([text])}",
        ],
    )
    assert result.exception is None or isinstance(result.exception, SystemExit), repr(result.exception)
    assert result.exit_code == 2, result.output
    lines = [line for line in result.output.splitlines() if line.strip()]
    assert len(lines) == 1 and lines[0].startswith("error: "), result.output
    assert not out.exists()


JSON_VALUES = st.recursive(
    st.none() | st.booleans() | st.integers(-5, 10**7) | st.floats(allow_nan=False) | st.text(max_size=10),
    lambda inner: st.lists(inner, max_size=3) | st.dictionaries(st.text(max_size=8), inner, max_size=3),
    max_leaves=8,
)
VALID_SPEC = {"family": "max_cut", "sizes": {"nodes": 20}, "density": 0.3, "difficulty": "hard", "knobs": {}}


@st.composite
def spec_answers(draw: st.DrawFn) -> str:
    """A spec JSON answer with one field (or one size / knob) replaced by random JSON, or random text."""
    if draw(st.booleans()):
        return draw(st.text(max_size=60))
    data = json.loads(json.dumps(VALID_SPEC))
    field = draw(st.sampled_from([*data, "sizes.nodes", "knobs.weight_low", "extra"]))
    head, _, tail = field.partition(".")
    if tail:
        data[head][tail] = draw(JSON_VALUES)
    else:
        data[head] = draw(JSON_VALUES)
    return json.dumps(data)


@settings(max_examples=200, deadline=None)
@given(answer=spec_answers())
def test_any_challenger_answer_is_a_spec_or_a_coded_refusal(answer: str) -> None:
    pytest.importorskip("pyscipopt")  # LP answers are read by SCIP
    from synth.generators.optiscribe.llm import read_challenger_answer
    from synth.validators.optiscribe.spec import InstanceSpec

    refused = read_challenger_answer(answer, instruction="a max-cut problem with 20 nodes, density 0.3, hard")
    if refused.reason is None:
        assert isinstance(refused.spec, InstanceSpec) or refused.model_text == answer
    else:
        assert REASON_CODE.fullmatch(refused.code or ""), refused
        assert "\n" not in refused.reason
