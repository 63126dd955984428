"""The self-play loop on real SCIP solves: curriculum, saved state and resume, the default challenger."""

import json
import re
from dataclasses import replace

import pytest

pytest.importorskip("pyscipopt")

from synth.generators.optiscribe.build import build_model_text
from synth.generators.optiscribe.selfplay import SelfPlaySettings, run_selfplay
from synth.validators.optiscribe.grammar import parse_instruction
from synth.validators.optiscribe.scip import ScipSettings

TINY = "a max-cut problem with 12 nodes, density 0.4, hard"
TINY_NEXT = "a max-cut problem with 13 nodes, density 0.4, hard"

SETTINGS = SelfPlaySettings(rounds=3, candidates=3, scip=ScipSettings(total_nodes=500))


def test_resuming_from_the_saved_state_matches_an_uninterrupted_run(tmp_path):
    straight, final = run_selfplay([TINY], settings=SETTINGS, seed=5)
    path = tmp_path / "state.json"
    first, _ = run_selfplay(
        [TINY], settings=SelfPlaySettings(rounds=2, candidates=3, scip=SETTINGS.scip), seed=5, state_path=path
    )
    assert json.loads(path.read_text())["round"] == 2
    rest, resumed = run_selfplay([TINY], settings=SETTINGS, seed=5, state_path=path)
    assert [c.round for c in rest] == [2, 2, 2]
    assert [c.model_text for c in first + rest] == [c.model_text for c in straight]
    assert resumed.to_json() == final.to_json() == path.read_text()
    assert [h["round"] for h in final.history] == [0, 1, 2]


def test_curriculum_advances_only_when_rounds_are_good_enough():
    easy = SelfPlaySettings(rounds=2, candidates=2, advance_reward=0.0, scip=SETTINGS.scip)
    candidates, state = run_selfplay([TINY, TINY_NEXT], settings=easy, seed=1)
    assert [c.level for c in candidates] == [0, 0, 1, 1] and state.level == 1
    assert "13 nodes" in candidates[-1].instruction and candidates[-1].spec.sizes["nodes"] == 13
    strict = SelfPlaySettings(rounds=2, candidates=2, advance_reward=2.0, scip=SETTINGS.scip)
    _, stuck = run_selfplay([TINY, TINY_NEXT], settings=strict, seed=1)
    assert stuck.level == 0


def test_the_default_challenger_answers_with_the_standard_parameterisation():
    settings = SelfPlaySettings(rounds=1, candidates=2, challenger="default", scip=SETTINGS.scip)
    candidates, state = run_selfplay([TINY], settings=settings, seed=0)
    assert all(c.spec == parse_instruction(TINY).make_spec() for c in candidates)
    assert candidates[0].model_text != candidates[1].model_text  # same spec, different instance seeds
    assert state.policy.means == {}
    assert all(c.reward > 0 and c.stats.feasible for c in candidates)


@pytest.mark.parametrize("learner", ["bandit", "gp"])
def test_a_learner_plays_and_resumes_from_its_saved_state(tmp_path, learner):
    options = {"candidates": 3, "challenger": learner, "gp_initial_samples": 3, "scip": SETTINGS.scip}
    straight, final = run_selfplay([TINY], settings=SelfPlaySettings(rounds=3, **options), seed=2)
    path = tmp_path / f"{learner}.json"
    first, _ = run_selfplay([TINY], settings=SelfPlaySettings(rounds=1, **options), seed=2, state_path=path)
    assert json.loads(path.read_text())["policy"]["kind"] == learner
    rest, resumed = run_selfplay([TINY], settings=SelfPlaySettings(rounds=3, **options), seed=2, state_path=path)
    assert [c.model_text for c in first + rest] == [c.model_text for c in straight]
    assert resumed.to_json() == final.to_json()
    if learner == "bandit":
        assert sum(final.policy.counts["density"].values()) == 9
    else:  # rounds 1 and 2 were proposed by the fitted surrogate; every reward was observed
        assert [obs["reward"] for obs in final.policy.observations] == [c.reward for c in straight]


def test_a_spec_the_challenger_cannot_build_is_a_rejected_row_with_the_spec_code():
    from synth.core.steps import ShardContext
    from synth.generators.optiscribe.generator import OptiScribeGenerator

    settings = SelfPlaySettings(rounds=1, candidates=12, initial_std=1.0, scip=ScipSettings(total_nodes=50))
    generator = OptiScribeGenerator(
        name="o",
        curriculum=("an independent set problem with between 4 and 6 nodes, barabasi-albert",),
        settings=settings,
    )
    (batch,) = generator.generate(ShardContext(seed=0, shard_index=0, num_shards=1, config_hash="x"))
    assert batch.rejections and len(batch.rows) + len(batch.rejections) == 12
    assert {r.reason for r in batch.rejections} == {"spec:infeasible_combination"}
    for rejection in batch.rejections:
        assert re.fullmatch(
            r"independent_set: knob `affinity` \(\d+\) must be below `nodes` \([456]\)", rejection.detail
        )
        assert rejection.values["instruction"] == generator.curriculum[0]


