"""The OptiScribe verifiers: SCIP re-solve, OR-Tools cross-check, instruction following, reward and triviality.

Each is pure: it reads the row's model text and recorded settings and recomputes everything, so `synth verify`
re-solves every kept row and must reproduce the recorded status and node count.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any, ClassVar

import pyarrow as pa

from synth.core.records import Verdict
from synth.core.steps import Verifier
from synth.validators.optiscribe.crosscheck import CrossCheckSettings, agreement, crosscheck_model_text
from synth.validators.optiscribe.difficulty import band_from_asked, effort_violations
from synth.validators.optiscribe.grammar import parse_instruction
from synth.validators.optiscribe.reading import ModelTextError, read_model_text
from synth.validators.optiscribe.reward import (
    RewardSettings,
    estimated_nodes,
    hardness_score,
    is_trivial,
    request_reward,
)
from synth.validators.optiscribe.scip import ScipSettings, ScipStats, solve_model_text
from synth.validators.optiscribe.spec import SpecError
from synth.validators.optiscribe.structure import instruction_violations, measure_structure

SCIP_SCORES = (
    "feasible",
    "nodes",
    "runs",
    "primal_bound",
    "gap",
    "precut_gap",
    "postcut_gap",
    "treesize_estimate",
    "deterministic_time",
    "lp_iterations",
    "variables",
    "constraints",
)


def _json(value: Any) -> str:
    return json.dumps(value, sort_keys=True, separators=(",", ":"))


def _scip_scores(stats: ScipStats) -> dict[str, float]:
    values = stats.to_dict()
    values["feasible"] = float(stats.feasible)
    return {name: None if values[name] is None else float(values[name]) for name in SCIP_SCORES}  # type: ignore[misc]


def _scip_reasons(stats: ScipStats, row: dict[str, Any]) -> list[str]:
    reasons = []
    if stats.status == "infeasible":
        reasons.append("infeasible")
    elif not stats.feasible:
        reasons.append(f"no_solution: no feasible solution (status {stats.status})")
    if stats.status == "timelimit":
        reasons.append(
            "timelimit: stopped by the wall-clock cap before the node cap, so its node count does not reproduce"
        )
    if row.get("solve_status") is not None and stats.status != row["solve_status"]:
        reasons.append(f"status_mismatch: status {stats.status} differs from the recorded {row['solve_status']}")
    if row.get("solve_nodes") is not None and stats.nodes != row["solve_nodes"]:
        reasons.append(f"nodes_mismatch: {stats.nodes} nodes differ from the recorded {row['solve_nodes']}")
    return reasons


@dataclass(frozen=True, kw_only=True)
class ScipVerifier(Verifier):
    """Re-solve each row's model with its recorded SCIP settings; pass feasible rows that reproduce the record."""

    requires: ClassVar[tuple[tuple[str, str], ...]] = (("pyscipopt", "synth[optim]"),)
    reads: ClassVar[tuple[str, ...]] = ("model_text", "model_format", "scip_settings", "solve_status", "solve_nodes")
    scores: ClassVar[tuple[str, ...]] = SCIP_SCORES

    def verify(self, table: pa.Table) -> list[Verdict]:
        verdicts = []
        for row in table.select(list(self.reads)).to_pylist():
            settings = ScipSettings(**json.loads(row["scip_settings"]))
            try:
                stats = solve_model_text(row["model_text"], fmt=row["model_format"], settings=settings)
            except ModelTextError as error:
                verdicts.append(Verdict(False, (f"unreadable_model: {error}",), dict.fromkeys(SCIP_SCORES)))
                continue
            reasons = _scip_reasons(stats, row)
            verdicts.append(Verdict(not reasons, tuple(reasons), _scip_scores(stats)))
        return verdicts


@dataclass(frozen=True, kw_only=True)
class OrtoolsVerifier(Verifier):
    """Solve small instances again with OR-Tools (HiGHS by default) and fail rows where the solvers disagree."""

    requires: ClassVar[tuple[tuple[str, str], ...]] = (("ortools", "synth[optim]"), ("pyscipopt", "synth[optim]"))
    reads: ClassVar[tuple[str, ...]] = (
        "model_text",
        "model_format",
        "solve_status",
        "scip_feasible",
        "scip_primal_bound",
    )
    scores: ClassVar[tuple[str, ...]] = ("checked", "agrees", "objective")
    settings: CrossCheckSettings = field(default_factory=CrossCheckSettings)

    def verify(self, table: pa.Table) -> list[Verdict]:
        verdicts = []
        for row in table.select(list(self.reads)).to_pylist():
            try:
                check = crosscheck_model_text(row["model_text"], fmt=row["model_format"], settings=self.settings)
            except ModelTextError as error:
                verdicts.append(Verdict(False, (f"unreadable_model: {error}",), {"checked": 0.0}))
                continue
            checked = check.status not in {"skipped", "not_solved"}
            reason = agreement(
                check,
                scip_status=row["solve_status"],
                scip_feasible=bool(row["scip_feasible"]),
                scip_objective=row["scip_primal_bound"],
            )
            scores = {
                "checked": float(checked),
                "agrees": (0.0 if reason else 1.0) if checked else None,
                "objective": check.objective,
            }
            verdicts.append(Verdict(reason is None, (reason,) if reason else (), scores))
        return verdicts


