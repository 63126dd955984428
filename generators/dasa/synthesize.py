"""The DASA optimisation: per group of source rows, a desired update, and synthetic embeddings moved by Adam to
maximise the alignment of the update they induce with it, plus an embedding-norm regulariser.

    L(E) = 1 − mean_ℓ cos(−G_ℓ^syn(E, Y), D_ℓ) + β · mean_{i,t} (‖E_it‖ − ρ̄)²

`ρ̄` is the mean norm of the token embedding rows. Synthetic rows start from source rows' token embeddings and keep
their labels and attention masks (random initialisation does far worse, per the note's prototype).
"""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from dataclasses import dataclass, field
from typing import Any, Literal

import torch

from synth.generators.dasa.objective import (
    MatchSpace,
    alignment,
    desired_update,
    layer_activations,
    target_modules,
)
from synth.trainers.dasa.base_lm import Reference, encode_pairs, seeded
from synth.trainers.dasa.lora import LORA_TARGETS

Pair = tuple[str, str]


@dataclass(frozen=True, kw_only=True)
class DasaSettings:
    """Synthesis settings; `rank` is the LoRA r (space `lora`) or the SVD rank (space `lowrank`)."""

    steps: int = 60
    lr: float = 1e-3
    beta: float = 1e-2
    space: MatchSpace = "full"
    rank: int = 8
    groups: int = 4
    targets: tuple[str, ...] = LORA_TARGETS
    init: Literal["source", "random"] = "source"


@dataclass
class SyntheticRows:
    """m synthetic rows with what they were made from."""

    inputs_embeds: torch.Tensor
    labels: torch.Tensor
    attention_mask: torch.Tensor
    input_ids: torch.Tensor  # nearest tokens (DASA, inspection only) or the projected text (GRADMM)
    source_index: list[int]
    group: list[int]
    alignment_start: list[float]
    alignment: list[float]
    losses: list[float] = field(default_factory=list)


@dataclass
class SourceBatch:
    """Encoded source rows, shuffled once per seed, split into groups."""

    ids: torch.Tensor
    labels: torch.Tensor
    mask: torch.Tensor
    groups: list[torch.Tensor]


def encode_source(reference: Reference, pairs: Sequence[Pair], *, groups: int, seed: int) -> SourceBatch:
    """Encode the source pairs and split a seeded permutation of them into `groups` near-equal groups."""
    if not 1 <= groups <= len(pairs):
        msg = f"`groups`={groups} must be between 1 and the number of source rows ({len(pairs)})"
        raise ValueError(msg)
    ids, labels, mask = encode_pairs(pairs, reference.tokenizer)
    order = torch.randperm(len(pairs), generator=torch.Generator().manual_seed(seed))
    return SourceBatch(ids, labels, mask, list(torch.tensor_split(order, groups)))


