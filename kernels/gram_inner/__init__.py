"""The activation/gradient Gram inner product ⟨G, G'⟩ = Σ_{t,s}(x_t·x'_s)(δ_t·δ'_s) of two weight gradients
`G = Σ_t δ_t x_tᵀ` held as token activations and activation gradients: a triton kernel beside its torch reference.

Importing this package needs neither torch nor triton; `gram_inner_triton` imports them (set TRITON_INTERPRET=1
before triton is first imported to run it on CPU).
"""

from synth.kernels.gram_inner.reference import gram_inner_reference

__all__ = ["gram_inner_reference"]
