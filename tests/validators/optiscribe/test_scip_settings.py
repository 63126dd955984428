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
