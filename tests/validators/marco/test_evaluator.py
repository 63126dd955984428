"""The evaluator: success under both protocols, unavailable properties, feedback, rewards, and a fuzz test."""

import pytest

pytest.importorskip("rdkit")

from hypothesis import given, settings
from hypothesis import strategies as st

from synth.validators.marco import (
    FunctionPredictor,
    MoleculeEvaluator,
    RewardSettings,
    feedback_message,
    group_advantages,
    trajectory_return,
    turn_reward,
)

SOURCE = "COc1ccccc1"


def test_gellmo_protocol_rounds_to_two_decimals_and_repo_uses_raw_values():
    # A plugged-in predictor whose values differ only in the third decimal: 0.501 (source) vs 0.503.
    tiny = FunctionPredictor("qed", lambda mol: 0.501 + 0.002 * (mol.GetNumAtoms() > 8))
    gellmo = MoleculeEvaluator(properties=("qed",), predictors={"qed": tiny})
    repo = MoleculeEvaluator(properties=("qed",), protocol="repo", predictors={"qed": tiny})
    candidate = "CCOc1ccccc1"  # 9 atoms vs 8 in the source: raw 0.503 vs 0.501, both 0.50 at 2 dp
    assert gellmo.evaluate(candidate, gellmo.profile(SOURCE)).success is False
    assert repo.evaluate(candidate, repo.profile(SOURCE)).success is True


def test_mutagenicity_counts_under_gellmo_but_not_repo():
    nitro = FunctionPredictor("mutagenicity", lambda mol: float(mol.HasSubstructMatch(_nitro())))
    predictors = {"mutagenicity": nitro}
    source, candidate = "O=[N+]([O-])c1ccccc1CO", "O=[N+]([O-])c1ccccc1CCO"  # qed changes, nitro stays
    gellmo = MoleculeEvaluator(properties=("mutagenicity", "logp"), predictors=predictors)
    repo = MoleculeEvaluator(properties=("mutagenicity", "logp"), protocol="repo", predictors=predictors)
    graded = gellmo.evaluate(candidate, gellmo.profile(source))
    assert graded.failing == ("mutagenicity",) and not graded.success
    assert repo.evaluate(candidate, repo.profile(source)).success


def _nitro():
    from rdkit import Chem

    return Chem.MolFromSmarts("[N+](=O)[O-]")


def test_unavailable_properties_are_listed_and_left_out_of_success():
    evaluator = MoleculeEvaluator(properties=("bbbp", "plogp", "qed"))
    graded = evaluator.evaluate("CCOc1ccccc1", evaluator.profile(SOURCE))
    assert graded.unavailable == ("bbbp",)
    bbbp = graded.changes[0]
    assert bbbp.value is None and not bbbp.scored and "unavailable" in bbbp.reason
    assert graded.success and graded.values()["bbbp"] is None
    only_learned = MoleculeEvaluator(properties=("bbbp", "drd2"))
    assert only_learned.evaluate("CCOc1ccccc1", only_learned.profile(SOURCE)).success is False


def test_threshold_flags_follow_gellmo_improvement_thresholds():
    evaluator = MoleculeEvaluator(properties=("plogp", "qed"))
    graded = evaluator.evaluate("CCCCCCOc1ccccc1", evaluator.profile(SOURCE))
    plogp = graded.changes[0]
    assert plogp.improved and plogp.gain >= 1.0 and plogp.meets_threshold


def test_identical_molecule_is_not_a_success_and_is_penalised_as_a_repeat():
    evaluator = MoleculeEvaluator(properties=("qed",))
    source = evaluator.profile(SOURCE)
    graded = evaluator.evaluate("c1ccccc1OC", source)
    assert graded.similarity == 1.0 and not graded.success
    rewards = RewardSettings()
    fresh = turn_reward(graded, seen=(), settings=rewards)
    assert turn_reward(graded, seen=(source.canonical,), settings=rewards) == fresh - rewards.repeat_penalty


def test_feedback_names_the_failing_property_and_the_similarity_floor():
    evaluator = MoleculeEvaluator(properties=("plogp", "qed"))
    graded = evaluator.evaluate("Clc1ccccc1", evaluator.profile(SOURCE))
    text = feedback_message(graded, similarity_floor=0.4)
    assert "QED: 0.53 in the source, 0.48 now: not improved (it must increase)" in text
    assert "Still to do: increase QED" in text and "below 0.40" in text
    assert text.endswith("</SMILES> tags.")


def test_group_advantages_are_standardised_returns():
    mean, std, advantages = group_advantages([1.0, 2.0, 3.0, 2.0])
    assert mean == 2.0 and std == pytest.approx(0.5**0.5)
    assert sum(advantages) == pytest.approx(0.0) and advantages[2] == pytest.approx(1.0 / (0.5**0.5 + 1e-6))
    assert group_advantages([1.5, 1.5])[2] == [0.0, 0.0]
    assert trajectory_return([0.5, -1.0, 2.0]) == 1.5
    with pytest.raises(ValueError, match="returns"):
        group_advantages([])


EVALUATOR = MoleculeEvaluator(properties=("bbbp", "plogp", "qed", "sa"))
PROFILE = EVALUATOR.profile("CC(=O)Nc1ccc(O)cc1")


@settings(max_examples=200, deadline=None)
@given(st.one_of(st.text(max_size=50), st.text(alphabet="CNOSFclnos()[]=#@+-1234%/\\.*H", max_size=40)))
def test_fuzz_the_evaluator_never_crashes_and_always_gives_a_reason(text):
    graded = EVALUATOR.evaluate(text, PROFILE)
    reward = turn_reward(graded, seen=(), settings=RewardSettings())
    message = feedback_message(graded)
    if graded.valid:
        assert graded.invalid_reason is None and 0.0 <= graded.similarity <= 1.0
        assert len(graded.changes) == 4 and reward >= -1.0
    else:
        assert graded.invalid_kind and graded.invalid_reason and reward == -1.0
        assert graded.invalid_reason in message
