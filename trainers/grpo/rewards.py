"""The GRPO reward registry: a name → a factory that builds a TRL reward function from its settings.

A reward function follows TRL's `reward_funcs` contract::

    reward(prompts, completions, **columns) -> list[float | None]

`prompts` and `completions` are parallel lists (each prompt repeated `num_generations` times); a completion is a
string, or a list of messages when the dataset is conversational (`completion_text` reads both). `columns` holds
every dataset column except `prompt` (one value per completion), anything a `rollout_func` returned besides the
token ids (e.g. `trajectory_return`), and TRL's `trainer_state`, `log_metric`, `log_extra`. Return one float per
completion (None = not applicable to this row). Rewards must vary within a group, or the advantage is zero.

A factory takes the reward's settings from the config (`grpo.rewards: [{name: marco, weight: 1.0, ...}]`) as
keyword arguments and returns the function. Register one with a line beside the built-ins in `REWARDS`
("module:attribute", imported only when the reward is used) or, in-process, with `register_reward`:

    REWARDS["optiscribe_scip"] = "synth.validators.optiscribe.reward:scip_reward"
"""

from __future__ import annotations

import importlib
from collections.abc import Callable, Mapping, Sequence
from typing import Any, Protocol

from synth.core.errors import InputError


class RewardFunction(Protocol):
    """TRL's reward function signature (module docstring)."""

    __name__: str

    def __call__(self, prompts: Sequence[Any], completions: Sequence[Any], **columns: Any) -> list[float | None]: ...


RewardFactory = Callable[..., RewardFunction]

REWARDS: dict[str, str | RewardFactory] = {
    "marco": "synth.trainers.grpo.marco_reward:marco_reward",
    "toolforge_first_call": "synth.trainers.grpo.toolforge_reward:toolforge_first_call_reward",
    "optiscribe_scip": "synth.generators.optiscribe.grpo_reward:optiscribe_scip_reward",
}


def register_reward(name: str, factory: str | RewardFactory) -> None:
    """Register `factory` (a callable or a "module:attribute" path) under `name` in this process."""
    if not name or not name.replace("_", "").isalnum():
        msg = f"reward name must be snake_case letters and digits, got {name!r}"
        raise ValueError(msg)
    REWARDS[name] = factory


def reward_factory(name: str) -> RewardFactory:
    """The factory registered as `name` (imported on first use); an unknown name is an `InputError`."""
    if name not in REWARDS:
        msg = f"unknown GRPO reward {name!r}; choose from {sorted(REWARDS)}"
        raise InputError(msg)
    entry = REWARDS[name]
    if isinstance(entry, str):
        module, _, attribute = entry.partition(":")
        entry = getattr(importlib.import_module(module), attribute)
        REWARDS[name] = entry
    return entry


def make_reward(name: str, **settings: Any) -> RewardFunction:
    """Build reward `name` with `settings`; the function's `__name__` is the registry name (TRL logs by it)."""
    try:
        function = reward_factory(name)(**settings)
    except TypeError as error:
        msg = f"GRPO reward {name!r}: bad settings {sorted(settings)}: {error}"
        raise InputError(msg) from None
    function.__name__ = name
    return function


def completion_text(completion: Any) -> str:
    """The assistant text of a completion: the string itself, or the last message's content."""
    if isinstance(completion, str):
        return completion
    if isinstance(completion, Sequence) and completion and isinstance(completion[-1], Mapping):
        return str(completion[-1].get("content") or "")
    return ""


def column(columns: Mapping[str, Any], key: str, count: int) -> list[Any]:
    """Column `key` of the reward call as a list of `count` values (None where the dataset lacks it)."""
    values = columns.get(key)
    if values is None:
        return [None] * count
    return list(values)