def test_each_spec_is_solved_under_several_instance_seeds_and_scored_by_their_mean():
    from synth.generators.optiscribe.selfplay import spec_scores

    settings = SelfPlaySettings(rounds=2, candidates=2, instance_seeds=3, scip=SETTINGS.scip)
    candidates, state = run_selfplay([TINY], settings=settings, seed=4)
    assert len(candidates) == 12 and [h["round"] for h in state.history] == [0, 1]
    for start in range(0, 12, 3):
        group = candidates[start : start + 3]
        assert all(c.spec == group[0].spec and c.round == group[0].round for c in group)
        assert len({c.seed for c in group}) == 3 and len({c.model_text for c in group}) == 3
    single, _ = run_selfplay([TINY], settings=SelfPlaySettings(rounds=1, candidates=2, scip=SETTINGS.scip), seed=4)
    assert (single[0].spec, single[0].seed) == (candidates[0].spec, candidates[0].seed)  # one seed: draws unchanged
    assert spec_scores([0.1, 0.2, 0.6, 1.0, 1.0, 0.4], [3.0, 1.0, 2.0, 0.0, 0.0, 6.0], 3) == (
        pytest.approx([0.3, 0.8]),
        pytest.approx([2.0, 2.0]),
    )


def test_a_config_sets_the_instance_seeds_per_spec():
    from synth.pipelines.optiscribe import OptiScribeConfig, build_generator

    assert build_generator(OptiScribeConfig(curriculum=[TINY], instance_seeds=3)).settings.instance_seeds == 3
    assert build_generator(OptiScribeConfig(curriculum=[TINY])).settings.instance_seeds == 1
    with pytest.raises(ValueError, match="instance_seeds > 1 needs a spec challenger"):
        OptiScribeConfig(curriculum=[TINY], instance_seeds=2, challenger="llm")


def test_the_config_offers_exactly_the_archive_parent_models_and_passes_the_choice_on():
    from typing import get_args

    from synth.generators.optiscribe.archive import PARENT_MODELS
    from synth.pipelines.optiscribe import OptiScribeConfig, build_generator

    assert get_args(OptiScribeConfig.model_fields["mutation_parents"].annotation) == PARENT_MODELS
    for model in PARENT_MODELS:
        config = OptiScribeConfig(curriculum=[EASY], mutation_rounds=1, mutation_parents=model)
        assert build_generator(config).settings.mutation_parents == model


EASY = "a max-cut problem with 12 nodes, density 0.4, easy"


@pytest.mark.parametrize("parents", ["beta", "lognormal"])
def test_mutation_rounds_propose_children_of_in_band_instances_and_resume(tmp_path, parents):
    settings = SelfPlaySettings(
        rounds=1, candidates=3, mutation_rounds=2, mutation_sigma=0.05, mutation_parents=parents, scip=SETTINGS.scip
    )
    straight, final = run_selfplay([EASY], settings=settings, seed=4)
    knob, children = straight[:3], straight[3:]
    assert len(children) == 6 and not any(c.mutations for c in knob)
    assert all(c.mutations and c.mutations[-1].sigma == 0.05 for c in children)
    assert all(c.model_text == build_model_text(c.spec, seed=c.seed, mutations=c.mutations) for c in children)
    assert all(json.loads(c.policy)["kind"] == "mutation" for c in children)
    band = parse_instruction(EASY).effort()
    roots = {(c.spec.to_json(), c.seed) for c in knob if band.contains(c.stats.nodes)}
    assert roots and {(c.spec.to_json(), c.seed) for c in children} <= roots  # lineages start in the band
    entries = final.archive.entries
    assert final.archive.parent_model == parents
    assert sum(e.children for e in entries) == 6 == sum(len(e.child_nodes) for e in entries)
    assert len(entries) == len(roots) + sum(band.contains(c.stats.nodes) for c in children)
    path = tmp_path / "state.json"
    first, _ = run_selfplay([EASY], settings=replace(settings, mutation_rounds=1), seed=4, state_path=path)
    assert json.loads(path.read_text())["archive"]["entries"]
    rest, resumed = run_selfplay([EASY], settings=settings, seed=4, state_path=path)
    assert [c.model_text for c in first + rest] == [c.model_text for c in straight]
    assert resumed.to_json() == final.to_json()


def test_a_mutation_round_plays_the_challenger_while_its_archive_is_empty():
    unreachable = "a max-cut problem with 12 nodes, density 0.4, needing about 400 B&B nodes"
    settings = SelfPlaySettings(rounds=1, candidates=2, mutation_rounds=1, scip=ScipSettings(total_nodes=3000))
    candidates, state = run_selfplay([unreachable], settings=settings, seed=0)
    assert len(candidates) == 4 and not any(c.mutations for c in candidates)
    assert state.archive is not None and not state.archive.entries
