"""`synth bench optiscribe` and `synth bench marco` end to end on tiny settings: JSON with the ratios/metrics."""

import json

import pytest
from typer.testing import CliRunner

from synth.cli.app import app

runner = CliRunner()


def invoke(*args):
    return runner.invoke(app, [str(a) for a in args])


def test_bench_optiscribe_writes_ratios_per_family(tmp_path):
    pytest.importorskip("pyscipopt")
    out = tmp_path / "optiscribe.json"
    result = invoke(
        "bench",
        "optiscribe",
        "--rounds",
        "1",
        "--candidates",
        "2",
        "--eval-instances",
        "2",
        "--no-crosscheck",
        "--scale",
        "small",
        "--out",
        out,
    )
    assert result.exit_code == 0, result.output
    report = json.loads(out.read_text())
    assert set(report["families"]) == {"facility_location", "max_cut"}
    assert report["settings"]["eval_scip"]["total_nodes"] == 1000
    for family in report["families"].values():
        for group in ("selfplay", "default"):
            assert family[group]["instances"] == 2
            assert 0.0 <= family[group]["feasibility_rate"] <= 1.0
        assert family["median_nodes_ratio"] is None or family["median_nodes_ratio"] > 0


@pytest.mark.parametrize("challenger", ["cem", "gp"])
def test_bench_optiscribe_runs_the_asked_families_with_the_asked_learner(tmp_path, challenger):
    pytest.importorskip("pyscipopt")
    out = tmp_path / "maxcut.json"
    args = ("--rounds", "2", "--candidates", "2", "--eval-instances", "1", "--no-crosscheck", "--scale", "small")
    result = invoke(
        "bench", "optiscribe", *args, "--families", "max_cut", "--selfplay-size", "real", "--challenger", challenger,
        "--out", out,
    )  # fmt: skip
    assert result.exit_code == 0, result.output
    report = json.loads(out.read_text())
    families = report["families"]
    assert set(families) == {"max_cut"} and report["settings"]["challenger"] == challenger
    assert report["settings"]["reward"]["capped_nodes"] == "estimate" and report["settings"]["reward_version"] == "3"
    assert families["max_cut"]["curriculum"] == [families["max_cut"]["instruction"]]
    policy = families["max_cut"]["training"]["policy"]
    assert policy["kind"] == challenger
    if challenger == "gp":
        assert len(policy["observations"]) == 4  # every self-played spec is observed
    refused = invoke("bench", "optiscribe", "--families", "tsp", "--out", tmp_path / "x.json")
    assert refused.exit_code == 2 and "unknown family 'tsp'" in refused.output
    assert not (tmp_path / "x.json").exists()


def test_bench_optiscribe_refuses_an_unknown_learner_selfplay_size_or_capped_pay(tmp_path):
    result = invoke("bench", "optiscribe", "--challenger", "ga", "--out", tmp_path / "x.json")
    assert result.exit_code == 2
    assert "unknown learner 'ga'" in result.output
    result = invoke("bench", "optiscribe", "--selfplay-size", "huge", "--out", tmp_path / "x.json")
    assert result.exit_code == 2
    assert "unknown size 'huge'" in result.output
    result = invoke("bench", "optiscribe", "--capped-nodes", "guess", "--out", tmp_path / "x.json")
    assert result.exit_code == 2
    assert "--capped-nodes: unknown choice 'guess'" in result.output
    assert not (tmp_path / "x.json").exists()


def test_bench_optiscribe_resumes_from_its_state_dir_and_refuses_other_settings(tmp_path):
    pytest.importorskip("pyscipopt")
    state = tmp_path / "state"
    tiny = ("--families", "max_cut", "--selfplay-size", "real", "--scale", "small", "--no-crosscheck",
            "--eval-instances", "1", "--state-dir", state)  # fmt: skip
    args = (*tiny, "--candidates", "2")
    first = invoke("bench", "optiscribe", *args, "--rounds", "1", "--out", tmp_path / "one.json")
    assert first.exit_code == 0, first.output
    more = invoke("bench", "optiscribe", *args, "--rounds", "2", "--out", tmp_path / "two.json")
    assert more.exit_code == 0, more.output
    training = json.loads((tmp_path / "two.json").read_text())["families"]["max_cut"]["training"]
    assert training["resumed_from_round"] == 1 and [r["round"] for r in training["rounds"]] == [0, 1]
    other = invoke("bench", "optiscribe", *tiny, "--candidates", "3", "--rounds", "3", "--out", tmp_path / "three.json")
    assert other.exit_code == 2
    assert "selfplay.candidates=2, not 3" in other.output and len(other.output.strip().splitlines()) == 1
    assert not (tmp_path / "three.json").exists()
    assert json.loads((state / "max_cut.json").read_text())["round"] == 2


def test_bench_marco_writes_metrics_and_a_plot(tmp_path):
    pytest.importorskip("rdkit")
    out = tmp_path / "marco.json"
    result = invoke("bench", "marco", "--tasks", "PQS", "--settings", "seen", "--sources", "4", "--out", out)
    assert result.exit_code == 0, result.output
    report = json.loads(out.read_text())
    group = report["groups"]["PQS/seen"]
    for strategy in ("same_1", "same_5", "best_of_5"):
        assert 0.0 <= group[strategy]["sr_x_sim"] <= 1.0
        assert group[strategy]["sources"] == 4
    assert (tmp_path / "marco.png").read_bytes()[:4] == b"\x89PNG"
