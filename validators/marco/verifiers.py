"""The MARCO verifier: recompute every turn of a trajectory row from its answer SMILES and compare exactly.

For each turn it re-extracts the answer from the response, re-parses it, and recomputes validity (and the invalid
kind), the canonical SMILES, each property's source and candidate values, gains and flags, the similarity,
success, the shaped reward and finally the trajectory return, with the row's protocol and fragment policy. A row
passes only if every recomputed value equals the stored one.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any, ClassVar

import pyarrow as pa

from synth.core.records import Verdict
from synth.core.steps import Verifier
from synth.validators.marco.answers import extract_smiles
from synth.validators.marco.evaluator import Evaluation, InvalidSourceError, MoleculeEvaluator, SourceProfile
from synth.validators.marco.reward import RewardSettings, turn_reward

SHOWN = 5
TURN_FIELDS = ("canonical", "valid", "invalid_kind", "similarity", "success", "reward")
CHANGE_FIELDS = ("source", "value", "gain", "improved", "meets_threshold", "scored")


def _turn_values(graded: Evaluation, reward: float) -> dict[str, Any]:
    return {
        "canonical": graded.canonical,
        "valid": graded.valid,
        "invalid_kind": graded.invalid_kind,
        "similarity": graded.similarity,
        "success": graded.success,
        "reward": reward,
    }


def _compare_turn(stored: Mapping[str, Any], graded: Evaluation, reward: float) -> list[str]:
    problems = []
    fresh = _turn_values(graded, reward)
    for name in TURN_FIELDS:
        if stored[name] != fresh[name]:
            detail = f"turn {stored['turn']}: {name} {stored[name]!r} stored, {fresh[name]!r} recomputed"
            problems.append(f"turn_mismatch: {detail}")
    changes = {c.key: c for c in graded.changes}
    for change in stored["properties"]:
        again = changes.get(change["key"])
        for name in CHANGE_FIELDS:
            value = getattr(again, name) if again is not None else None
            if change[name] != value:
                detail = f"turn {stored['turn']}: {change['key']} {name} {change[name]!r} stored, {value!r} recomputed"
                problems.append(f"property_mismatch: {detail}")
    return problems


def recheck_trajectory(row: Mapping[str, Any], *, rewards: RewardSettings) -> tuple[list[str], float]:
    """Mismatches (`code: detail` reasons) between the stored turns and a recomputation from their answers, and the
    recomputed return."""
    evaluator = MoleculeEvaluator(
        properties=tuple(row["properties"]), protocol=row["protocol"], fragments=row["fragments"]
    )
    try:
        source: SourceProfile = evaluator.profile(row["source_smiles"])
    except InvalidSourceError as error:
        return [f"invalid_source:{error.kind}: {error}"], 0.0
    problems: list[str] = []
    seen = [source.canonical]
    total = 0.0
    for stored in row["turns"]:
        if extract_smiles(stored["response"]) != stored["answer"]:
            problems.append(f"answer_mismatch: turn {stored['turn']}: the stored answer is not the one in the response")
        graded = evaluator.evaluate(stored["answer"], source)
        reward = turn_reward(graded, seen=seen, settings=rewards)
        total += reward
        problems += _compare_turn(stored, graded, reward)
        if graded.canonical:
            seen.append(graded.canonical)
    if row["trajectory_return"] != total:
        problems.append(f"return_mismatch: return {row['trajectory_return']!r} stored, {total!r} recomputed")
    return problems, total


@dataclass(frozen=True, kw_only=True)
class MarcoEvaluatorVerifier(Verifier):
    """Pass a trajectory only if every turn's grade, reward and the return recompute identically."""

    reads: ClassVar[tuple[str, ...]] = (
        "source_smiles",
        "properties",
        "protocol",
        "fragments",
        "turns",
        "trajectory_return",
        "success",
    )
    scores: ClassVar[tuple[str, ...]] = ("mismatches", "turns", "valid_fraction", "success")
    rewards: RewardSettings = field(default_factory=RewardSettings)

    def verify(self, table: pa.Table) -> list[Verdict]:
        verdicts = []
        for row in table.select(list(self.reads)).to_pylist():
            problems, _ = recheck_trajectory(row, rewards=self.rewards)
            turns = row["turns"]
            valid = sum(t["valid"] for t in turns)
            more = f"truncated: {len(problems) - SHOWN} more mismatches"
            shown = problems if len(problems) <= SHOWN else [*problems[:SHOWN], more]
            verdicts.append(
                Verdict(
                    not problems,
                    tuple(shown),
                    {
                        "mismatches": float(len(problems)),
                        "turns": float(len(turns)),
                        "valid_fraction": valid / len(turns) if turns else 0.0,
                        "success": float(bool(row["success"])),
                    },
                )
            )
        return verdicts
