"""Torch reference of the Gram inner product (imports torch inside the function)."""

from __future__ import annotations

from typing import Any


def gram_inner_reference(x: Any, delta: Any, x2: Any, delta2: Any) -> Any:
    """`Σ_{t,s}(x_t·x2_s)(δ_t·δ2_s)` for x [T, i], δ [T, o], x2 [S, i], δ2 [S, o]; equals ⟨δᵀx, δ2ᵀx2⟩_F."""
    return ((x @ x2.T) * (delta @ delta2.T)).sum()
