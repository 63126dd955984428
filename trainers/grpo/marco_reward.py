"""MARCO's GRPO reward: the RDKit evaluator's shaped turn reward, or a multi-turn trajectory's return.

Single-turn (plain GRPO over instructions): the completion's `<SMILES>` answer is graded against the row's
`source_smiles` for the row's `task` and earns `turn_reward` (invalid gate, clipped property progress, similarity,
success bonus, repeat penalty). Multi-turn (the MARCO rollout): the rollout already graded every turn and passes
`trajectory_return` (the undiscounted sum), which is the reward as is.
"""

from __future__ import annotations

from collections.abc import Sequence
from functools import lru_cache
from typing import Any

from synth.trainers.grpo.rewards import RewardFunction, column, completion_text


@lru_cache(maxsize=16)
def marco_evaluator(task: str, protocol: str, fragments: str) -> Any:
    """The (cached) evaluator of `task`'s properties."""
    from synth.generators.marco.tasks import get_task
    from synth.validators.marco.evaluator import MoleculeEvaluator

    return MoleculeEvaluator(properties=get_task(task).properties, protocol=protocol, fragments=fragments)  # type: ignore[arg-type]


@lru_cache(maxsize=4096)
def _profile(task: str, protocol: str, fragments: str, smiles: str) -> Any:
    return marco_evaluator(task, protocol, fragments).profile(smiles)


def grade_answer(
    text: str, *, source_smiles: str, task: str, protocol: str = "gellmo", fragments: str = "reject"
) -> tuple[Any, Any]:
    """(evaluation, source profile) of the `<SMILES>` answer in `text` for `task`."""
    from synth.validators.marco.answers import extract_smiles

    source = _profile(task, protocol, fragments, source_smiles)
    return marco_evaluator(task, protocol, fragments).evaluate(extract_smiles(text), source), source


def marco_reward(
    *,
    task: str = "BPQ",
    protocol: str = "gellmo",
    fragments: str = "reject",
    invalid: float = -1.0,
    progress_weight: float = 1.0,
    similarity_weight: float = 0.5,
    success_bonus: float = 1.0,
    repeat_penalty: float = 0.5,
    similarity_floor: float = 0.4,
) -> RewardFunction:
    """The reward factory registered as `marco`; `task` is the default for rows without a `task` column."""
    from synth.validators.marco.reward import RewardSettings, turn_reward

    settings = RewardSettings(
        invalid, progress_weight, similarity_weight, success_bonus, repeat_penalty, similarity_floor
    )

    def reward(prompts: Sequence[Any], completions: Sequence[Any], **columns: Any) -> list[float | None]:
        count = len(completions)
        returns = column(columns, "trajectory_return", count)
        sources = column(columns, "source_smiles", count)
        tasks = column(columns, "task", count)
        log_metric = columns.get("log_metric")
        successes = [s for s in column(columns, "success", count) if s is not None]
        if log_metric is not None and successes:
            log_metric("marco/success", sum(successes) / len(successes))
        out: list[float | None] = []
        for completion, given, source, row_task in zip(completions, returns, sources, tasks, strict=True):
            if given is not None:
                out.append(float(given))
                continue
            if source is None:
                out.append(None)
                continue
            graded, profile = grade_answer(
                completion_text(completion),
                source_smiles=source,
                task=row_task or task,
                protocol=protocol,
                fragments=fragments,
            )
            out.append(turn_reward(graded, seen=[profile.canonical], settings=settings))
        return out

    return reward  # type: ignore[return-value]
