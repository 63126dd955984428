"""RDKit properties against MuMOInstruct's stored values, the networkx-free cycle basis, unavailable predictors."""

import csv
from pathlib import Path

import pytest

pytest.importorskip("rdkit")

from rdkit import Chem

from synth.generators.marco.sources import MUMO_FILE
from synth.validators.marco import SPECS, default_predictors, penalized_logp, sa_score
from synth.validators.marco.properties import cycle_basis_lengths


def _rows(task, limit):
    with MUMO_FILE.open() as handle:
        return [row for row in csv.DictReader(handle) if row["task"] == task][:limit]


def test_qed_and_plogp_match_the_stored_two_decimal_values():
    predictors = default_predictors()
    rows = _rows("BPQ", 120)
    qed_hits = plogp_hits = 0
    for row in rows:
        mol = Chem.MolFromSmiles(row["source_smiles"])
        qed_hits += round(predictors["qed"].predict(mol), 2) == float(row["qed"])
        plogp_hits += round(predictors["plogp"].predict(mol), 2) == float(row["plogp"])
    # Research note: QED 100 % and pLogP 99.8 % at 2 dp on these sources (SA drift between RDKit versions).
    assert qed_hits == len(rows)
    assert plogp_hits >= len(rows) - 2


def test_cycle_basis_port_matches_networkx():
    nx = pytest.importorskip("networkx")
    from rdkit.Chem import rdmolops

    for row in _rows("BDP", 150):
        mol = Chem.MolFromSmiles(row["source_smiles"])
        reference = [len(c) for c in nx.cycle_basis(nx.Graph(rdmolops.GetAdjacencyMatrix(mol)))]
        assert cycle_basis_lengths(mol) == reference


def test_macrocycle_is_penalised_in_whole_ring_steps():
    ring8 = Chem.MolFromSmiles("C1CCCCCCC1")
    ring6 = Chem.MolFromSmiles("C1CCCCC1")
    assert max(cycle_basis_lengths(ring8)) == 8 and max(cycle_basis_lengths(ring6)) == 6
    assert penalized_logp(ring8) is not None and penalized_logp(ring8) < penalized_logp(ring6)


def test_sa_score_matches_rdkit_contrib_reference_values():
    import os

    from rdkit import RDConfig

    path = os.path.join(RDConfig.RDContribDir, "SA_Score", "data", "zim.100.txt")
    if not os.path.exists(path):
        pytest.skip("rdkit wheel without the SA_Score reference file")
    lines = [line.split() for line in Path(path).read_text().splitlines()[1:21] if line.strip()]
    for smiles, _name, expected in lines:
        assert sa_score(Chem.MolFromSmiles(smiles)) == pytest.approx(float(expected), abs=5e-3)


def test_learned_properties_report_unavailable_without_a_number():
    predictors = default_predictors()
    mol = Chem.MolFromSmiles("CCO")
    for key in ("bbbp", "drd2", "hia", "mutagenicity"):
        assert predictors[key].available is False
        assert predictors[key].predict(mol) is None
        assert "offline" in predictors[key].unavailable_reason
    assert SPECS["mutagenicity"].direction == "decrease"
