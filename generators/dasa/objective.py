"""Activation-gradient machinery: per-layer weight gradients from hooks, desired updates, and match spaces.

For a linear layer `h = W x` the weight gradient is `G = Σ_t δ_t x_tᵀ` with `δ_t = ∂L/∂h_t`. Hooks keep `x` and
`h`; `torch.autograd.grad(loss, h, create_graph=True)` gives δ as a differentiable function of the input embeddings,
so the alignment of `G(E)` with a target can be back-propagated to `E` (double backprop; eager attention only).

Match spaces (our reading of the DASA abstract, see the research note):
- `full`: cosine between the dense out×in matrices.
- `lora`: both sides multiplied by a fixed seeded LoRA `A` (r×in): `G Aᵀ` is the first LoRA-B gradient up to scale.
- `lowrank`: the target kept as a top-k SVD `U S Vᵀ`; `⟨G, D⟩ = Σ_t (Uᵀδ_t)ᵀ S (Vᵀx_t)` and `‖G‖²` from the Gram
  identity `Σ_{t,s}(x_t·x_s)(δ_t·δ_s)`, so `G` is never formed.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any, Literal

import torch
from torch import nn

MatchSpace = Literal["full", "lora", "lowrank"]


def target_modules(model: nn.Module, names: Sequence[str]) -> list[tuple[str, nn.Linear]]:
    """The linear modules whose last name part is in `names` (e.g. LoRA targets, or `lm_head`)."""
    found = [(n, m) for n, m in model.named_modules() if isinstance(m, nn.Linear) and n.split(".")[-1] in names]
    if not found:
        msg = f"no linear module named any of {list(names)} in the reference model"
        raise ValueError(msg)
    return found


class Capture:
    """Forward hooks keeping each target module's input `x` and output `h` of the last forward."""

    def __init__(self, modules: Sequence[tuple[str, nn.Linear]]) -> None:
        self.x: dict[str, torch.Tensor] = {}
        self.h: dict[str, torch.Tensor] = {}
        self.handles = [m.register_forward_hook(self._hook(n)) for n, m in modules]

    def _hook(self, name: str) -> Any:
        def keep(module: nn.Module, inputs: tuple[torch.Tensor, ...], output: torch.Tensor) -> None:
            self.x[name], self.h[name] = inputs[0], output

        return keep

    def remove(self) -> None:
        for handle in self.handles:
            handle.remove()


@dataclass
class LayerActivations:
    """Token activations `x` [T, in] and activation gradients `delta` [T, out] of one module (padding removed)."""

    x: torch.Tensor
    delta: torch.Tensor

    def gradient(self) -> torch.Tensor:
        """The weight gradient `Σ_t δ_t x_tᵀ` [out, in]."""
        return self.delta.T @ self.x


def layer_activations(
    model: nn.Module,
    modules: Sequence[tuple[str, nn.Linear]],
    embeds: torch.Tensor,
    labels: torch.Tensor,
    attention_mask: torch.Tensor,
    *,
    create_graph: bool = False,
) -> tuple[dict[str, LayerActivations], torch.Tensor]:
    """Per-module (x, δ) of the loss on one batch, and the loss. With `create_graph`, δ stays differentiable."""
    capture = Capture(modules)
    try:
        loss = model(inputs_embeds=embeds, attention_mask=attention_mask, labels=labels).loss
    finally:
        capture.remove()
    names = [n for n, _ in modules]
    deltas = torch.autograd.grad(loss, [capture.h[n] for n in names], create_graph=create_graph)
    keep = attention_mask.reshape(-1).bool()
    acts = {}
    for name, delta in zip(names, deltas, strict=True):
        x = capture.x[name]
        flat_x, flat_delta = x.reshape(-1, x.shape[-1]), delta.reshape(-1, delta.shape[-1])
        acts[name] = LayerActivations(x=flat_x[keep], delta=flat_delta[keep])
    return acts, loss


def gram_norm_sq(acts: LayerActivations) -> torch.Tensor:
    """`‖Σ_t δ_t x_tᵀ‖²_F = Σ_{t,s}(x_t·x_s)(δ_t·δ_s)` without forming the gradient (torch reference)."""
    return ((acts.x @ acts.x.T) * (acts.delta @ acts.delta.T)).sum()


@dataclass
class Target:
    """One layer's desired update `D = −G_src`, stored in the chosen match space."""

    space: MatchSpace
    dense: torch.Tensor | None = None  # full: D [out, in]; lora: D Aᵀ [out, r]
    lora_a: torch.Tensor | None = None  # lora: A [r, in]
    u: torch.Tensor | None = None  # lowrank: U [out, k]
    s: torch.Tensor | None = None  # lowrank: S [k]
    v: torch.Tensor | None = None  # lowrank: V [in, k]

    def cosine(self, acts: LayerActivations) -> torch.Tensor:
        """cos(−G_syn, D) in this match space (differentiable in the activations)."""
        if self.space == "lowrank":
            assert self.u is not None and self.s is not None and self.v is not None
            inner = ((acts.delta @ self.u) * self.s * (acts.x @ self.v)).sum()
            norm = gram_norm_sq(acts).clamp_min(1e-30).sqrt() * self.s.norm()
            return -inner / norm
        assert self.dense is not None
        grad = acts.gradient()
        if self.space == "lora":
            assert self.lora_a is not None
            grad = grad @ self.lora_a.T
        return torch.nn.functional.cosine_similarity(-grad.flatten(), self.dense.flatten(), dim=0)


def make_target(gradient: torch.Tensor, *, space: MatchSpace, rank: int, generator: torch.Generator) -> Target:
    """The desired update `−gradient` of one layer in match space `space` (`rank`: LoRA r or SVD k)."""
    desired = -gradient.detach()
    if space == "full":
        return Target(space, dense=desired)
    if space == "lora":
        a = torch.randn(rank, desired.shape[1], generator=generator) / desired.shape[1] ** 0.5
        return Target(space, dense=desired @ a.T, lora_a=a)
    u, s, vh = torch.linalg.svd(desired, full_matrices=False)
    k = min(rank, s.shape[0])
    return Target(space, u=u[:, :k].contiguous(), s=s[:k].contiguous(), v=vh[:k].T.contiguous())


def desired_update(
    model: nn.Module,
    modules: Sequence[tuple[str, nn.Linear]],
    embeds: torch.Tensor,
    labels: torch.Tensor,
    attention_mask: torch.Tensor,
    *,
    space: MatchSpace,
    rank: int,
    seed: int,
) -> dict[str, Target]:
    """Targets from the source rows' activation gradients (one step at θ₀, mean over the rows' tokens)."""
    acts, _ = layer_activations(model, modules, embeds.detach().requires_grad_(True), labels, attention_mask)
    generator = torch.Generator().manual_seed(seed)
    return {n: make_target(a.gradient(), space=space, rank=rank, generator=generator) for n, a in acts.items()}


def alignment(targets: dict[str, Target], acts: dict[str, LayerActivations]) -> torch.Tensor:
    """Mean over layers of cos(−G_syn, D)."""
    return torch.stack([t.cosine(acts[n]) for n, t in targets.items()]).mean()
