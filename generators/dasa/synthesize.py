"""The DASA optimisation: per group of source rows, a desired update, and synthetic embeddings moved by Adam to
maximise the alignment of the update they induce with it, plus an embedding-norm regulariser.

    L(E) = 1 − mean_ℓ cos(−G_ℓ^syn(E, Y; θ_k), D_ℓ(θ_k)) + β · mean_{i,t} (‖E_it‖ − ρ̄)²

`ρ̄` is the mean norm of the token embeddings of the source rows' real positions (not of the whole vocabulary: on
the byte model most ids were never trained and sit at a third of the used tokens' norm, so a vocabulary mean pulled
every row towards a smaller norm than any token it started from). Synthetic rows start from source rows' token
embeddings and keep their labels and attention masks (random initialisation does far worse, per the note's
prototype); which source rows: a seeded draw (`init="source"`) or a k-center cover of the source in the reference's
hidden-state space (`init="coverage"`, `farthest_first`) or its k-means medoids (`init="medoids"`).

Which desired update (`target`):
- `one-step`: D = −G_src at the frozen reference θ₀ (the note's default; one state, k = 0).
- `trajectory`: D = ΔW of a short LoRA run on the group's source rows (the note's MTT-like option), matched at θ₀.
- `states`: one-step targets at `states` points θ_k = θ₀ + ΔW_k of that source LoRA run, the alignment averaged
  over them (dataset condensation's curriculum of network states; one double backward per state and step).
- `self-states`: dataset condensation's own inner loop. `rounds` times: a LoRA run (the downstream settings, a
  seed of its own) on the current synthetic rows, the source gradient taken at its states θ_k (`state_steps`), and
  `steps / rounds` Adam steps on the alignment averaged over those states: the rows are tuned at the states their
  own downstream training visits, not only at θ₀ (where the one-step target is already met by the start rows).

Measured on the tiny model (increment task, m 32): the one-step target is met (cos 0.78 -> 0.95) and the rows it
gives do lower the held-out loss faster over the first 10-20 downstream LoRA steps, but the gain is gone by step 50
of 200 (the LoRA fits the rows' fixed labels, and that end point is what the exact match reads); `self-states`, tuned
at the states of the rows' own run, is the variant that stays at or above its start rows (see README).
"""

from __future__ import annotations

import time
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass, field, replace
from typing import Any, Literal

import torch

from synth.generators.dasa.base_lm import Reference, encode_pairs, seeded
from synth.generators.dasa.lora import LORA_TARGETS, TrainRows
from synth.generators.dasa.objective import (
    MatchSpace,
    Target,
    alignment,
    desired_update,
    layer_activations,
    make_target,
    target_modules,
)
from synth.generators.dasa.trajectory import checkpoints, shifted, source_trajectory

Pair = tuple[str, str]


@dataclass(frozen=True, kw_only=True)
class DasaSettings:
    """Synthesis settings; `rank` is the LoRA r (space `lora`) or the SVD rank (space `lowrank`).

    `target` picks the desired update (module docstring); `source_steps`, `source_rank`, `source_lr` and
    `source_batch` set the short LoRA run on the source rows behind `trajectory` and `states` (the downstream LoRA
    settings by default), `states` how many points of it `states` matches at. `self-states` runs `rounds` LoRA runs
    (source_rank/lr/batch) on the synthetic rows and matches at their steps `state_steps`. `optimise="prompt"` moves
    only the bos+prompt positions and keeps the response inputs on their tokens. `init` picks the start rows:
    `source` a seeded random draw of source rows, `coverage` source rows chosen by farthest-point (k-center) selection
    over the reference's mean hidden state per row (from a seeded first row), `medoids` the rows nearest the centroids
    of a seeded k-means in that space, `random` Gaussian embeddings.
    """

    steps: int = 60
    lr: float = 1e-3
    beta: float = 1e-2
    space: MatchSpace = "full"
    rank: int = 8
    groups: int = 1
    targets: tuple[str, ...] = LORA_TARGETS
    init: Literal["source", "coverage", "medoids", "random"] = "source"
    target: Literal["one-step", "trajectory", "states", "self-states"] = "one-step"
    states: int = 4
    rounds: int = 3
    state_steps: tuple[int, ...] = (0, 50, 100, 200)
    source_steps: int = 60
    source_rank: int = 8
    source_lr: float = 3e-3
    source_batch: int = 16
    optimise: Literal["all", "prompt"] = "all"


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
    # step -> (seconds since synthesis began, the embeddings or ids the run would have returned after that step)
    snapshots: dict[int, tuple[float, torch.Tensor]] = field(default_factory=dict)


