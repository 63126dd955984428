"""The MARCO evaluator: SMILES validity with reasons, RDKit properties, Tanimoto similarity, success, feedback.

RDKit (`synth[chem]`) is imported inside the functions that need it, so importing this package is cheap.
"""

from synth.validators.marco.answers import extract_smiles
from synth.validators.marco.evaluator import (
    PROTOCOLS,
    Evaluation,
    MoleculeEvaluator,
    PropertyChange,
    SourceProfile,
    SuccessProtocol,
)
from synth.validators.marco.feedback import feedback_message
from synth.validators.marco.molecules import INVALID_KINDS, FragmentPolicy, InvalidKind, ParsedMolecule, parse_smiles
from synth.validators.marco.properties import (
    SPECS,
    FunctionPredictor,
    PropertyPredictor,
    PropertySpec,
    UnavailablePredictor,
    default_predictors,
    penalized_logp,
    sa_score,
)
from synth.validators.marco.reward import RewardSettings, group_advantages, trajectory_return, turn_reward
from synth.validators.marco.similarity import bulk_tanimoto, mean_pairwise_distance, morgan_fingerprint, tanimoto
from synth.validators.marco.verifiers import MarcoEvaluatorVerifier, recheck_trajectory

__all__ = [
    "INVALID_KINDS",
    "PROTOCOLS",
    "SPECS",
    "Evaluation",
    "FragmentPolicy",
    "FunctionPredictor",
    "InvalidKind",
    "MarcoEvaluatorVerifier",
    "MoleculeEvaluator",
    "ParsedMolecule",
    "PropertyChange",
    "PropertyPredictor",
    "PropertySpec",
    "RewardSettings",
    "SourceProfile",
    "SuccessProtocol",
    "UnavailablePredictor",
    "bulk_tanimoto",
    "default_predictors",
    "extract_smiles",
    "feedback_message",
    "group_advantages",
    "mean_pairwise_distance",
    "morgan_fingerprint",
    "parse_smiles",
    "penalized_logp",
    "recheck_trajectory",
    "sa_score",
    "tanimoto",
    "trajectory_return",
    "turn_reward",
]
