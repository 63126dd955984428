"""GRADMM (Nguyen et al., ICML 2025, arXiv 2502.17607), following the public code described in the research note.

Per group of source rows: the target is the mean gradient of the source loss on the LM head (`LAST_LAYERS =
["lm_head"]`); the synthetic rows are continuous embeddings x, projected tokens z and a dual variable λ:

1. z-step: for each free position, the top-k candidate tokens by cosine to `x + λ/ρ`; then, left to right, the
   candidate with the highest next-token probability under the reference LM given the projected prefix (the code's
   one `generate(max_new_tokens=1)` call per position; here one forward per position for all rows at once).
2. x-step: `inner_steps` Adam steps (lr 0.008, StepLR γ 0.9, grad-clip 1.0) on
   `1 − cos(G_syn(x), G_src) + ρ/2 ‖x − Emb(z) + λ/ρ‖²` over the free positions (double backprop).
3. dual update: `λ ← λ + ρ (x − Emb(z))`.

Which positions are free (`free`). The GRADMM code optimises only the review text: the prompt template (" It was ")
is re-clamped every step and the label word is a target, never an input. Here a row is `bos prompt sep response
eos` and its response tokens are both the teacher-forced inputs and the labels, so the faithful reading (`prompt`,
the default) frees only the prompt's content and clamps bos, the separator and the response to the source row:
the labels the downstream LoRA sees then always follow the inputs it reads. `all` is the earlier reading, which
projected every position, rewrote 96% of the response inputs while the source labels stayed (measured: shift task,
k 50) and taught nothing (exact match 0.00, like random embeddings); it is kept only for that regression.

Candidates (`vocabulary`). The code's k = 50 of phi-1.5's 51,200 tokens is the 0.1% nearest; of this byte model's
259 ids, 50 is a fifth of the vocabulary, most of it bytes the model never read (untrained embeddings). `source`
(the default) draws candidates from the tokens of the source rows only (the task's readable alphabet); `all` draws
from every id. k defaults to 1, the best of a sweep on the shift task (m 32, seed 0, exact match after LoRA: k 1
0.64, k 2 0.00, k 50 0.00; the start rows 0.90): the reference LM, pre-trained on random letter strings, has no
preference that keeps a prompt's meaning, so every LM-chosen swap breaks the prompt → response rule and k = 1
(nearest token, no LM call) is the baseline's best honest configuration.

The output is the projected token ids (readable text); `alignment` is the cosine reached by those tokens.
Synthetic rows start from source rows (the code's `real_first`).
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Literal

import torch

from synth.generators.dasa.base_lm import Reference, seeded
from synth.generators.dasa.objective import alignment, layer_activations
from synth.generators.dasa.synthesize import (
    SyntheticRows,
    encode_source,
    frozen_reference,
    plan_groups,
    snapshot_recorder,
)

Pair = tuple[str, str]


@dataclass(frozen=True, kw_only=True)
class GradmmSettings:
    """ADMM settings (the GRADMM code's ρ 0.7, lr 0.008, 10 inner steps; k scaled to the task vocabulary)."""

    steps: int = 10
    inner_steps: int = 10
    lr: float = 8e-3
    rho: float = 0.7
    top_k: int = 1
    groups: int = 4
    targets: tuple[str, ...] = ("lm_head",)
    free: Literal["prompt", "all"] = "prompt"
    vocabulary: Literal["source", "all"] = "source"


def free_positions(labels: torch.Tensor, mask: torch.Tensor, *, free: str = "prompt") -> torch.Tensor:
    """The positions GRADMM optimises and projects: the prompt's content (not bos, not the separator before the
    response), or every real position for `free="all"`."""
    real = mask.bool()
    if free == "all":
        return real
    prompt = real & (labels == -100)
    prompt[:, 0] = False
    separator = prompt & torch.nn.functional.pad(labels[:, 1:] != -100, (0, 1), value=False)
    return prompt & ~separator


def project(  # type: ignore[no-untyped-def]
    model: torch.nn.Module,
    point: torch.Tensor,
    mask: torch.Tensor,
    weight: torch.Tensor,
    *,
    top_k: int,
    free: torch.Tensor | None = None,
    clamp: torch.Tensor | None = None,
    vocabulary: torch.Tensor | None = None,
):
    """Token ids for `point` [B, L, d]: top-k by cosine among `vocabulary` ids (default all), then left to right
    the LM's most likely candidate. Positions outside `free` take their `clamp` ids."""
    unit = torch.nn.functional.normalize
    pool = torch.arange(weight.shape[0]) if vocabulary is None else vocabulary
    ranked = (unit(point, dim=-1) @ unit(weight[pool], dim=-1).T).topk(min(top_k, len(pool)), dim=-1).indices
    candidates = pool[ranked]
    ids = candidates[:, :, 0].clone()
    if free is None:
        free = mask.bool()
    if clamp is not None:
        ids = torch.where(free, ids, clamp)
    if candidates.shape[-1] == 1:
        return ids  # one candidate: the LM's choice is that candidate
    with torch.no_grad():
        for t in range(1, point.shape[1]):
            if not bool(free[:, t].any()):
                continue
            logits = model(input_ids=ids[:, :t], attention_mask=mask[:, :t]).logits[:, -1]
            best = logits.gather(1, candidates[:, t]).argmax(-1)
            ids[:, t] = torch.where(free[:, t], candidates[:, t].gather(1, best[:, None]).squeeze(1), ids[:, t])
    return ids


def admm_group(  # type: ignore[no-untyped-def]
    model,
    modules,
    targets,
    source_ids: torch.Tensor,
    labels,
    mask,
    *,
    weight: torch.Tensor,
    settings: GradmmSettings,
    vocabulary: torch.Tensor | None,
    on_step: Callable[[int, torch.Tensor], None] | None = None,
) -> tuple[torch.Tensor, float, float, list[float]]:
    """The ADMM loop of one group; returns the projected ids, the alignment at the start and of the ids, losses.

    `on_step(k, ids)` sees the projected ids after k outer steps (the z-step that opens step k + 1)."""

    def cosine(embeds: torch.Tensor) -> float:
        acts, _ = layer_activations(model, modules, embeds.detach().requires_grad_(True), labels, mask)
        return float(alignment(targets, acts).detach())

    init = weight[source_ids].clone()
    free = free_positions(labels, mask, free=settings.free)
    keep = free[..., None].to(init.dtype)
    start = cosine(init)
    x = init.clone().requires_grad_(True)
    dual = torch.zeros_like(init)
    losses: list[float] = []
    optimiser = torch.optim.Adam([x], lr=settings.lr)
    schedule = torch.optim.lr_scheduler.StepLR(optimiser, step_size=1, gamma=0.9)
    ids = source_ids.clone()

    def z_step() -> torch.Tensor:
        point = x.detach() + dual / settings.rho
        return project(
            model, point, mask, weight, top_k=settings.top_k, free=free, clamp=source_ids, vocabulary=vocabulary
        )

    for step in range(settings.steps):
        ids = z_step()
        if on_step is not None:
            on_step(step, ids)
        z = weight[ids]
        for _ in range(settings.inner_steps):
            acts, _ = layer_activations(model, modules, x, labels, mask, create_graph=True)
            penalty = (x - z + dual / settings.rho).pow(2).sum(-1).mul(free).sum() / free.sum().clamp_min(1)
            loss = (1 - alignment(targets, acts)) + settings.rho / 2 * penalty
            optimiser.zero_grad()
            loss.backward()
            assert x.grad is not None
            x.grad.mul_(keep)  # clamped positions (the code re-clamps its prompt embeddings) never move
            torch.nn.utils.clip_grad_norm_([x], 1.0)
            optimiser.step()
            losses.append(float(loss.detach()))
        schedule.step()
        dual = dual + settings.rho * (x.detach() - z) * keep
        losses.append(cosine(weight[ids]))  # the code logs the projected ids' gradient loss every outer step
    if settings.steps:
        ids = z_step()
    if on_step is not None:
        on_step(settings.steps, ids)
    return ids, start, cosine(weight[ids]), losses


def source_vocabulary(ids: torch.Tensor, mask: torch.Tensor) -> torch.Tensor:
    """The distinct token ids of the source rows (GRADMM's readable candidates on a byte vocabulary)."""
    return torch.unique(ids[mask.bool()])


def synthesize_gradmm(
    reference: Reference,
    source: Sequence[Pair],
    *,
    m: int,
    settings: GradmmSettings,
    seed: int,
    snapshots: Sequence[int] = (),
) -> SyntheticRows:
    """`m` GRADMM rows (token ids and their embeddings) for `source`; deterministic per seed.

    `snapshots`: outer steps at which to keep the projected ids and the elapsed time.
    """
    found, record = snapshot_recorder(snapshots, groups=settings.groups)
    model, modules, weight = frozen_reference(reference, targets=settings.targets)
    batch = encode_source(reference, source, groups=settings.groups, seed=seed)
    vocabulary = source_vocabulary(batch.ids, batch.mask) if settings.vocabulary == "source" else None
    generator = torch.Generator().manual_seed(seed + 1)
    ids_parts, rows_parts, groups, starts, ends, losses = [], [], [], [], [], []
    with seeded(seed):
        plans = plan_groups(
            model,
            modules,
            weight,
            batch,
            m=m,
            groups=settings.groups,
            space="full",
            rank=0,
            seed=seed,
            generator=generator,
        )
        for g, rows, targets in plans:
            count = len(rows)
            ids, start, end, group_losses = admm_group(
                model,
                modules,
                targets,
                batch.ids[rows],
                batch.labels[rows],
                batch.mask[rows],
                weight=weight,
                settings=settings,
                vocabulary=vocabulary,
                on_step=record,
            )
            ids_parts.append(ids)
            rows_parts.append(rows)
            groups += [g] * count
            starts += [start] * count
            ends += [end] * count
            losses += group_losses
    ids_all, rows_all = torch.cat(ids_parts), torch.cat(rows_parts)
    return SyntheticRows(
        inputs_embeds=weight[ids_all].clone(),
        labels=batch.labels[rows_all],
        attention_mask=batch.mask[rows_all],
        input_ids=ids_all,
        source_index=rows_all.tolist(),
        group=groups,
        alignment_start=starts,
        alignment=ends,
        losses=losses,
        snapshots=found,
    )
