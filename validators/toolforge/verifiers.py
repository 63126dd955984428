"""ToolForge's multi-layer validation as verifiers: one per layer, each adding its own verdict columns.

Every verifier scores `problems` (the number of reasons) and `pass_fraction` (the share of the layer's units —
messages, calls, results or turns — without a problem); the judge verifier scores the share of assistant turns
scoring 1 and the LLM calls it made. `TOOLFORGE_BASELINE_LAYERS` are the layers matching ToolForge's original 9
rule checks, for the before/after audit.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any, ClassVar, Literal

import pyarrow as pa

from synth.core.records import Verdict
from synth.core.steps import Verifier
from synth.validators.toolforge.judge import LLMJudge, check_judge, judge_row, scripted_judge_backend
from synth.validators.toolforge.rules import LAYER_REPORTS, Report, reason, run_report

SHOWN = 5
LAYERS: tuple[str, ...] = ("structure", "pairing", "schema", "grounding", "answer", "evidence", "plan", "leak", "judge")
TOOLFORGE_BASELINE_LAYERS: tuple[str, ...] = ("structure", "pairing", "schema", "answer", "evidence", "plan")
"""ToolForge's 9 rule checks mapped onto our layers: format/content/non-empty → structure, answer → answer,
tool–RAG and reference → evidence, argument modification and tool consistency → plan, tool bank → schema (and
pairing, implicit in its role patterns). No grounding, no leak check, no reflection-aware judge."""
JudgeBackend = Literal["rule", "scripted-llm"]


def _shown(reasons: Sequence[str]) -> tuple[str, ...]:
    if len(reasons) <= SHOWN:
        return tuple(reasons)
    return (*reasons[:SHOWN], reason("truncated", f"{len(reasons) - SHOWN} more reasons"))


@dataclass(frozen=True, kw_only=True)
class ToolForgeLayerVerifier(Verifier):
    """One rule layer as a verifier: `layer` names its report in `rules.LAYER_REPORTS`."""

    layer: ClassVar[str]
    scores: ClassVar[tuple[str, ...]] = ("problems", "pass_fraction")

    def report(self, row: Mapping[str, Any]) -> Report:
        """The layer's report on one row."""
        return run_report(LAYER_REPORTS[self.layer], row)

    def verify(self, table: pa.Table) -> list[Verdict]:
        verdicts = []
        for row in table.select(list(self.reads)).to_pylist():
            report = self.report(row)
            scores = {"problems": float(len(report.reasons)), "pass_fraction": report.pass_fraction}
            verdicts.append(Verdict(not report.reasons, _shown(report.reasons), scores))
        return verdicts


@dataclass(frozen=True, kw_only=True)
class StructureVerifier(ToolForgeLayerVerifier):
    """System, user turns, rounds of calls followed by their results, an answer closing each user turn."""

    layer: ClassVar[str] = "structure"
    reads: ClassVar[tuple[str, ...]] = ("messages", "plan", "user_turns")


@dataclass(frozen=True, kw_only=True)
class PairingVerifier(ToolForgeLayerVerifier):
    """Each call answered by exactly one tool message with its id and name, in call order."""

    layer: ClassVar[str] = "pairing"
    reads: ClassVar[tuple[str, ...]] = ("messages",)


@dataclass(frozen=True, kw_only=True)
class SchemaVerifier(ToolForgeLayerVerifier):
    """Each call names an offered tool and its arguments validate strictly against its schema."""

    layer: ClassVar[str] = "schema"
    reads: ClassVar[tuple[str, ...]] = ("messages", "tools")


@dataclass(frozen=True, kw_only=True)
class GroundingVerifier(ToolForgeLayerVerifier):
    """String arguments grounded in what the dialogue has shown; the final answer observed."""

    layer: ClassVar[str] = "grounding"
    reads: ClassVar[tuple[str, ...]] = ("messages", "plan", "tools", "question", "qtype")


@dataclass(frozen=True, kw_only=True)
class AnswerVerifier(ToolForgeLayerVerifier):
    """Answer turns equal the seed answer (or an alias) and the planned turn answers."""

    layer: ClassVar[str] = "answer"
    reads: ClassVar[tuple[str, ...]] = ("messages", "answer", "answer_aliases", "turn_answers")


