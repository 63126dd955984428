"""Model states along a short LoRA run on the source rows, for DASA's `trajectory` and `states` targets.

A desired update taken only at the frozen reference θ₀ says what the *first* LoRA step should do; downstream LoRA
runs for hundreds of steps, and embeddings tuned to one state can induce updates that stop helping (or hurt) once
the adapter has moved (measured: see `generators/dasa/synthesize.py`). Dataset condensation with gradient matching
(Zhao et al., 2021) matches over a curriculum of network states for this reason; the research note's `trajectory`
option matches the whole source update ΔW of a short run instead. Both need the run's merged adapter updates:

- `source_trajectory`: ΔW_ℓ = (α/r) B_ℓ A_ℓ of every LoRA module at chosen steps of a LoRA run (the same trainer,
  rank, α and learning rate as the downstream runs) on the source rows' tokens;
- `shifted`: a context in which the frozen reference's weights are W_ℓ + ΔW_ℓ (restored exactly afterwards), so
  the usual hooks and double backprop work at that state with no peft wrapper in the graph.
"""

from __future__ import annotations

import contextlib
from collections.abc import Iterator, Sequence
from typing import Any

import torch

from synth.generators.dasa.base_lm import Reference
from synth.generators.dasa.lora import LORA_TARGETS, TrainRows, train_lora

PEFT_PREFIX = "base_model.model."


def checkpoints(steps: int, states: int) -> list[int]:
    """`states` LoRA steps evenly spaced in [0, steps), starting at 0 (θ₀).

    >>> checkpoints(60, 3)
    [0, 20, 40]
    """
    if states < 1 or steps < 0 or (states > 1 and steps < states - 1):
        msg = f"cannot place {states} states in a {steps}-step source run"
        raise ValueError(msg)
    return [round(i * steps / states) for i in range(states)]


def source_trajectory(
    reference: Reference,
    rows: TrainRows,
    *,
    at: Sequence[int],
    rank: int,
    lr: float,
    batch_size: int,
    seed: int,
    targets: Sequence[str] = LORA_TARGETS,
) -> dict[int, dict[str, torch.Tensor]]:
    """The merged adapter update ΔW of every LoRA module (by its name in the bare model) at each step in `at`.

    The LoRA run stops at `max(at)`; the reference model is unwrapped again afterwards (weights unchanged).
    """
    wanted = set(at)
    found: dict[int, dict[str, torch.Tensor]] = {}

    def record(step: int, model: Any) -> None:
        if step not in wanted:
            return
        with torch.no_grad():
            found[step] = {
                name.removeprefix(PEFT_PREFIX): module.get_delta_weight("default").detach().clone()
                for name, module in model.named_modules()
                if hasattr(module, "get_delta_weight") and hasattr(module, "base_layer")
            }

    model = train_lora(
        reference,
        rows,
        rank=rank,
        steps=max(at),
        batch_size=batch_size,
        lr=lr,
        seed=seed,
        targets=targets,
        on_step=record,
    )
    reference.model = model.unload()
    for parameter in reference.model.parameters():
        parameter.requires_grad_(False)
    return found


@contextlib.contextmanager
def shifted(modules: Sequence[tuple[str, torch.nn.Linear]], deltas: dict[str, torch.Tensor]) -> Iterator[None]:
    """Add `deltas[name]` to the weight of each named module for the block; the original weights come back exactly.

    Modules without a delta (e.g. `lm_head`, which LoRA does not train) keep their weights.
    """
    saved = []
    try:
        with torch.no_grad():
            for name, module in modules:
                if name in deltas:
                    saved.append((module, module.weight.detach().clone()))
                    module.weight.add_(deltas[name].to(module.weight.dtype))
        yield
    finally:
        with torch.no_grad():
            for module, weight in saved:
                module.weight.copy_(weight)
