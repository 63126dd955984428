"""The OptiScribe pipeline generator: self-play rounds of one shard, one row per proposed instance.

Each shard runs its own challenger from a fresh policy, seeded by (run seed, shard). A row holds the
instruction, the spec and what the instruction asked (JSON), the instance seed and the mutations applied after
building (`instance_mutations`, JSON [[seed, sigma], ...]; empty unless the row comes from a mutation round), so
(spec, seed, mutations) rebuilds the model, which the row holds as LP text, the SCIP settings and
statistics of the self-play solve (without wall time), the reward, the round, the curriculum level and the
policy state the proposal was drawn from (for the `llm` challenger: its backend, model and sampling, as JSON; an
LP answer has no spec). Specs the challenger cannot build and refused LLM answers are rejected as `spec:<code>`
(the stable code of the spec error or of `read_challenger_answer`) with the reason as detail and the proposal's
seed, challenger and policy (the model, for `llm`) as values.
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from dataclasses import dataclass, field
from functools import cached_property
from typing import Any, ClassVar

import pyarrow as pa

from synth.core.llm import LLMBackend
from synth.core.steps import GeneratedBatch, Generator, ShardContext
from synth.generators.optiscribe.selfplay import Candidate, SelfPlaySettings, iterate_selfplay, parse_curriculum

OPTISCRIBE_SCHEMA = pa.schema(
    [
        ("instruction", pa.string()),
        ("family", pa.string()),
        ("spec", pa.string()),
        ("asked", pa.string()),
        ("instance_seed", pa.int64()),
        ("instance_mutations", pa.string()),
        ("model_format", pa.string()),
        ("model_text", pa.string()),
        ("scip_settings", pa.string()),
        ("solve_status", pa.string()),
        ("solve_nodes", pa.int64()),
        ("solve_stats", pa.string()),
        ("reward", pa.float64()),
        ("challenger", pa.string()),
        ("round", pa.int32()),
        ("level", pa.int32()),
        ("policy", pa.string()),
    ]
)


def _json(value: Any) -> str:
    return json.dumps(value, sort_keys=True, separators=(",", ":"))


def candidate_row(candidate: Candidate, *, settings: SelfPlaySettings) -> dict[str, Any]:
    """The dataset row of one solved candidate (see `OPTISCRIBE_SCHEMA`; `spec` is null for an LP answer)."""
    if candidate.stats is None or candidate.model_text is None:
        msg = f"candidate of round {candidate.round} was not built: {candidate.error}"
        raise ValueError(msg)
    return {
        "instruction": candidate.instruction,
        "family": candidate.request.family,
        "spec": None if candidate.spec is None else candidate.spec.to_json(),
        "asked": _json(candidate.request.asked()),
        "instance_seed": candidate.seed,
        "instance_mutations": _json([m.to_list() for m in candidate.mutations]),
        "model_format": "lp",
        "model_text": candidate.model_text,
        "scip_settings": _json(settings.scip.to_dict()),
        "solve_status": candidate.stats.status,
        "solve_nodes": candidate.stats.nodes,
        "solve_stats": _json(candidate.stats.to_dict()),
        "reward": candidate.reward,
        "challenger": settings.challenger,
        "round": candidate.round,
        "level": candidate.level,
        "policy": candidate.policy,
    }


@dataclass(frozen=True, kw_only=True)
class OptiScribeGenerator(Generator):
    """Self-play over a curriculum of instructions (easiest first): `rounds` rounds of `candidates` proposals."""

    schema: ClassVar[pa.Schema] = OPTISCRIBE_SCHEMA
    requires: ClassVar[tuple[tuple[str, str], ...]] = (("pyscipopt", "synth[optim]"),)
    curriculum: tuple[str, ...]
    settings: SelfPlaySettings = field(default_factory=SelfPlaySettings)

    def describe_input(self) -> dict[str, Any]:
        """The curriculum and the challenger (with the `llm` challenger's backend, model and sampling)."""
        described: dict[str, Any] = {"curriculum": list(self.curriculum), "challenger": self.settings.challenger}
        if self.settings.challenger == "llm":
            described["llm"] = json.loads(self.settings.llm.provenance())
        return described

    @cached_property
    def backend(self) -> LLMBackend | None:
        """The `llm` challenger's backend, built once per generator and process (None for other challengers)."""
        return self.settings.llm.build() if self.settings.challenger == "llm" else None

    def generate(self, ctx: ShardContext) -> Iterator[GeneratedBatch]:
        """One batch per self-play round."""
        parse_curriculum(self.curriculum)
        seed = int(ctx.rng("selfplay").integers(2**62))
        for candidates, _ in iterate_selfplay(self.curriculum, settings=self.settings, seed=seed, backend=self.backend):
            batch = GeneratedBatch()
            for candidate in candidates:
                parents = [f"round:{candidate.round}"]
                if candidate.error is not None:
                    batch.reject(
                        f"spec:{candidate.error_code}",
                        detail=candidate.error,
                        values={
                            "instruction": candidate.instruction,
                            "round": candidate.round,
                            "instance_seed": candidate.seed,
                            "instance_mutations": _json([m.to_list() for m in candidate.mutations]),
                            "challenger": self.settings.challenger,
                            "policy": candidate.policy,
                        },
                        parents=parents,
                    )
                    continue
                batch.add(candidate_row(candidate, settings=self.settings), parents=parents)
            yield batch
