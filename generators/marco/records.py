"""The MARCO dataset schema and the conversion of trajectories to rows (one row per trajectory)."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import pyarrow as pa

from synth.generators.marco.trajectory import Trajectory, Turn
from synth.validators.marco.evaluator import PropertyChange

CHANGE_TYPE = pa.struct(
    [
        ("key", pa.string()),
        ("source", pa.float64()),
        ("value", pa.float64()),
        ("gain", pa.float64()),
        ("improved", pa.bool_()),
        ("meets_threshold", pa.bool_()),
        ("scored", pa.bool_()),
    ]
)
TURN_TYPE = pa.struct(
    [
        ("turn", pa.int32()),
        ("response", pa.string()),
        ("answer", pa.string()),
        ("move", pa.string()),
        ("base", pa.string()),
        ("canonical", pa.string()),
        ("valid", pa.bool_()),
        ("invalid_kind", pa.string()),
        ("invalid_reason", pa.string()),
        ("similarity", pa.float64()),
        ("success", pa.bool_()),
        ("properties", pa.list_(CHANGE_TYPE)),
        ("reward", pa.float64()),
        ("feedback", pa.string()),
    ]
)
MARCO_SCHEMA = pa.schema(
    [
        ("task", pa.string()),
        ("setting", pa.string()),
        ("source_id", pa.string()),
        ("source_smiles", pa.string()),
        ("instruction", pa.string()),
        ("properties", pa.list_(pa.string())),
        ("unavailable", pa.list_(pa.string())),
        ("protocol", pa.string()),
        ("fragments", pa.string()),
        ("proposer", pa.string()),
        ("mode", pa.string()),
        ("budget", pa.int32()),
        ("sample", pa.int32()),
        ("turns", pa.list_(TURN_TYPE)),
        ("n_turns", pa.int32()),
        ("trajectory_return", pa.float64()),
        ("success", pa.bool_()),
        ("stop_reason", pa.string()),
        ("final_smiles", pa.string()),
        ("picked_turn", pa.int32()),
        ("picked_smiles", pa.string()),
        ("picked_similarity", pa.float64()),
        ("group_size", pa.int32()),
        ("group_mean", pa.float64()),
        ("group_std", pa.float64()),
        ("advantage", pa.float64()),
        ("rdkit_version", pa.string()),
    ]
)


def change_record(change: PropertyChange) -> dict[str, Any]:
    """One property change as a `CHANGE_TYPE` dict."""
    return {
        "key": change.key,
        "source": change.source,
        "value": change.value,
        "gain": change.gain,
        "improved": change.improved,
        "meets_threshold": change.meets_threshold,
        "scored": change.scored,
    }


def turn_record(turn: Turn) -> dict[str, Any]:
    """One graded turn as a `TURN_TYPE` dict."""
    graded = turn.evaluation
    return {
        "turn": turn.index,
        "response": turn.response,
        "answer": turn.answer,
        "move": turn.move,
        "base": turn.base,
        "canonical": graded.canonical,
        "valid": graded.valid,
        "invalid_kind": graded.invalid_kind,
        "invalid_reason": graded.invalid_reason,
        "similarity": graded.similarity,
        "success": graded.success,
        "properties": [change_record(c) for c in graded.changes],
        "reward": turn.reward,
        "feedback": turn.feedback,
    }


def trajectory_fields(trajectory: Trajectory) -> dict[str, Any]:
    """The per-trajectory columns (turns, return, outcome, picked turn)."""
    picked = trajectory.picked()
    return {
        "turns": [turn_record(t) for t in trajectory.turns],
        "n_turns": len(trajectory.turns),
        "trajectory_return": trajectory.total_return,
        "success": trajectory.success,
        "stop_reason": trajectory.stop_reason,
        "final_smiles": trajectory.final.evaluation.canonical,
        "picked_turn": picked.index if picked else None,
        "picked_smiles": picked.evaluation.canonical if picked else None,
        "picked_similarity": picked.evaluation.similarity if picked else None,
    }


def group_fields(returns: Sequence[float]) -> list[dict[str, Any]]:
    """GRPO columns for each trajectory of one group."""
    from synth.validators.marco.reward import group_advantages

    mean, std, advantages = group_advantages(returns)
    return [
        {"group_size": len(returns), "group_mean": mean, "group_std": std, "advantage": advantage}
        for advantage in advantages
    ]
