"""The `llm` challenger in self-play and `synth run`: specs and LP text from a backend, SCIP-solved, refusals."""

import json

import pyarrow.parquet as pq
import pytest
import yaml
from typer.testing import CliRunner

pytest.importorskip("pyscipopt")
pytest.importorskip("ortools")

from synth.cli.app import app
from synth.core.llm import ResponseCache, ScriptedBackend
from synth.generators.optiscribe.build import build_model_text
from synth.generators.optiscribe.llm import ChallengerLLMSettings, scripted_challenger_backend
from synth.generators.optiscribe.selfplay import SelfPlaySettings, run_selfplay
from synth.validators.optiscribe.grammar import parse_instruction
from synth.validators.optiscribe.scip import ScipSettings
from synth.validators.optiscribe.spec import InstanceSpec

INSTRUCTION = "a max-cut problem with 12 nodes, density 0.4"
SCRIPTED = '{"backend":"scripted","max_tokens":256,"model":"scripted","temperature":1.0}'
CODES = {"malformed_spec", "malformed_lp", "ignores_instruction", "challenger_refused"}


def _run(root, name, generator, *, exit_code=0):
    config = {"domain": "optiscribe", "seed": 4, "shards": 1, "generator": generator}
    path = root / f"{name}.yaml"
    path.write_text(yaml.safe_dump(config))
    out = root / name
    result = CliRunner().invoke(app, ["run", str(path), "--out", str(out), "--no-progress"])
    assert result.exit_code == exit_code, result.output
    return out


def _llm_config(tmp_path, **llm):
    return {
        "curriculum": [INSTRUCTION],
        "challenger": "llm",
        "llm": llm,
        "rounds": 2,
        "candidates": 3,
        "scip": {"total_nodes": 1000},
    }


def test_synth_run_with_the_scripted_llm_challenger_writes_its_specs_solved_by_scip_and_reruns_identically(tmp_path):
    generator = _llm_config(tmp_path, backend="scripted", cache=str(tmp_path / "cache.sqlite"))
    first = _run(tmp_path, "first", generator)
    kept = pq.read_table(first / "data").to_pylist()
    rejected = pq.read_table(first / "rejected").to_pylist()
    assert kept and len(kept) + len(rejected) == 6
    backend = scripted_challenger_backend()
    for row in kept:
        assert row["challenger"] == "llm" and row["policy"] == SCRIPTED
        assert row["provenance"]["generator"] == "optiscribe-llm"
        [request] = ChallengerLLMSettings().requests(INSTRUCTION, [row["instance_seed"]])
        [answer] = backend.generate([request])
        assert row["spec"] == answer.texts[0]  # the backend's answer for this proposal's seed
        spec = InstanceSpec.from_json(row["spec"])
        assert row["model_text"] == build_model_text(spec, seed=row["instance_seed"])
        assert row["scip_nodes"] == row["solve_nodes"] and row["scip_feasible"] == 1.0
    assert all(r["filter_reason"].startswith(("reward:trivial", "scip:")) for r in rejected)
    assert len(ResponseCache(tmp_path / "cache.sqlite")) == 6  # one distinct request per proposal
    again = _run(tmp_path, "again", generator)  # answered from the response cache the first run filled
    for part in ("data", "rejected"):
        ours, theirs = sorted((first / part).glob("*.parquet")), sorted((again / part).glob("*.parquet"))
        assert [p.name for p in ours] == [p.name for p in theirs]
        assert all(a.read_bytes() == b.read_bytes() for a, b in zip(ours, theirs, strict=True))


def _lp_writer(nodes: int):
    """A challenger that answers with LP text: the standard max-cut of `nodes` nodes, built with the request's seed."""

    def policy(request, rng):
        spec = parse_instruction(f"a max-cut problem with {nodes} nodes, density 0.4").make_spec()
        return build_model_text(spec, seed=request.sampling.seed)

    return ScriptedBackend(policy, name=f"lp-writer-{nodes}")


def test_lp_answers_are_solved_as_written_and_an_lp_of_another_size_is_refused():
    settings = SelfPlaySettings(
        rounds=1,
        candidates=2,
        challenger="llm",
        llm=ChallengerLLMSettings(max_tokens=4096),  # LP text is long; the scripted backend cuts it at max_tokens words
        scip=ScipSettings(total_nodes=500),
    )
    solved, state = run_selfplay([INSTRUCTION], settings=settings, seed=3, backend=_lp_writer(12))
    for candidate in solved:
        assert candidate.error is None and candidate.spec is None and candidate.stats.feasible
        assert candidate.model_text == build_model_text(parse_instruction(INSTRUCTION).make_spec(), seed=candidate.seed)
    assert state.policy.means == {}  # the llm challenger's model is not updated by self-play
    refused, _ = run_selfplay([INSTRUCTION], settings=settings, seed=3, backend=_lp_writer(20))
    assert [(c.error_code, c.stats) for c in refused] == [("ignores_instruction", None)] * 2
    assert all(c.error.startswith("LP ignores the instruction: ") for c in refused)


def test_synth_run_with_a_tiny_untrained_transformers_model_rejects_its_answers_with_stable_codes(tmp_path):
    pytest.importorskip("transformers")
    from tiny_models import save_tiny_chat_model

    model = save_tiny_chat_model(tmp_path / "tiny")
    generator = _llm_config(tmp_path, backend="transformers", model=str(model), max_tokens=16, batch_size=4)
    generator["rounds"] = 1
    out = _run(tmp_path, "tiny-run", generator, exit_code=1)  # garbage only: "no rows kept", one line
    again = _run(tmp_path, "tiny-again", generator, exit_code=1)
    [ours], [theirs] = (sorted((folder / "rejected").glob("*.parquet")) for folder in (out, again))
    assert ours.read_bytes() == theirs.read_bytes()  # sampling seeded by the requests: same answers, no cache
    rejected = pq.read_table(out / "rejected").to_pylist()
    assert len(rejected) == 3
    for row in rejected:
        assert row["filter_reason"].removeprefix("spec:") in CODES, row["filter_reason"]
        assert row["filter_detail"] and row["challenger"] == "llm" and json.loads(row["policy"])["model"] == str(model)
    assert len({row["instance_seed"] for row in rejected}) == 3
