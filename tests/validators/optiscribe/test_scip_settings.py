"""Tuned SCIP settings are applied and recorded; a time-capped row fails re-verification, a node-capped one passes."""

import json

import pyarrow as pa
import pytest

pytest.importorskip("pyscipopt")

from synth.generators.optiscribe.build import build_model_text
from synth.generators.optiscribe.generator import OPTISCRIBE_SCHEMA
from synth.validators.optiscribe import ScipVerifier
from synth.validators.optiscribe.grammar import parse_instruction
from synth.validators.optiscribe.reading import read_model_text
from synth.validators.optiscribe.scip import ScipSettings, solve_model_text

HARD = "a max-cut problem with 30 nodes, density 0.3"


def test_emphasis_meta_and_overrides_reach_scip_and_round_trip():
    settings = ScipSettings(emphasis="easycip", meta={"separating": "off"}, overrides={"branching/scorefunc": "s"})
    model = read_model_text(build_model_text(parse_instruction("a max-cut problem with 10 nodes").make_spec(), seed=0))
    settings.apply(model)
    assert model.getParam("branching/scorefunc") == "s"
    assert model.getParam("separating/gomory/freq") == -1  # SEPARATING OFF (the default is 10)
    assert model.getParam("limits/totalnodes") == settings.total_nodes
    assert ScipSettings(**json.loads(json.dumps(settings.to_dict()))) == settings
    assert ScipSettings().to_dict() == {"seed": 0, "total_nodes": 5000, "time_limit": 60.0}
    with pytest.raises(ValueError, match="unknown emphasis 'fastest'"):
        ScipSettings(emphasis="fastest")
    with pytest.raises(ValueError, match="meta setting cuts='off'"):
        ScipSettings(meta={"cuts": "off"})


def _row(text, settings, stats):
    return {
        "model_text": text,
        "model_format": "lp",
        "scip_settings": json.dumps(settings.to_dict()),
        "solve_status": stats.status,
        "solve_nodes": stats.nodes,
    }


def test_a_node_capped_instance_is_kept_hard_unsolved_and_a_time_capped_one_is_not_reproducible():
    text = build_model_text(parse_instruction(HARD).make_spec(), seed=0)
    capped = ScipSettings(total_nodes=20, time_limit=600)
    stats = solve_model_text(text, settings=capped)
    assert stats.status == "totalnodelimit" and stats.nodes == 20 and stats.feasible and stats.gap > 0
    timed = ScipSettings(total_nodes=10**6, time_limit=0.05)
    timed_stats = solve_model_text(text, settings=timed)
    assert timed_stats.status == "timelimit"
    fields = [f for f in OPTISCRIBE_SCHEMA if f.name in ScipVerifier.reads]
    table = pa.Table.from_pylist([_row(text, capped, stats), _row(text, timed, timed_stats)], schema=pa.schema(fields))
    kept, timed_out = ScipVerifier(name="scip").verify(table)
    assert kept.passed and kept.scores["nodes"] == 20.0
    assert not timed_out.passed and timed_out.reasons[0].startswith("timelimit: stopped by the wall-clock cap")


def test_an_effort_over_three_seeds_is_the_median_solve_and_records_every_seeds_count():
    text = build_model_text(parse_instruction(HARD).make_spec(), seed=0)
    single = [solve_model_text(text, settings=ScipSettings(seed=s, total_nodes=3000)) for s in (4, 5, 6)]
    assert len({s.nodes for s in single}) == 3, "the seeds should disagree for this test to mean anything"
    settings = ScipSettings(seed=4, total_nodes=3000, effort_seeds=3)
    stats = solve_model_text(text, settings=settings)
    median = sorted(single, key=lambda s: s.nodes)[1]
    assert stats.nodes_by_seed == tuple(s.nodes for s in single)
    assert stats.nodes == median.nodes and stats.deterministic_time == median.deterministic_time
    assert stats.to_dict()["nodes_by_seed"] == [s.nodes for s in single]
    assert "nodes_by_seed" not in single[0].to_dict()
    assert settings.to_dict()["effort_seeds"] == 3
    assert ScipSettings(**json.loads(json.dumps(settings.to_dict()))) == settings
    assert [s.seed for s in settings.single_seeds()] == [4, 5, 6]
    fields = [f for f in OPTISCRIBE_SCHEMA if f.name in ScipVerifier.reads]
    honest = _row(text, settings, stats)
    lucky = dict(honest, solve_nodes=min(s.nodes for s in single))  # one seed's count claimed as the effort
    table = pa.Table.from_pylist([honest, lucky], schema=pa.schema(fields))
    kept, refused = ScipVerifier(name="scip").verify(table)
    assert kept.passed and kept.scores["nodes"] == median.nodes
    assert not refused.passed and refused.reasons[0].startswith("nodes_mismatch")
    with pytest.raises(ValueError, match="effort_seeds 2 must be odd"):
        ScipSettings(effort_seeds=2)


def test_a_wall_clock_stop_on_any_seed_is_what_the_measurement_reports():
    from dataclasses import replace

    from synth.validators.optiscribe.scip import median_solve

    text = build_model_text(parse_instruction("a max-cut problem with 10 nodes").make_spec(), seed=0)
    base = solve_model_text(text)
    solves = [replace(base, nodes=n, wall_seconds=1.0) for n in (9, 5, 7)]
    assert median_solve(solves).nodes == 7 and median_solve(solves).wall_seconds == 3.0
    assert median_solve(solves).nodes_by_seed == (9, 5, 7)
    solves[0] = replace(solves[0], status="timelimit")
    assert median_solve(solves).status == "timelimit" and median_solve(solves).nodes == 9
