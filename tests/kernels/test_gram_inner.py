"""The Gram inner product: torch reference equals ⟨δᵀx, δ2ᵀx2⟩_F; the triton kernel (interpreter, child process)
equals the reference on ragged shapes."""

from __future__ import annotations

import importlib.util
import json
import os
import subprocess
import sys

import pytest

from synth.kernels.gram_inner import gram_inner_reference

torch = pytest.importorskip("torch")


def test_reference_equals_the_frobenius_inner_product_of_the_gradients():
    g = torch.Generator().manual_seed(0)
    x, d, x2, d2 = (torch.randn(s, generator=g, dtype=torch.float64) for s in [(9, 5), (9, 7), (4, 5), (4, 7)])
    torch.testing.assert_close(gram_inner_reference(x, d, x2, d2), ((d.T @ x) * (d2.T @ x2)).sum())


@pytest.mark.skipif(importlib.util.find_spec("triton") is None, reason="triton not installed")
def test_triton_kernel_equals_the_reference_in_the_interpreter():
    code = """
import json, torch
from synth.kernels.gram_inner import gram_inner_reference
from synth.kernels.gram_inner.triton_kernel import gram_inner_triton
g = torch.Generator().manual_seed(1)
out = []
for t, s, i, o in [(37, 21, 24, 40), (5, 3, 64, 16), (16, 16, 16, 16)]:
    x, d, x2, d2 = (torch.randn(shape, generator=g) for shape in [(t, i), (t, o), (s, i), (s, o)])
    ref = gram_inner_reference(*(v.double() for v in (x, d, x2, d2)))
    out.append([float(gram_inner_triton(x, d, x2, d2)), float(ref)])
print(json.dumps(out))
"""
    env = {**os.environ, "TRITON_INTERPRET": "1"}
    done = subprocess.run([sys.executable, "-c", code], env=env, capture_output=True, text=True, timeout=300)
    assert done.returncode == 0, done.stderr
    for got, want in json.loads(done.stdout):
        assert got == pytest.approx(want, rel=1e-5, abs=1e-4)
