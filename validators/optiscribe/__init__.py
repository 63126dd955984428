"""Verifiers of OptiScribe MILP instances: SCIP hardness, an OR-Tools cross-check, instruction following, reward.

The instruction contract (`grammar`: instruction text to `InstanceRequest`; `spec`: the families and
`InstanceSpec`) lives here so the instruction verifier re-reads what each row's instruction asked.
"""

from synth.validators.optiscribe.crosscheck import CrossCheck, CrossCheckSettings, crosscheck_model_text
from synth.validators.optiscribe.reading import ModelTextError, read_model_text
from synth.validators.optiscribe.reward import RewardSettings, compute_reward, is_trivial
from synth.validators.optiscribe.scip import ScipSettings, ScipStats, solve_model_text
from synth.validators.optiscribe.verifiers import InstructionVerifier, OrtoolsVerifier, RewardVerifier, ScipVerifier

__all__ = [
    "CrossCheck",
    "CrossCheckSettings",
    "InstructionVerifier",
    "ModelTextError",
    "OrtoolsVerifier",
    "RewardSettings",
    "RewardVerifier",
    "ScipSettings",
    "ScipStats",
    "ScipVerifier",
    "compute_reward",
    "crosscheck_model_text",
    "is_trivial",
    "read_model_text",
    "solve_model_text",
]