def snapshot_recorder(steps: Sequence[int], *, groups: int) -> tuple[dict[int, tuple[float, torch.Tensor]], Any]:
    """An empty snapshot dict and the `record(step, rows)` callback that fills it at `steps` (timed from now).

    Snapshots time one whole synthesis, so they need a single group (groups are optimised one after another).
    """
    if steps and groups != 1:
        msg = f"snapshots need `groups`=1 (got {groups}): groups are optimised one after another"
        raise ValueError(msg)
    began, wanted = time.perf_counter(), set(steps)
    found: dict[int, tuple[float, torch.Tensor]] = {}

    def record(step: int, rows: torch.Tensor) -> None:
        if step in wanted:
            found[step] = (time.perf_counter() - began, rows.detach().clone())

    return found, record


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


def pick_rows_by_draw(members: torch.Tensor, count: int, generator: torch.Generator) -> torch.Tensor:
    """`init="source"`: a seeded random draw (`pick_rows`)."""
    return pick_rows(members, count, generator=generator)


def row_features(model: Any, weight: torch.Tensor, batch: SourceBatch) -> torch.Tensor:
    """One vector per source row: the reference model's last hidden state averaged over the row's real positions."""
    with torch.no_grad():
        out = model(inputs_embeds=weight[batch.ids], attention_mask=batch.mask, output_hidden_states=True)
    mask = batch.mask[..., None].to(out.hidden_states[-1].dtype)
    return (out.hidden_states[-1] * mask).sum(1) / mask.sum(1)


