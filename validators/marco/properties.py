"""Molecular properties as pluggable predictors: RDKit-computable ones, and placeholders for learned ones.

RDKit computes QED, penalised logP (the normalised GCPN/hgraph2graph form MuMOInstruct uses), the SA score (RDKit
Contrib `sascorer`, Ertl & Schuffenhauer 2009, with the fragment scores shipped in the rdkit wheel), Crippen logP,
TPSA and molecular weight. BBBP, HIA and mutagenicity (ADMET-AI Chemprop models) and DRD2 (the JT-VAE SVM pickle)
need learned weights that are not available offline: their default predictors report "unavailable" and return
no number. Pass your own `PropertyPredictor` under the same key to plug a real model in.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass
from functools import cache
from typing import Any, Literal, Protocol, runtime_checkable

Direction = Literal["increase", "decrease"]

# hgraph2graph / GCPN normalisation constants (ZINC250k statistics), as used by MuMOInstruct (GeLLMO).
LOGP_MEAN, LOGP_STD = 2.4570953396190123, 1.434324401111988
SA_MEAN, SA_STD = -3.0525811293166134, 0.8335207024513095
CYCLE_MEAN, CYCLE_STD = -0.0485696876403053, 0.2860212110245455


@dataclass(frozen=True, slots=True)
class PropertySpec:
    """What a property means for a task: its goal direction and the minimum change that counts as a real gain.

    `threshold` is GeLLMO's `PROPERTY_IMPV_THRESHOLDS` where it defines one; for SA, logP, TPSA and MW it is
    synth's choice (marked `threshold_source="synth"`).
    """

    key: str
    label: str
    unseen_label: str
    direction: Direction
    threshold: float
    threshold_source: Literal["gellmo", "synth"] = "gellmo"


SPECS: dict[str, PropertySpec] = {
    spec.key: spec
    for spec in (
        PropertySpec("bbbp", "BBB permeability", "Blood-brain barrier permeability (BBBP)", "increase", 0.2),
        PropertySpec("drd2", "DRD2 inhibition", "inhibition probability of Dopamine receptor D2", "increase", 0.2),
        PropertySpec("hia", "Intestinal adsorption", "human intestinal absorption (HIA)", "increase", 0.1),
        PropertySpec(
            "mutagenicity", "Mutagenicity", "probability to induce genetic alterations (mutagenicity)", "decrease", 0.1
        ),
        PropertySpec(
            "plogp",
            "Penalized octanol-water partition coefficient (penalized logP)",
            "Penalized logP which is logP penalized by synthetic accessibility score and number of large rings",
            "increase",
            1.0,
        ),
        PropertySpec("qed", "QED", "drug-likeness quantified by QED score", "increase", 0.1),
        PropertySpec(
            "sa",
            "synthetic accessibility (SA) score",
            "synthetic accessibility score estimating how hard the molecule is to make",
            "decrease",
            0.2,
            "synth",
        ),
        PropertySpec("logp", "logP", "octanol-water partition coefficient (Crippen logP)", "increase", 0.5, "synth"),
        PropertySpec("tpsa", "TPSA", "topological polar surface area", "decrease", 10.0, "synth"),
        PropertySpec("mw", "molecular weight", "molecular weight in daltons", "decrease", 20.0, "synth"),
    )
}


@runtime_checkable
class PropertyPredictor(Protocol):
    """Predicts one property of a sanitised RDKit molecule, or says why it cannot."""

    key: str
    available: bool
    unavailable_reason: str

    def predict(self, mol: Any) -> float | None:
        """The property value, or None when the molecule cannot be scored."""
        ...


@dataclass(frozen=True)
class FunctionPredictor:
    """A predictor backed by a plain function of the molecule (RDKit descriptors)."""

    key: str
    function: Callable[[Any], float | None]
    available: bool = True
    unavailable_reason: str = ""

    def predict(self, mol: Any) -> float | None:
        """Call the function; RDKit errors on exotic molecules give None, never an exception."""
        try:
            value = self.function(mol)
        except (RuntimeError, ValueError, ZeroDivisionError, TypeError):
            return None
        return None if value is None else float(value)


@dataclass(frozen=True)
class UnavailablePredictor:
    """A property whose model is not installed: it never returns a number."""

    key: str
    unavailable_reason: str
    available: bool = False

    def predict(self, mol: Any) -> float | None:
        """Always None: there is no model to ask."""
        return None


@cache
def _sascorer() -> Any:
    """RDKit Contrib's SA scorer (its fragment scores load on first use), or None if the wheel lacks Contrib."""
    try:
        from rdkit.Contrib.SA_Score import sascorer
    except ImportError:
        return None
    return sascorer


