"""Bulk Tanimoto: packed numpy reference and triton kernel (interpreter, child process) equal RDKit exactly."""

from __future__ import annotations

import importlib.util
import json
import os
import subprocess
import sys

import numpy as np
import pytest

pytest.importorskip("rdkit")

from rdkit import Chem, DataStructs

from synth.kernels.tanimoto import bulk_tanimoto, pack_fingerprints, tanimoto_numpy

SMILES = ["CCO", "c1ccccc1O", "CC(=O)Nc1ccc(O)cc1", "CN1CCC[C@H]1c1cccnc1", "O=C(O)c1ccccc1OC(C)=O", "C"]


def random_bitvects(count: int, *, n_bits: int = 2048, seed: int = 0) -> list:
    rng = np.random.default_rng(seed)
    vects = []
    for density in rng.uniform(0.0, 0.2, size=count):
        vect = DataStructs.ExplicitBitVect(n_bits)
        for bit in np.flatnonzero(rng.random(n_bits) < density):
            vect.SetBit(int(bit))
        vects.append(vect)
    vects.append(DataStructs.ExplicitBitVect(n_bits))  # empty
    return vects


def morgan(smiles):
    from synth.validators.marco.similarity import morgan_fingerprint

    return [morgan_fingerprint(Chem.MolFromSmiles(s)) for s in smiles]


def test_packing_puts_bit_i_in_word_i_over_32():
    vect = DataStructs.ExplicitBitVect(64)
    for bit in (0, 31, 32, 63):
        vect.SetBit(bit)
    assert pack_fingerprints([vect]).tolist() == [[1 + 2**31, 1 + 2**31]]
    with pytest.raises(ValueError, match="n_bits"):
        pack_fingerprints([vect], n_bits=48)


def test_numpy_reference_equals_rdkit_bulk_tanimoto_exactly():
    for fps in (morgan(SMILES), random_bitvects(200)):
        for query in (fps[0], fps[-1]):
            expected = np.asarray(DataStructs.BulkTanimotoSimilarity(query, fps))
            assert np.array_equal(bulk_tanimoto(query, fps, backend="numpy"), expected)
    with pytest.raises(ValueError, match="query"):
        tanimoto_numpy(np.zeros(4, dtype=np.int64), np.zeros((2, 3), dtype=np.int64))
    with pytest.raises(ValueError, match="backend"):
        bulk_tanimoto(morgan(["C"])[0], [], backend="gpu")  # type: ignore[arg-type]


CHILD = """
import json, sys
import numpy as np
from rdkit import DataStructs
sys.path.insert(0, {tests!r})
from test_tanimoto import morgan, random_bitvects, SMILES
from synth.kernels.tanimoto import bulk_tanimoto
from synth.kernels.tanimoto.reference import pack_fingerprints
from synth.kernels.tanimoto.triton_kernel import tanimoto_triton
results = {{}}
for name, fps in (("morgan", morgan(SMILES)), ("random", random_bitvects(150))):
    expected = np.asarray(DataStructs.BulkTanimotoSimilarity(fps[0], fps))
    results[name] = bool(np.array_equal(bulk_tanimoto(fps[0], fps, backend="triton"), expected))
fps = random_bitvects(70, seed=3)
packed = pack_fingerprints(fps)
small_blocks = tanimoto_triton(packed[-1], packed, block=32)  # three programs, the last one masked
results["empty_query_blocks"] = small_blocks.tolist() == [0.0] * len(fps)
expected = np.asarray(DataStructs.BulkTanimotoSimilarity(fps[5], fps))
results["masked_blocks"] = bool(np.array_equal(tanimoto_triton(packed[5], packed, block=32), expected))
print(json.dumps(results))
"""


@pytest.mark.skipif(
    importlib.util.find_spec("triton") is None or importlib.util.find_spec("torch") is None,
    reason="needs synth[kernels] and torch",
)
def test_triton_interpreter_equals_rdkit_exactly():
    code = CHILD.format(tests=os.path.dirname(__file__))
    env = {**os.environ, "TRITON_INTERPRET": "1"}
    done = subprocess.run([sys.executable, "-c", code], env=env, capture_output=True, text=True, timeout=300)
    assert done.returncode == 0, done.stderr[-2000:]
    assert json.loads(done.stdout.strip().splitlines()[-1]) == {
        "morgan": True,
        "random": True,
        "empty_query_blocks": True,
        "masked_blocks": True,
    }


def test_importing_the_package_imports_neither_torch_nor_triton():
    code = "import sys, synth.kernels.tanimoto; print('torch' in sys.modules, 'triton' in sys.modules)"
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True, timeout=120)
    assert done.stdout.split() == ["False", "False"]