def asked_by_instruction(row: Mapping[str, Any]) -> tuple[dict[str, Any] | None, list[str]]:
    """What the row's instruction asks, re-read by the grammar, and reasons it cannot be checked: the instruction
    does not parse (the grammar's code, e.g. `invalid_size`), or the row's family or `asked` say otherwise."""
    try:
        asked = parse_instruction(row["instruction"]).asked()
    except SpecError as error:
        return None, [f"{error.code}: {error}"]
    reasons = []
    if row["family"] != asked["family"]:
        reasons.append(f"family_mismatch: the row is {row['family']}, its instruction asks {asked['family']}")
    if json.loads(row["asked"]) != asked:
        stored = row["asked"]
        reasons.append(f"asked_mismatch: the row's `asked` {stored} is not what its instruction asks {_json(asked)}")
    return asked, reasons


@dataclass(frozen=True, kw_only=True)
class InstructionVerifier(Verifier):
    """Re-read each row's instruction, measure the model's sizes and density from its variables and rows, and pass
    rows whose model is inside what the instruction asks; an asked difficulty or node target is checked against the
    row's recorded SCIP node count (which the `scip` verifier reproduces)."""

    requires: ClassVar[tuple[tuple[str, str], ...]] = (("pyscipopt", "synth[optim]"),)
    reads: ClassVar[tuple[str, ...]] = (
        "instruction",
        "family",
        "model_text",
        "model_format",
        "asked",
        "solve_status",
        "solve_nodes",
    )
    scores: ClassVar[tuple[str, ...]] = ("followed", "violations")

    def verify(self, table: pa.Table) -> list[Verdict]:
        verdicts = []
        for row in table.select(list(self.reads)).to_pylist():
            try:
                model = read_model_text(row["model_text"], fmt=row["model_format"])
            except ModelTextError as error:
                verdicts.append(Verdict(False, (f"unreadable_model: {error}",), {"followed": 0.0}))
                continue
            asked, reasons = asked_by_instruction(row)
            if asked is not None:
                reasons += instruction_violations(measure_structure(model, asked["family"]), asked)
                reasons += effort_violations(
                    band_from_asked(asked), status=row["solve_status"], nodes=row["solve_nodes"]
                )
            scores = {"followed": float(not reasons), "violations": float(len(reasons))}
            verdicts.append(Verdict(not reasons, tuple(reasons), scores))
        return verdicts


@dataclass(frozen=True, kw_only=True)
class RewardVerifier(Verifier):
    """Recompute the reward (for the asked band) from the re-solve; fail trivial rows (unless easy was asked) and
    rows whose recorded reward differs."""

    reads: ClassVar[tuple[str, ...]] = (
        "reward",
        "asked",
        "solve_status",
        "scip_feasible",
        "scip_nodes",
        "scip_treesize_estimate",
        "scip_postcut_gap",
    )
    scores: ClassVar[tuple[str, ...]] = ("reward", "hardness")
    settings: RewardSettings = field(default_factory=RewardSettings)

    def verify(self, table: pa.Table) -> list[Verdict]:
        verdicts = []
        for row in table.select(list(self.reads)).to_pylist():
            nodes = row["scip_nodes"]
            if nodes is None:
                verdicts.append(Verdict(False, ("not_solved",), {"reward": 0.0, "hardness": None}))
                continue
            stats = {
                "status": row["solve_status"],
                "feasible": bool(row["scip_feasible"]),
                "nodes": nodes,
                "treesize_estimate": row["scip_treesize_estimate"],
                "postcut_gap": row["scip_postcut_gap"],
            }
            band = band_from_asked(json.loads(row["asked"]))
            reward = request_reward(stats, band, self.settings)
            reasons = []
            if is_trivial(nodes, row["scip_postcut_gap"]) and (band is None or band.low > 1):
                reasons.append("trivial: at most 1 node and zero post-cut gap")
            if row["reward"] is not None and abs(reward - row["reward"]) > 1e-9:
                reasons.append(f"reward_mismatch: reward {reward:.6g} differs from the recorded {row['reward']:.6g}")
            hardness = hardness_score(estimated_nodes(stats, self.settings), row["scip_postcut_gap"], self.settings)
            scores = {"reward": reward, "hardness": hardness}
            verdicts.append(Verdict(not reasons, tuple(reasons), scores))
        return verdicts
