"""GRADMM (Nguyen et al., ICML 2025, arXiv 2502.17607), following the public code described in the research note.

Per group of source rows: the target is the mean gradient of the source loss on the LM head (`LAST_LAYERS =
["lm_head"]`); the synthetic rows are continuous embeddings x, projected tokens z and a dual variable λ:

1. z-step: for each position, the top-k vocabulary tokens by cosine to `x + λ/ρ`; then, left to right, the candidate
   with the highest next-token probability under the reference LM given the projected prefix (the code's one
   `generate(max_new_tokens=1)` call per position; here one forward per position for all rows at once).
2. x-step: `inner_steps` Adam steps (grad-clip 1.0) on `1 − cos(G_syn(x), G_src) + ρ/2 ‖x − Emb(z) + λ/ρ‖²`
   (double backprop).
3. dual update: `λ ← λ + ρ (x − Emb(z))`.

The output is the projected token ids (readable text); `alignment` is the cosine reached by those tokens.
Synthetic rows start from source rows (the code's `real_first`) and keep their labels, as in DASA.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

import torch

from synth.generators.dasa.base_lm import Reference, seeded
from synth.generators.dasa.objective import alignment, layer_activations
from synth.generators.dasa.synthesize import SyntheticRows, encode_source, frozen_reference, plan_groups

Pair = tuple[str, str]


@dataclass(frozen=True, kw_only=True)
class GradmmSettings:
    """ADMM settings (defaults of the GRADMM code scaled to the tiny model: ρ 0.7, k 50, 10 inner steps)."""

    steps: int = 10
    inner_steps: int = 10
    lr: float = 8e-3
    rho: float = 0.7
    top_k: int = 50
    groups: int = 4
    targets: tuple[str, ...] = ("lm_head",)


def project(model: torch.nn.Module, point: torch.Tensor, mask: torch.Tensor, weight: torch.Tensor, *, top_k: int):  # type: ignore[no-untyped-def]
    """Token ids for `point` [B, L, d]: top-k by cosine, then left to right the LM's most likely candidate."""
    unit = torch.nn.functional.normalize
    candidates = (unit(point, dim=-1) @ unit(weight, dim=-1).T).topk(min(top_k, weight.shape[0]), dim=-1).indices
    ids = candidates[:, :, 0].clone()
    with torch.no_grad():
        for t in range(1, point.shape[1]):
            if not bool(mask[:, t].any()):
                break
            logits = model(input_ids=ids[:, :t], attention_mask=mask[:, :t]).logits[:, -1]
            best = logits.gather(1, candidates[:, t]).argmax(-1)
            ids[:, t] = candidates[:, t].gather(1, best[:, None]).squeeze(1)
    return ids


def admm_group(  # type: ignore[no-untyped-def]
    model, modules, targets, init: torch.Tensor, labels, mask, *, weight: torch.Tensor, settings: GradmmSettings
) -> tuple[torch.Tensor, float, float, list[float]]:
    """The ADMM loop of one group; returns the projected ids, the alignment at the start and of the ids, losses."""

    def cosine(embeds: torch.Tensor) -> float:
        acts, _ = layer_activations(model, modules, embeds.detach().requires_grad_(True), labels, mask)
        return float(alignment(targets, acts).detach())

    start = cosine(init)
    x = init.clone().requires_grad_(True)
    dual = torch.zeros_like(init)
    losses: list[float] = []
    optimiser = torch.optim.Adam([x], lr=settings.lr)
    schedule = torch.optim.lr_scheduler.StepLR(optimiser, step_size=1, gamma=0.9)
    ids = project(model, init, mask, weight, top_k=settings.top_k)
    for _ in range(settings.steps):
        ids = project(model, x.detach() + dual / settings.rho, mask, weight, top_k=settings.top_k)
        z = weight[ids]
        for _ in range(settings.inner_steps):
            acts, _ = layer_activations(model, modules, x, labels, mask, create_graph=True)
            penalty = (x - z + dual / settings.rho).pow(2).sum(-1).mul(mask).sum() / mask.sum()
            loss = (1 - alignment(targets, acts)) + settings.rho / 2 * penalty
            optimiser.zero_grad()
            loss.backward()
            torch.nn.utils.clip_grad_norm_([x], 1.0)
            optimiser.step()
            losses.append(float(loss.detach()))
        schedule.step()
        dual = dual + settings.rho * (x.detach() - z)
        losses.append(cosine(weight[ids]))  # the code logs the projected ids' gradient loss every outer step
    return ids, start, cosine(weight[ids]), losses


def synthesize_gradmm(
    reference: Reference, source: Sequence[Pair], *, m: int, settings: GradmmSettings, seed: int
) -> SyntheticRows:
    """`m` GRADMM rows (token ids and their embeddings) for `source`; deterministic per seed."""
    model, modules, weight = frozen_reference(reference, targets=settings.targets)
    batch = encode_source(reference, source, groups=settings.groups, seed=seed)
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
                weight[batch.ids[rows]].clone(),
                batch.labels[rows],
                batch.mask[rows],
                weight=weight,
                settings=settings,
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
    )
