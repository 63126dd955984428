"""Monte Carlo Tree Search over corruption paths: mine the invalid dialogues a validator accepts or nearly accepts.

The root is a valid row; an action is one (operator, position) from `corruptions`; paths are at most `depth`
actions long. Selection uses UCT (`c` ≈ 1.4), expansion tries one untried action, the rollout continues with
random actions to the depth limit, and a state's reward is the fraction of layers it passes plus 1 when the
validator accepts it (so accepted corruptions dominate). Every evaluated state that differs from the root is a
candidate negative, deduplicated by the hash of its messages. Seeded and deterministic.
"""

from __future__ import annotations

import hashlib
import json
import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from synth.validators.toolforge.corruptions import OPERATORS, CorruptionOperator, Position, applicable_actions
from synth.validators.toolforge.corruptions import apply_action as apply_corruption
from synth.validators.toolforge.verifiers import LAYERS, validate_row

Action = tuple[str, Position]


def messages_hash(row: Mapping[str, Any]) -> str:
    """Content hash of a row's messages (what corruptions change)."""
    text = json.dumps(row.get("messages"), sort_keys=True, ensure_ascii=False, default=str)
    return hashlib.blake2b(text.encode(), digest_size=12).hexdigest()


def row_key(row: Mapping[str, Any]) -> str:
    """The row's `id` when it has one, else `seed_id:case:hash` of its messages."""
    if row.get("id"):
        return str(row["id"])
    return f"{row.get('seed_id', '')}:{row.get('case', '')}:{messages_hash(row)[:8]}"


@dataclass(frozen=True, slots=True)
class MinedNegative:
    """A corrupted row, the operator path that made it, and each layer's reasons on it."""

    parent: Mapping[str, Any]
    row: Mapping[str, Any]
    path: tuple[Action, ...]
    results: Mapping[str, list[str]]

    @property
    def accepted(self) -> bool:
        """Whether every layer passed (a validator miss)."""
        return not any(self.results.values())

    @property
    def failed_layers(self) -> tuple[str, ...]:
        return tuple(layer for layer, reasons in self.results.items() if reasons)

    @property
    def reward(self) -> float:
        return reward_of(self.results)

    @property
    def operators(self) -> tuple[str, ...]:
        return tuple(name for name, _ in self.path)


def reward_of(results: Mapping[str, Sequence[str]]) -> float:
    """Fraction of layers passed, plus 1 when all pass."""
    passed = sum(not reasons for reasons in results.values())
    return passed / max(len(results), 1) + float(passed == len(results))


@dataclass(slots=True)
class _Node:
    row: dict[str, Any]
    path: tuple[Action, ...]
    untried: list[Action]
    children: list[_Node] = field(default_factory=list)
    visits: int = 0
    value: float = 0.0

    def uct(self, parent_visits: int, c: float) -> float:
        if not self.visits:
            return math.inf
        return self.value / self.visits + c * math.sqrt(math.log(parent_visits) / self.visits)


class _Search:
    """One tree search from a root row; `found` holds every evaluated corrupted state by hash."""

    def __init__(
        self,
        root: Mapping[str, Any],
        *,
        layers: Sequence[str],
        depth: int,
        c: float,
        seed: int,
        operators: Sequence[CorruptionOperator],
    ) -> None:
        self.layers, self.depth, self.c, self.operators = tuple(layers), depth, c, tuple(operators)
        digest = hashlib.blake2b(messages_hash(root).encode(), digest_size=8).digest()
        self.rng = np.random.Generator(np.random.PCG64([seed, int.from_bytes(digest, "little")]))
        self.root_row = dict(root)
        self.root_hash = messages_hash(root)
        self.found: dict[str, MinedNegative] = {}
        self.root = self._node(self.root_row, ())

    def _node(self, row: dict[str, Any], path: tuple[Action, ...]) -> _Node:
        untried = applicable_actions(row, self.operators) if len(path) < self.depth else []
        return _Node(row, path, untried)

    def _apply(self, row: Mapping[str, Any], action: Action) -> dict[str, Any]:
        return apply_corruption(row, action, self.rng)

    def evaluate(self, row: dict[str, Any], path: tuple[Action, ...]) -> float:
        """Reward of a state; corrupted states are recorded (first path wins per hash)."""
        key = messages_hash(row)
        if key == self.root_hash:
            return reward_of(validate_row(row, self.layers))
        if key not in self.found:
            self.found[key] = MinedNegative(self.root_row, row, path, validate_row(row, self.layers))
        return self.found[key].reward

    def _select(self) -> list[_Node]:
        trail = [self.root]
        node = self.root
        while not node.untried and node.children:
            node = max(node.children, key=lambda child: child.uct(node.visits, self.c))
            trail.append(node)
        return trail

    def _rollout(self, row: dict[str, Any], path: tuple[Action, ...]) -> float:
        best = self.evaluate(row, path)
        while len(path) < self.depth:
            actions = applicable_actions(row, self.operators)
            if not actions:
                break
            action = actions[int(self.rng.integers(len(actions)))]
            row, path = self._apply(row, action), (*path, action)
            best = max(best, self.evaluate(row, path))
        return best

    def iterate(self) -> None:
        trail = self._select()
        node = trail[-1]
        if node.untried:
            action = node.untried.pop(int(self.rng.integers(len(node.untried))))
            child = self._node(self._apply(node.row, action), (*node.path, action))
            node.children.append(child)
            trail.append(child)
            node = child
        reward = self._rollout(node.row, node.path) if node.path else 0.0
        for visited in trail:
            visited.visits += 1
            visited.value += reward


def mine_negatives(
    row: Mapping[str, Any],
    *,
    layers: Sequence[str] = LAYERS,
    iterations: int = 100,
    depth: int = 3,
    c: float = 1.4,
    seed: int = 0,
    top_k: int = 10,
    operators: Sequence[CorruptionOperator] = OPERATORS,
) -> list[MinedNegative]:
    """The `top_k` highest-reward corrupted rows found by `iterations` MCTS iterations from the valid `row`.

    Ties are broken by shorter paths, then by content hash, so the result depends only on the row and the seed.
    """
    if depth < 1 or iterations < 0:
        msg = f"`depth` must be >= 1 and `iterations` >= 0, got {depth} and {iterations}"
        raise ValueError(msg)
    search = _Search(row, layers=layers, depth=depth, c=c, seed=seed, operators=operators)
    for _ in range(iterations):
        search.iterate()
    ranked = sorted(search.found.items(), key=lambda item: (-item[1].reward, len(item[1].path), item[0]))
    return [negative for _, negative in ranked[:top_k]]