def pick_rows(members: torch.Tensor, count: int, *, generator: torch.Generator) -> torch.Tensor:
    """`count` of `members`, without replacement while they last."""
    picks = [members[torch.randperm(len(members), generator=generator)] for _ in range(-(-count // len(members)))]
    return torch.cat(picks)[:count]


def nearest_tokens(embeds: torch.Tensor, weight: torch.Tensor) -> torch.Tensor:
    """The vocabulary id nearest by cosine to each embedding (for inspection)."""
    unit = torch.nn.functional.normalize
    return (unit(embeds, dim=-1) @ unit(weight, dim=-1).T).argmax(-1)


def frozen_reference(reference: Reference, *, targets: Sequence[str]) -> tuple[Any, list[Any], torch.Tensor]:
    """The reference model with every parameter frozen, its modules named by `targets`, and its embedding matrix."""
    model = reference.model
    for parameter in model.parameters():
        parameter.requires_grad_(False)
    return model, target_modules(model, targets), model.get_input_embeddings().weight.detach()


def plan_groups(  # type: ignore[no-untyped-def]
    model,
    modules,
    weight: torch.Tensor,
    batch: SourceBatch,
    *,
    m: int,
    groups: int,
    space: MatchSpace,
    rank: int,
    seed: int,
    generator: torch.Generator,
) -> Iterator[tuple[int, torch.Tensor, Any]]:
    """Each group's share of the `m` rows, spread evenly: (group, source rows to start from, its desired update).

    Lazy, so each group's update is computed after the previous group was optimised (the RNG order callers rely on).
    """
    for g, members in enumerate(batch.groups):
        count = m // groups + (1 if g < m % groups else 0)
        if count == 0:
            continue
        targets = desired_update(
            model,
            modules,
            weight[batch.ids[members]],
            batch.labels[members],
            batch.mask[members],
            space=space,
            rank=rank,
            seed=seed + 1000 * g,
        )
        yield g, pick_rows(members, count, generator=generator), targets


def synthesize_dasa(
    reference: Reference, source: Sequence[Pair], *, m: int, settings: DasaSettings, seed: int
) -> SyntheticRows:
    """`m` DASA rows for `source`, spread evenly over the groups; deterministic per seed."""
    model, modules, weight = frozen_reference(reference, targets=settings.targets)
    rho = weight.norm(dim=-1).mean()
    batch = encode_source(reference, source, groups=settings.groups, seed=seed)
    generator = torch.Generator().manual_seed(seed + 1)
    parts: list[tuple[torch.Tensor, torch.Tensor, list[int], float, float, list[float]]] = []
    with seeded(seed):
        plans = plan_groups(
            model,
            modules,
            weight,
            batch,
            m=m,
            groups=settings.groups,
            space=settings.space,
            rank=settings.rank,
            seed=seed,
            generator=generator,
        )
        for g, rows, targets in plans:
            count = len(rows)
            init = weight[batch.ids[rows]].clone()
            if settings.init == "random":
                init = torch.randn(init.shape, generator=generator) * rho / init.shape[-1] ** 0.5
            embeds, start, end, losses = optimise_group(
                model, modules, targets, init, batch.labels[rows], batch.mask[rows], rho=rho, settings=settings
            )
            parts.append((embeds, rows, [g] * count, start, end, losses))
    rows_all = torch.cat([p[1] for p in parts])
    embeds_all = torch.cat([p[0] for p in parts])
    return SyntheticRows(
        inputs_embeds=embeds_all,
        labels=batch.labels[rows_all],
        attention_mask=batch.mask[rows_all],
        input_ids=nearest_tokens(embeds_all, weight),
        source_index=rows_all.tolist(),
        group=[g for p in parts for g in p[2]],
        alignment_start=[p[3] for p in parts for _ in p[2]],
        alignment=[p[4] for p in parts for _ in p[2]],
        losses=[x for p in parts for x in p[5]],
    )


def optimise_group(  # type: ignore[no-untyped-def]
    model, modules, targets, init: torch.Tensor, labels: torch.Tensor, mask: torch.Tensor, *, rho, settings
) -> tuple[torch.Tensor, float, float, list[float]]:
    """Adam on the DASA loss of one group; returns the best-aligned embeddings seen, the alignment at the start
    and of those embeddings, and the losses."""
    embeds = init.clone().requires_grad_(True)
    optimiser = torch.optim.Adam([embeds], lr=settings.lr)
    losses: list[float] = []
    best, start = init.clone(), None
    best_align = -2.0
    for _ in range(settings.steps + 1):
        acts, _ = layer_activations(model, modules, embeds, labels, mask, create_graph=True)
        align = alignment(targets, acts)
        value = float(align.detach())
        start = value if start is None else start
        if value > best_align:
            best, best_align = embeds.detach().clone(), value
        if len(losses) == settings.steps:
            break
        norm_penalty = ((embeds.norm(dim=-1) - rho) ** 2 * mask).sum() / mask.sum()
        loss = (1 - align) + settings.beta * norm_penalty
        optimiser.zero_grad()
        loss.backward()
        optimiser.step()
        losses.append(float(loss.detach()))
    return best, float(start if start is not None else best_align), best_align, losses
