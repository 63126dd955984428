"""The Gram inner product in triton: one program per (T-block, S-block) tile computes both token Gram tiles with
`tl.dot`, multiplies them, and writes the tile's sum; the host adds the partial sums in float64 (deterministic,
no atomics). Imports torch and triton at the top: import it only when the kernel runs.
"""

from __future__ import annotations

import torch
import triton
import triton.language as tl

BLOCK = 16


@triton.jit
def _gram_inner_kernel(
    x_ptr,
    d_ptr,
    x2_ptr,
    d2_ptr,
    out_ptr,
    n_t,
    n_s,
    n_in,
    n_out,
    block: tl.constexpr,
    width_in: tl.constexpr,
    width_out: tl.constexpr,
):
    pid_t, pid_s = tl.program_id(0), tl.program_id(1)
    rows_t = pid_t * block + tl.arange(0, block)
    rows_s = pid_s * block + tl.arange(0, block)
    cols_in, cols_out = tl.arange(0, width_in), tl.arange(0, width_out)
    in_t, in_s = rows_t < n_t, rows_s < n_s
    keep_in, keep_out = cols_in[None, :] < n_in, cols_out[None, :] < n_out
    x = tl.load(x_ptr + rows_t[:, None] * n_in + cols_in[None, :], mask=in_t[:, None] & keep_in, other=0.0)
    x2 = tl.load(x2_ptr + rows_s[:, None] * n_in + cols_in[None, :], mask=in_s[:, None] & keep_in, other=0.0)
    d = tl.load(d_ptr + rows_t[:, None] * n_out + cols_out[None, :], mask=in_t[:, None] & keep_out, other=0.0)
    d2 = tl.load(d2_ptr + rows_s[:, None] * n_out + cols_out[None, :], mask=in_s[:, None] & keep_out, other=0.0)
    xx = tl.dot(x, tl.trans(x2), input_precision="ieee")
    dd = tl.dot(d, tl.trans(d2), input_precision="ieee")
    tl.store(out_ptr + pid_t * tl.num_programs(1) + pid_s, tl.sum(tl.sum(xx * dd, axis=1), axis=0))


def gram_inner_triton(x: torch.Tensor, delta: torch.Tensor, x2: torch.Tensor, delta2: torch.Tensor) -> torch.Tensor:
    """`Σ_{t,s}(x_t·x2_s)(δ_t·δ2_s)` (float32 inputs, float64 result) by the triton kernel."""
    if x.shape[1] != x2.shape[1] or delta.shape[1] != delta2.shape[1] or x.shape[0] != delta.shape[0]:
        shapes = [tuple(t.shape) for t in (x, delta, x2, delta2)]
        msg = f"shapes do not pair up: x, δ, x2, δ2 are {shapes}; need x [T, i], δ [T, o], x2 [S, i], δ2 [S, o]"
        raise ValueError(msg)
    tensors = [t.contiguous().float() for t in (x, delta, x2, delta2)]
    grid = (triton.cdiv(x.shape[0], BLOCK), triton.cdiv(x2.shape[0], BLOCK))
    partial = torch.empty(grid[0] * grid[1], dtype=torch.float32, device=x.device)
    _gram_inner_kernel[grid](
        *tensors,
        partial,
        x.shape[0],
        x2.shape[0],
        x.shape[1],
        delta.shape[1],
        block=BLOCK,
        width_in=max(16, triton.next_power_of_2(x.shape[1])),
        width_out=max(16, triton.next_power_of_2(delta.shape[1])),
    )
    return partial.double().sum()