def farthest_first(features: torch.Tensor, count: int, *, first: int) -> torch.Tensor:
    """Indices of `count` rows of `features` by greedy k-center (farthest-point) selection from row `first`: each
    next row is the one farthest (Euclidean) from those already chosen; past all rows the order repeats."""
    n = len(features)
    distance = torch.cdist(features, features)
    order = [first]
    nearest = distance[first].clone()
    for _ in range(min(count, n) - 1):
        nearest[order] = -1.0
        order.append(int(nearest.argmax()))
        nearest = torch.minimum(nearest, distance[order[-1]])
    return torch.tensor(order, dtype=torch.long).repeat(-(-count // len(order)))[:count]


def kmeans_medoids(
    features: torch.Tensor, count: int, generator: torch.Generator, iterations: int = 25
) -> torch.Tensor:
    """Indices of `count` rows of `features`: k-means (k-means++ seeding from `generator`, Lloyd steps until stable
    or `iterations`), then per cluster the row nearest its centroid (distinct rows; past all rows the order repeats)."""
    n = len(features)
    k = min(count, n)
    centres = [int(torch.randint(n, (1,), generator=generator))]
    nearest = ((features - features[centres[0]]) ** 2).sum(1)
    for _ in range(k - 1):
        weights = nearest if float(nearest.sum()) > 0 else torch.ones(n)
        centres.append(int(torch.multinomial(weights, 1, generator=generator)))
        nearest = torch.minimum(nearest, ((features - features[centres[-1]]) ** 2).sum(1))
    means = features[centres].clone()
    for _ in range(iterations):
        assign = torch.cdist(features, means).argmin(1)
        moved = torch.stack([features[assign == j].mean(0) if (assign == j).any() else means[j] for j in range(k)])
        if torch.equal(moved, means):
            break
        means = moved
    assign = torch.cdist(features, means).argmin(1)
    distance = torch.cdist(means, features)
    free = torch.ones(n, dtype=torch.bool)
    order = []
    for j in range(k):
        pool = free & (assign == j) if (free & (assign == j)).any() else free
        row = int(distance[j].masked_fill(~pool, float("inf")).argmin())
        order.append(row)
        free[row] = False
    return torch.tensor(order, dtype=torch.long).repeat(-(-count // k))[:count]


def farthest_from_a_seeded_row(features: torch.Tensor, count: int, generator: torch.Generator) -> torch.Tensor:
    """`farthest_first` from a row drawn with `generator`."""
    return farthest_first(features, count, first=int(torch.randint(len(features), (1,), generator=generator)))


Selector = Callable[[torch.Tensor, int, torch.Generator], torch.Tensor]
SELECTORS: dict[str, Selector] = {"coverage": farthest_from_a_seeded_row, "medoids": kmeans_medoids}


def feature_chooser(
    features: torch.Tensor, select: Selector
) -> Callable[[torch.Tensor, int, torch.Generator], torch.Tensor]:
    """Start rows chosen by `select` over the group members' `features` (`init="coverage"` / `"medoids"`)."""

    def choose(members: torch.Tensor, count: int, generator: torch.Generator) -> torch.Tensor:
        return members[select(features[members], count, generator)]

    return choose


def max_distance_to(features: torch.Tensor, chosen: torch.Tensor) -> float:
    """The coverage radius: the largest distance from any row of `features` to its nearest `chosen` row."""
    return float(torch.cdist(features, features[chosen]).min(dim=1).values.max())


def token_norm(weight: torch.Tensor, batch: SourceBatch) -> torch.Tensor:
    """ρ̄: the mean norm of the token embeddings at the source rows' real positions."""
    return weight[batch.ids[batch.mask.bool()]].norm(dim=-1).mean()


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
    with_targets: bool = True,
    choose: Callable[[torch.Tensor, int, torch.Generator], torch.Tensor] = pick_rows_by_draw,
) -> Iterator[tuple[int, torch.Tensor, Any]]:
    """Each group's share of the `m` rows, spread evenly: (group, source rows to start from, its desired update at
    θ₀, or None without `with_targets`: `self-states` takes its own at every state). `choose(members, count,
    generator)` picks the start rows.

    Lazy, so each group's update is computed after the previous group was optimised (the RNG order callers rely on).
    """
    for g, members in enumerate(batch.groups):
        count = m // groups + (1 if g < m % groups else 0)
        if count == 0:
            continue
        targets = (
            desired_update(
                model,
                modules,
                weight[batch.ids[members]],
                batch.labels[members],
                batch.mask[members],
                space=space,
                rank=rank,
                seed=seed + 1000 * g,
            )
            if with_targets
            else None
        )
        yield g, choose(members, count, generator), targets


def synthesize_dasa(
    reference: Reference,
    source: Sequence[Pair],
    *,
    m: int,
    settings: DasaSettings,
    seed: int,
    snapshots: Sequence[int] = (),
) -> SyntheticRows:
    """`m` DASA rows for `source`, spread evenly over the groups; deterministic per seed.

    `snapshots`: optimisation steps at which to keep the (best-aligned so far) embeddings and the elapsed time.
    """
    found, record = snapshot_recorder(snapshots, groups=settings.groups)
    model, modules, weight = frozen_reference(reference, targets=settings.targets)
    batch = encode_source(reference, source, groups=settings.groups, seed=seed)
    rho = token_norm(weight, batch)
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
            with_targets=settings.target != "self-states",
            choose=feature_chooser(row_features(model, weight, batch), SELECTORS[settings.init])
            if settings.init in SELECTORS
            else pick_rows_by_draw,
        )
        for g, rows, targets in plans:
            count = len(rows)
            init = weight[batch.ids[rows]].clone()
            if settings.init == "random":
                init = torch.randn(init.shape, generator=generator) * rho / init.shape[-1] ** 0.5
            if settings.target == "self-states":
                embeds, start, end, losses = optimise_self_states(
                    reference,
                    modules,
                    weight,
                    batch,
                    g,
                    rows,
                    init,
                    rho=rho,
                    settings=settings,
                    seed=seed,
                    on_step=record,
                )
            else:
                assert targets is not None
                states = group_states(reference, modules, weight, batch, g, targets, settings=settings, seed=seed)
                embeds, start, end, losses = optimise_group(
                    model,
                    modules,
                    states,
                    init,
                    batch.labels[rows],
                    batch.mask[rows],
                    rho=rho,
                    settings=settings,
                    on_step=record,
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
        snapshots=found,
    )


State = tuple[dict[str, torch.Tensor], dict[str, Target]]


def group_states(  # type: ignore[no-untyped-def]
    reference: Reference,
    modules,
    weight: torch.Tensor,
    batch: SourceBatch,
    group: int,
    targets: dict[str, Target],
    *,
    settings: DasaSettings,
    seed: int,
) -> list[State]:
    """The (weight shift, desired update) pairs one group is matched at; `[({}, targets)]` for `one-step`."""
    if settings.target == "one-step":
        return [({}, targets)]
    members = batch.groups[group]
    at = checkpoints(settings.source_steps, settings.states) if settings.target == "states" else []
    deltas = source_trajectory(
        reference,
        TrainRows(labels=batch.labels[members], attention_mask=batch.mask[members], input_ids=batch.ids[members]),
        at=sorted({*at, settings.source_steps}),
        rank=settings.source_rank,
        lr=settings.source_lr,
        batch_size=settings.source_batch,
        seed=seed + 2000 * group,
    )
    if settings.target == "trajectory":
        generator = torch.Generator().manual_seed(seed + 1000 * group)
        final = deltas[settings.source_steps]
        moved = {
            n: make_target(-final[n], space=settings.space, rank=settings.rank, generator=generator)
            if n in final
            else t
            for n, t in targets.items()
        }
        return [({}, moved)]
    return [({}, targets), *states_along(reference, modules, weight, batch, group, deltas, at[1:], settings, seed)]


def states_along(  # type: ignore[no-untyped-def]
    reference: Reference,
    modules,
    weight: torch.Tensor,
    batch: SourceBatch,
    group: int,
    deltas: dict[int, dict[str, torch.Tensor]],
    steps: list[int],
    settings: DasaSettings,
    seed: int,
) -> list[State]:
    """The group's desired update with the reference shifted to each of a LoRA run's `steps` (its `deltas`)."""
    members = batch.groups[group]
    lora_modules = target_modules(reference.model, LORA_TARGETS)
    states: list[State] = []
    for step in steps:
        with shifted(lora_modules, deltas[step]):
            targets = desired_update(
                reference.model,
                modules,
                weight[batch.ids[members]],
                batch.labels[members],
                batch.mask[members],
                space=settings.space,
                rank=settings.rank,
                seed=seed + 1000 * group,
            )
        states.append((deltas[step], targets))
    return states


SELF_RUN_SEED = 7777  # offset of the seeds of `self-states`' LoRA runs: never the downstream run's own seed


def optimise_self_states(  # type: ignore[no-untyped-def]
    reference: Reference,
    modules,
    weight: torch.Tensor,
    batch: SourceBatch,
    group: int,
    rows: torch.Tensor,
    init: torch.Tensor,
    *,
    rho,
    settings: DasaSettings,
    seed: int,
    on_step: Callable[[int, torch.Tensor], None] | None = None,
) -> tuple[torch.Tensor, float, float, list[float]]:
    """`self-states`: `rounds` times, a LoRA run on the current rows, then Adam on the alignment with the source
    update averaged over that run's states (`optimise_group`); `on_step` sees the global step count."""
    at = sorted(set(settings.state_steps))
    if settings.rounds < 1 or not at or at[0] < 0:
        msg = f"`self-states` needs `rounds` >= 1 and non-negative `state_steps` (got {settings.rounds}, {at})"
        raise ValueError(msg)
    labels, mask = batch.labels[rows], batch.mask[rows]
    embeds, start, end, losses, done = init, None, -2.0, [], 0
    at_reference: list[State] = []  # step 0 of every run is θ₀ (LoRA B starts at 0): its target is taken once
    for r in range(settings.rounds):
        steps = settings.steps // settings.rounds + (1 if r < settings.steps % settings.rounds else 0)
        deltas = source_trajectory(
            reference,
            TrainRows(labels=labels, attention_mask=mask, inputs_embeds=embeds.detach()),
            at=at,
            rank=settings.source_rank,
            lr=settings.source_lr,
            batch_size=settings.source_batch,
            seed=seed + SELF_RUN_SEED + 100 * group + r,
        )
        fresh = at[1:] if at_reference else at
        states = [*at_reference, *states_along(reference, modules, weight, batch, group, deltas, fresh, settings, seed)]
        if at[0] == 0:
            at_reference = states[:1]

        def seen(k: int, best: torch.Tensor, offset: int = done, first: bool = r == 0) -> None:
            if on_step is not None and (k or first):
                on_step(offset + k, best)

        embeds, round_start, end, round_losses = optimise_group(
            reference.model,
            modules,
            states,
            embeds,
            labels,
            mask,
            rho=rho,
            settings=replace(settings, steps=steps),
            on_step=seen,
        )
        start = round_start if start is None else start
        losses += round_losses
        done += steps
    return embeds, float(start if start is not None else end), end, losses


def optimise_group(  # type: ignore[no-untyped-def]
    model,
    modules,
    states: list[State],
    init: torch.Tensor,
    labels: torch.Tensor,
    mask: torch.Tensor,
    *,
    rho,
    settings,
    on_step: Callable[[int, torch.Tensor], None] | None = None,
) -> tuple[torch.Tensor, float, float, list[float]]:
    """Adam on the DASA loss of one group, the alignment averaged over `states` (one forward and double backward
    per state and step); returns the best-aligned embeddings seen, the alignment at the start and of those
    embeddings, and the losses. `on_step(k, best)` sees the best embeddings after k steps."""
    embeds = init.clone().requires_grad_(True)
    optimiser = torch.optim.Adam([embeds], lr=settings.lr)
    movable = mask.bool() if settings.optimise == "all" else mask.bool() & (labels == -100)
    lora_modules = target_modules(model, LORA_TARGETS) if len(states) > 1 else []
    losses: list[float] = []
    best, start = init.clone(), None
    best_align = -2.0
    for _ in range(settings.steps + 1):
        optimiser.zero_grad()
        last = len(losses) == settings.steps
        value = 0.0
        for deltas, targets in states:
            with shifted(lora_modules, deltas):
                acts, _ = layer_activations(model, modules, embeds, labels, mask, create_graph=not last)
                align = alignment(targets, acts) / len(states)
                value += float(align.detach())
                if not last:
                    (-align).backward()
        start = value if start is None else start
        if value > best_align:
            best, best_align = embeds.detach().clone(), value
        if on_step is not None:
            on_step(len(losses), best)
        if last:
            break
        norm_penalty = ((embeds.norm(dim=-1) - rho) ** 2 * mask).sum() / mask.sum()
        (settings.beta * norm_penalty).backward()
        assert embeds.grad is not None
        embeds.grad.mul_(movable[..., None])
        optimiser.step()
        losses.append(1 - value + settings.beta * float(norm_penalty.detach()))
    return best, float(start if start is not None else best_align), best_align, losses
