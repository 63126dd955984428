"""The judge layer: rule judge per turn, reflection-aware scoring, and the LLM judge on the scripted backend."""

from __future__ import annotations

import json

import pyarrow as pa
from toolforge_rows import clean_row, fixture_rows, wrong_arguments_row

from synth.core.llm import GenRequest, GenResult
from synth.validators.toolforge.judge import (
    LLMJudge,
    check_judge,
    judge_row,
    parse_judgement,
    scripted_judge_backend,
    states_failure,
)
from synth.validators.toolforge.records import TOOLFORGE_SCHEMA
from synth.validators.toolforge.verifiers import build_verifiers


def test_valid_rows_score_one_on_every_turn() -> None:
    for row in fixture_rows():
        judgement = judge_row(row)
        assert judgement.score == 1 and all(judgement.turn_scores), judgement.reasons
        assert check_judge(row) == []


def test_think_action_inconsistency_fails_that_turn() -> None:
    row = clean_row()
    row["messages"][2]["reasoning"] = "First find who directed Glass Harbor with place_search."
    judgement = judge_row(row)
    assert judgement.turn_scores == (0, 1, 1)
    assert judgement.reasons[0] == "tool_unnamed: turn 0: reasoning does not name the called tool 'work_lookup'"


def test_a_failed_turn_scores_one_only_when_the_next_turn_reflects() -> None:
    row = wrong_arguments_row()
    assert judge_row(row).turn_scores == (1, 1, 1, 1)
    row["messages"][6]["reasoning"] = "Now call person_profile_finder about Mira Castellan."
    judgement = judge_row(row)
    assert judgement.turn_scores == (1, 0, 0, 1)
    assert "unreflected_failure: turn 1: its failed call is not reflected on by the next turn" in judgement.reasons
    assert any(r.startswith("no_reflection: turn 2: does not reflect on the failed") for r in judgement.reasons)


def test_a_denied_failure_is_no_reflection() -> None:
    assert states_failure("The `query` was wrong.")
    assert states_failure("The results are not what I need: `x` was the wrong tool.")
    assert not states_failure("There was no problem with `query`; the results were not wrong.")
    row = wrong_arguments_row()
    row["messages"][6]["reasoning"] = "Nothing was wrong with the query. I call person_profile_finder again."
    assert judge_row(row).turn_scores == (1, 0, 0, 1)


def test_answer_reasoning_must_cite_an_observed_gold_title() -> None:
    row = clean_row()
    row["messages"][-1]["reasoning"] = "I am sure it is Veltrona."
    judgement = judge_row(row)
    assert judgement.turn_scores[-1] == 0
    assert "no_citation: turn 2: answer reasoning cites no observed gold passage" in judgement.reasons


def test_answer_reasoning_must_conclude_the_given_answer() -> None:
    row = clean_row()
    row["messages"][-1]["reasoning"] = "The Mira Castellan passage says she was born in Orlin."
    judgement = judge_row(row)
    assert judgement.turn_scores[-1] == 0
    assert judgement.reasons[-1] == "unconcluded_answer: turn 2: answer reasoning does not conclude the answer it gives"


def test_llm_judge_matches_the_rule_judge_and_counts_calls() -> None:
    rows = [*fixture_rows(), clean_row()]
    rows[2]["messages"][2]["reasoning"] = "Use place_search."
    judge = LLMJudge(scripted_judge_backend())
    judgements = judge.judge(rows)
    assert [j.score for j in judgements] == [judge_row(r).score for r in rows] == [1, 1, 0]
    assert judge.calls == 3


def test_invalid_judge_output_fails_with_the_reason() -> None:
    assert parse_judgement("not json", turns=3).score == 0
    reasons = parse_judgement("not json", turns=3).reasons
    assert reasons == ("invalid_judge_output: not JSON: Expecting value at char 0",)
    wrong_count = json.dumps({"reasoning": "ok", "turn_scores": [1], "score": 1})
    assert parse_judgement(wrong_count, turns=3).reasons == (
        "invalid_judge_output: 1 turn scores for 3 assistant turns",
    )

    class BrokenBackend:
        name = "broken"

        def generate(self, requests: list[GenRequest]) -> list[GenResult]:
            return [GenResult(key="k", texts=('{"score": 1}',), finish_reasons=("stop",)) for _ in requests]

        def close(self) -> None:
            """Nothing to release."""

    judgement = LLMJudge(BrokenBackend()).judge([clean_row()])[0]
    assert judgement.score == 0
    assert judgement.reasons[0].startswith("invalid_judge_output: <root>: 'reasoning' is a required property")


def test_judge_verifier_on_both_backends() -> None:
    rows = [*fixture_rows(), clean_row()]
    rows[2]["messages"][2]["reasoning"] = "Use place_search."
    table = pa.Table.from_pylist(rows, schema=TOOLFORGE_SCHEMA)
    for backend in ("rule", "scripted-llm"):
        verdicts = build_verifiers(backend)["judge"].verify(table)
        assert [v.passed for v in verdicts] == [True, True, False]
        assert verdicts[2].scores["pass_fraction"] < 1
        first = "tool_unnamed: turn 0: reasoning does not name the called tool 'work_lookup'"
        assert verdicts[2].reasons[0] == (first if backend == "rule" else f"turn_scored_zero: {first}")
        assert verdicts[0].scores["llm_calls"] == (1.0 if backend == "scripted-llm" else 0.0)