@dataclass(frozen=True, kw_only=True)
class EvidenceVerifier(ToolForgeLayerVerifier):
    """Results equal the planned observations; gold calls show every supporting fact."""

    layer: ClassVar[str] = "evidence"
    reads: ClassVar[tuple[str, ...]] = ("messages", "plan", "supporting")


@dataclass(frozen=True, kw_only=True)
class PlanVerifier(ToolForgeLayerVerifier):
    """Calls realise the planned tools, rounds and repairs."""

    layer: ClassVar[str] = "plan"
    reads: ClassVar[tuple[str, ...]] = ("messages", "plan", "tools")


@dataclass(frozen=True, kw_only=True)
class LeakVerifier(ToolForgeLayerVerifier):
    """No gold in failed results; no answer named before it is observed."""

    layer: ClassVar[str] = "leak"
    reads: ClassVar[tuple[str, ...]] = ("messages", "plan", "supporting", "answer")


@dataclass(frozen=True, kw_only=True)
class JudgeVerifier(ToolForgeLayerVerifier):
    """Per-turn 0/1 judge (rule judge by default, or an `LLMJudge`); passes only if every turn scores 1."""

    layer: ClassVar[str] = "judge"
    reads: ClassVar[tuple[str, ...]] = ("question", "messages", "plan")
    scores: ClassVar[tuple[str, ...]] = ("problems", "pass_fraction", "llm_calls")
    llm: LLMJudge | None = None

    def verify(self, table: pa.Table) -> list[Verdict]:
        rows = table.select(list(self.reads)).to_pylist()
        judgements = self.llm.judge(rows) if self.llm is not None else [judge_row(row) for row in rows]
        calls = 1.0 if self.llm is not None else 0.0
        verdicts = []
        for judgement in judgements:
            turns = judgement.turn_scores
            scores = {
                "problems": float(len(judgement.reasons)),
                "pass_fraction": sum(turns) / len(turns) if turns else 0.0,
                "llm_calls": calls,
            }
            verdicts.append(Verdict(bool(judgement.score), _shown(judgement.reasons), scores))
        return verdicts


VERIFIER_CLASSES: dict[str, type[ToolForgeLayerVerifier]] = {
    cls.layer: cls
    for cls in (
        StructureVerifier,
        PairingVerifier,
        SchemaVerifier,
        GroundingVerifier,
        AnswerVerifier,
        EvidenceVerifier,
        PlanVerifier,
        LeakVerifier,
        JudgeVerifier,
    )
}


def build_verifiers(judge_backend: JudgeBackend = "rule") -> dict[str, ToolForgeLayerVerifier]:
    """One verifier per layer (named `toolforge_<layer>`), the judge on the rule or the scripted LLM backend."""
    if judge_backend not in ("rule", "scripted-llm"):
        msg = f"`judge_backend` must be 'rule' or 'scripted-llm', got {judge_backend!r}"
        raise ValueError(msg)
    verifiers: dict[str, ToolForgeLayerVerifier] = {}
    for layer in LAYERS:
        if layer == "judge" and judge_backend == "scripted-llm":
            verifiers[layer] = JudgeVerifier(name="toolforge_judge", llm=LLMJudge(scripted_judge_backend()))
        else:
            verifiers[layer] = VERIFIER_CLASSES[layer](name=f"toolforge_{layer}")
    return verifiers


LAYER_CHECKS: dict[str, Callable[[Mapping[str, Any]], list[str]]] = {
    **{layer: (lambda row, report=report: run_report(report, row).reasons) for layer, report in LAYER_REPORTS.items()},
    "judge": check_judge,
}


def validate_row(row: Mapping[str, Any], layers: Sequence[str] = LAYERS) -> dict[str, list[str]]:
    """Each requested layer's reasons on one row (rule judge); the row is accepted when every list is empty."""
    unknown = [layer for layer in layers if layer not in LAYER_CHECKS]
    if unknown:
        msg = f"unknown `layers` {unknown}; choose from {list(LAYERS)}"
        raise ValueError(msg)
    return {layer: LAYER_CHECKS[layer](row) for layer in layers}