def sa_available() -> bool:
    """True when RDKit Contrib's SA_Score is importable (it ships in the PyPI rdkit wheel)."""
    return _sascorer() is not None


def sa_score(mol: Any) -> float | None:
    """Synthetic accessibility, 1 (easy) to 10 (hard), by RDKit Contrib `sascorer.calculateScore`."""
    scorer = _sascorer()
    return None if scorer is None else scorer.calculateScore(mol)


def cycle_basis_lengths(mol: Any) -> list[int]:
    """Lengths of the cycles of `networkx.cycle_basis(nx.Graph(GetAdjacencyMatrix(mol)))`, without networkx.

    A faithful port of networkx's Paton algorithm over the adjacency matrix's node and neighbour order (last node
    first, neighbours ascending), so the largest cycle matches the reference implementation exactly.
    """
    count = mol.GetNumAtoms()
    neighbours = [sorted(n.GetIdx() for n in mol.GetAtomWithIdx(i).GetNeighbors()) for i in range(count)]
    remaining = dict.fromkeys(range(count))
    lengths: list[int] = []
    while remaining:
        root = remaining.popitem()[0]
        stack, pred, used = [root], {root: root}, {root: set()}
        while stack:
            z = stack.pop()
            for nbr in neighbours[z]:
                if nbr not in used:
                    pred[nbr] = z
                    stack.append(nbr)
                    used[nbr] = {z}
                elif nbr not in used[z]:
                    length, p = 2, pred[z]
                    while p not in used[nbr]:
                        length += 1
                        p = pred[p]
                    lengths.append(length + 1)
                    used[nbr].add(z)
        for node in pred:
            remaining.pop(node, None)
    return lengths


def penalized_logp(mol: Any) -> float | None:
    """Normalised penalised logP: z-scored Crippen logP − SA − max(largest cycle − 6, 0) (ZINC250k statistics)."""
    from rdkit.Chem import Crippen

    sa = sa_score(mol)
    if sa is None:
        return None
    largest = max(cycle_basis_lengths(mol), default=0)
    cycle = -max(largest - 6, 0)
    return (Crippen.MolLogP(mol) - LOGP_MEAN) / LOGP_STD + (-sa - SA_MEAN) / SA_STD + (cycle - CYCLE_MEAN) / CYCLE_STD


def _qed(mol: Any) -> float:
    from rdkit.Chem import QED

    return QED.qed(mol)


def _logp(mol: Any) -> float:
    from rdkit.Chem import Crippen

    return Crippen.MolLogP(mol)


def _tpsa(mol: Any) -> float:
    from rdkit.Chem import rdMolDescriptors

    return rdMolDescriptors.CalcTPSA(mol)


def _mw(mol: Any) -> float:
    from rdkit.Chem import Descriptors

    return Descriptors.MolWt(mol)


ADMET_REASON = "needs the ADMET-AI (Chemprop) {model} model, not available offline"


def default_predictors() -> dict[str, PropertyPredictor]:
    """One predictor per known property key: RDKit where possible, `UnavailablePredictor` otherwise."""
    predictors: dict[str, PropertyPredictor] = {
        "qed": FunctionPredictor("qed", _qed),
        "logp": FunctionPredictor("logp", _logp),
        "tpsa": FunctionPredictor("tpsa", _tpsa),
        "mw": FunctionPredictor("mw", _mw),
        "bbbp": UnavailablePredictor("bbbp", ADMET_REASON.format(model="BBB_Martins")),
        "hia": UnavailablePredictor("hia", ADMET_REASON.format(model="HIA_Hou")),
        "mutagenicity": UnavailablePredictor("mutagenicity", ADMET_REASON.format(model="AMES")),
        "drd2": UnavailablePredictor("drd2", "needs the JT-VAE DRD2 SVM (clf_py36.pkl), not available offline"),
    }
    if sa_available():
        predictors["sa"] = FunctionPredictor("sa", sa_score)
        predictors["plogp"] = FunctionPredictor("plogp", penalized_logp)
    else:
        reason = "needs RDKit Contrib SA_Score, missing from this rdkit install"
        predictors["sa"] = UnavailablePredictor("sa", reason)
        predictors["plogp"] = UnavailablePredictor("plogp", reason)
    return predictors


def resolve_predictors(overrides: Mapping[str, PropertyPredictor] | None = None) -> dict[str, PropertyPredictor]:
    """The default predictors with `overrides` plugged in under their keys."""
    predictors = default_predictors()
    for key, predictor in (overrides or {}).items():
        if key not in SPECS:
            msg = f"unknown property {key!r} in `predictors`; choose from {sorted(SPECS)}"
            raise ValueError(msg)
        predictors[key] = predictor
    return predictors
