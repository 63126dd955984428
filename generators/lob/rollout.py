"""Rollouts: `horizon` messages continuing a real window, drawn by one of the three methods."""

from __future__ import annotations

from collections import Counter
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Literal, Protocol

import numpy as np

from synth.generators.lob.correction import CorrectionSampler
from synth.generators.lob.model import LobModel
from synth.generators.lob.samplers import RejectionSampler, ReLOBGenSampler
from synth.generators.lob.state import InitialOrder, MarketState
from synth.generators.lob.zero_intelligence import ZeroIntelligenceSampler
from synth.validators.lob.lobster import LobsterMessage, OrderbookRow

Method = Literal["relobgen", "rejection", "correction", "zero-intelligence"]
METHODS: tuple[Method, ...] = ("relobgen", "rejection", "correction", "zero-intelligence")


class Sampler(Protocol):
    """Draws, applies and returns the next accepted message (None: it could not continue)."""

    attempts: int
    rejections: Counter[str]
    draws: int
    corrections: Counter[str]

    def step(self, state: MarketState, rng: np.random.Generator) -> LobsterMessage | None: ...


@dataclass(frozen=True)
class Rollout:
    """Generated messages, the book (top `levels`) after each, and what it cost: attempts, refusals by reason, and
    model positions (or random variates) sampled."""

    messages: tuple[LobsterMessage, ...]
    books: tuple[OrderbookRow, ...]
    attempts: int
    rejections: Counter[str]
    draws: int
    corrections: Counter[str]


def make_sampler(method: Method, model: LobModel, *, max_attempts: int = 1000) -> Sampler:
    """A fresh sampler (with zeroed counters) for `method`."""
    if method == "relobgen":
        return ReLOBGenSampler(model)
    if method == "rejection":
        return RejectionSampler(model, max_attempts=max_attempts)
    if method == "correction":
        return CorrectionSampler(model, max_attempts=max_attempts)
    if method == "zero-intelligence":
        return ZeroIntelligenceSampler(model.zero_intelligence)
    msg = f"unknown LOB method {method!r}; choose from {list(METHODS)}"
    raise ValueError(msg)


def run_rollout(
    sampler: Sampler,
    orders: Sequence[InitialOrder],
    *,
    time: float,
    horizon: int,
    levels: int,
    rng: np.random.Generator,
) -> Rollout:
    """Continue the book `orders` describe (at `time`) for `horizon` messages, snapshotting after each."""
    state = MarketState(orders, time=time)
    messages: list[LobsterMessage] = []
    books: list[OrderbookRow] = []
    snapshot = state.book.snapshot
    for _ in range(horizon):
        message = sampler.step(state, rng)
        if message is None:
            break
        messages.append(message)
        books.append(snapshot(levels))
    return Rollout(
        tuple(messages),
        tuple(books),
        sampler.attempts,
        Counter(sampler.rejections),
        sampler.draws,
        Counter(sampler.corrections),
    )
