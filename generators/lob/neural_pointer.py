"""The second pointer option: a small attention pointer, trained with torch, evaluated with numpy.

Each eligible order j gets a key k_j = MLP_k(φ_j) (its representation, from the same features as the logit
pointer); the context (event type, spread bucket, L1 imbalance) gives a query q = MLP_q(c); p(j) =
softmax_j(q·k_j / √d). Training needs torch (`pip install 'synth[train]'`); generation runs the two tiny MLPs in
numpy from the saved weights, so it needs no torch.
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np

from synth.core.errors import MissingDependencyError
from synth.generators.lob.pointer import CONTEXT_SIZE, FEATURES, Choice, candidates, context_vector
from synth.validators.lob.book import LimitOrderBook


def _mlp(x: np.ndarray, layers: Sequence[tuple[np.ndarray, np.ndarray]]) -> np.ndarray:
    for index, (weight, bias) in enumerate(layers):
        x = x @ weight.T + bias
        if index < len(layers) - 1:
            x = np.maximum(x, 0.0)
    return x


@dataclass(frozen=True)
class AttentionPointer:
    """The numpy form of the trained pointer: key and query MLPs as (weight, bias) pairs."""

    key_layers: tuple[tuple[np.ndarray, np.ndarray], ...]
    query_layers: tuple[tuple[np.ndarray, np.ndarray], ...]
    levels: int = 10

    def probabilities(self, features: np.ndarray, context: np.ndarray) -> np.ndarray:
        """p(j) over the rows of `features` in `context`."""
        keys = _mlp(features, self.key_layers)
        query = _mlp(context, self.query_layers)
        scores = keys @ query / math.sqrt(len(query))
        scores -= scores.max()
        weights = np.exp(scores)
        return weights / weights.sum()

    def choice_probabilities(self, choice: Choice) -> np.ndarray:
        """p(j) over a recorded choice set."""
        return self.probabilities(choice.features, choice.context)

    def draw_from_book(
        self,
        event: int,
        book: LimitOrderBook,
        side: int,
        *,
        time: float,
        submitted: Mapping[int, float],
        initial: set[int],
        u: float,
        min_size: int = 1,
        tick: int = 100,
        spread_ticks: int | None = None,
        imbalance: float = 0.0,
    ) -> int | None:
        """Draw an eligible order id with uniform `u` (None when none is eligible)."""
        choice = candidates(
            book,
            side,
            time=time,
            submitted=submitted,
            initial=initial,
            levels=self.levels,
            min_size=min_size,
            tick=tick,
        )
        if not choice.ids:
            return None
        cumulative = np.cumsum(self.probabilities(choice.features, context_vector(event, spread_ticks, imbalance)))
        index = int(np.searchsorted(cumulative, u * cumulative[-1], side="right"))
        return choice.ids[min(index, len(choice.ids) - 1)]

    def to_dict(self) -> dict[str, Any]:
        """JSON-ready form."""

        def pack(layers: Sequence[tuple[np.ndarray, np.ndarray]]) -> list[dict[str, list[Any]]]:
            return [{"weight": w.tolist(), "bias": b.tolist()} for w, b in layers]

        return {
            "kind": "attention",
            "features": list(FEATURES),
            "levels": self.levels,
            "key_layers": pack(self.key_layers),
            "query_layers": pack(self.query_layers),
        }

    @classmethod
    def from_dict(cls, data: Mapping[str, Any]) -> AttentionPointer:
        """Inverse of `to_dict`."""
        if list(data["features"]) != list(FEATURES):
            msg = f"pointer weights are for features {data['features']}, this version uses {list(FEATURES)}"
            raise ValueError(msg)

        def unpack(layers: Sequence[Mapping[str, Any]]) -> tuple[tuple[np.ndarray, np.ndarray], ...]:
            return tuple((np.asarray(layer["weight"]), np.asarray(layer["bias"])) for layer in layers)

        return cls(unpack(data["key_layers"]), unpack(data["query_layers"]), int(data["levels"]))


def fit_attention_pointer(
    choices: Sequence[Choice],
    *,
    levels: int = 10,
    hidden: int = 32,
    dim: int = 16,
    epochs: int = 30,
    seed: int = 0,
    batch: int = 256,
) -> AttentionPointer:
    """Train the key/query MLPs by maximum likelihood (cross-entropy over each choice set) with Adam."""
    try:
        import torch
    except ImportError:
        msg = "the attention pointer needs torch to train; install it with `pip install 'synth[train]'`"
        raise MissingDependencyError(msg) from None
    usable = [c for c in choices if len(c.features) > 1]
    if not usable:
        msg = "no real cancel with two or more eligible orders to train the attention pointer on"
        raise ValueError(msg)
    torch.manual_seed(seed)
    width = max(len(c.features) for c in usable)
    features = torch.zeros(len(usable), width, len(FEATURES))
    mask = torch.zeros(len(usable), width, dtype=torch.bool)
    for row, choice in enumerate(usable):
        features[row, : len(choice.features)] = torch.from_numpy(choice.features).float()
        mask[row, : len(choice.features)] = True
    contexts = torch.from_numpy(np.stack([c.context for c in usable])).float()
    chosen = torch.tensor([c.chosen for c in usable])
    key = torch.nn.Sequential(torch.nn.Linear(len(FEATURES), hidden), torch.nn.ReLU(), torch.nn.Linear(hidden, dim))
    query = torch.nn.Sequential(torch.nn.Linear(CONTEXT_SIZE, hidden), torch.nn.ReLU(), torch.nn.Linear(hidden, dim))
    optimiser = torch.optim.Adam([*key.parameters(), *query.parameters()], lr=3e-3)
    generator = torch.Generator().manual_seed(seed)
    for _ in range(epochs):
        for index in torch.randperm(len(usable), generator=generator).split(batch):
            scores = torch.einsum("bnd,bd->bn", key(features[index]), query(contexts[index])) / math.sqrt(dim)
            scores = scores.masked_fill(~mask[index], float("-inf"))
            loss = torch.nn.functional.cross_entropy(scores, chosen[index])
            optimiser.zero_grad()
            loss.backward()
            optimiser.step()

    def layers(network: Any) -> tuple[tuple[np.ndarray, np.ndarray], ...]:
        linear = [m for m in network if isinstance(m, torch.nn.Linear)]
        return tuple((m.weight.detach().double().numpy(), m.bias.detach().double().numpy()) for m in linear)

    return AttentionPointer(layers(key), layers(query), levels)
