"""The MARCO generator: K trajectories per (source, instruction setting), one row each, with GRPO statistics.

A group (the K trajectories of one source and setting) stays in one shard, so its advantages are computed
from complete groups. Each trajectory draws from its own generator, seeded from (run seed, shard, source id,
setting, sample index).
"""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass, field
from functools import cached_property
from random import Random
from typing import Any, ClassVar, Literal

import pyarrow as pa

from synth.core.llm_backends import LLMBackendConfig
from synth.core.steps import GeneratedBatch, Generator, ShardContext
from synth.generators.marco.proposers import LLMProposer, ProposalState, Proposer, RandomEditProposer, ScriptedProposer
from synth.generators.marco.records import MARCO_SCHEMA, group_fields, trajectory_fields
from synth.generators.marco.sources import MarcoSource, read_sources
from synth.generators.marco.tasks import Setting, get_task
from synth.generators.marco.trajectory import Mode, TrajectorySettings, run_trajectories
from synth.validators.marco.evaluator import InvalidSourceError, MoleculeEvaluator, SuccessProtocol
from synth.validators.marco.molecules import FragmentPolicy
from synth.validators.marco.reward import RewardSettings

ProposerKind = Literal["scripted", "random", "llm"]
PROPOSERS: tuple[ProposerKind, ...] = ("scripted", "random", "llm")


def make_proposer(kind: ProposerKind, *, mode: Mode, llm: MarcoLLMSettings | None = None) -> Proposer:
    """The proposer of a config: `llm` asks the backend of `llm` (default: the scripted random-edit policy)."""
    if kind == "scripted":
        return ScriptedProposer(guided=mode == "feedback")
    if kind == "random":
        return RandomEditProposer()
    if kind == "llm":
        from synth.generators.marco.llm import scripted_edit_backend

        llm = llm or MarcoLLMSettings()
        backend = llm.backend.build(scripted=scripted_edit_backend())
        return LLMProposer(
            backend,
            model=llm.backend.model or "scripted",
            temperature=llm.temperature,
            max_tokens=llm.max_tokens,
            guided=mode == "feedback",
        )
    msg = f"unknown `proposer` {kind!r}; choose from {list(PROPOSERS)}"
    raise ValueError(msg)


@dataclass(frozen=True)
class MarcoLLMSettings:
    """The LLM proposer's backend block and sampling."""

    backend: LLMBackendConfig = field(default_factory=LLMBackendConfig)
    temperature: float = 1.0
    max_tokens: int = 64


@dataclass(frozen=True, kw_only=True)
class MarcoTrajectoryGenerator(Generator):
    """Trajectories on the first `sources` sources of `task`, `group_size` per source and setting."""

    schema: ClassVar[pa.Schema] = MARCO_SCHEMA
    task: str = "BPQ"
    settings: tuple[Setting, ...] = ("seen", "unseen")
    sources: int | None = 50
    group_size: int = 4
    budget: int = 5
    mode: Mode = "feedback"
    proposer: ProposerKind = "scripted"
    protocol: SuccessProtocol = "gellmo"
    fragments: FragmentPolicy = "reject"
    rewards: RewardSettings = field(default_factory=RewardSettings)
    llm: MarcoLLMSettings = field(default_factory=MarcoLLMSettings)

    @cached_property
    def proposer_impl(self) -> Proposer:
        """The proposer (its backend is built once per generator and process)."""
        return make_proposer(self.proposer, mode=self.mode, llm=self.llm)

    @cached_property
    def evaluator(self) -> MoleculeEvaluator:
        """The evaluator for the task's properties."""
        return MoleculeEvaluator(
            properties=get_task(self.task).properties, protocol=self.protocol, fragments=self.fragments
        )

    def chosen_sources(self) -> tuple[MarcoSource, ...]:
        """The sources this run uses (file order)."""
        sources = read_sources(self.task)
        return sources if self.sources is None else sources[: self.sources]

    def describe_input(self) -> dict[str, Any]:
        """Task, source file and count, unavailable predictors."""
        from rdkit import rdBase

        return {
            "task": self.task,
            "sources": len(self.chosen_sources()),
            "settings": list(self.settings),
            "unavailable_properties": list(self.evaluator.unavailable()),
            "rdkit_version": rdBase.rdkitVersion,
            **({"llm": self.llm.backend.model_dump(exclude_none=True)} if self.proposer == "llm" else {}),
        }

    def _starts(self, source: MarcoSource, setting: Setting, ctx: ShardContext) -> list[tuple[ProposalState, Random]]:
        """The `group_size` starting states of one (source, setting) group, each with its own generator."""
        task = get_task(self.task)
        instruction = task.instruction(source.smiles, setting=setting, template=source.template(setting))
        state = ProposalState(task, setting, instruction, self.evaluator.profile(source.smiles))
        return [
            (state, Random(int(ctx.rng("trajectory", source.source_id, setting, sample).integers(2**63))))
            for sample in range(self.group_size)
        ]

    def _rows(self, source: MarcoSource, setting: Setting, states: list[ProposalState], trajectories: list) -> list:
        from rdkit import rdBase

        rows = []
        for sample, (state, trajectory) in enumerate(zip(states, trajectories, strict=True)):
            rows.append(
                {
                    "task": state.task.name,
                    "setting": setting,
                    "source_id": source.source_id,
                    "source_smiles": state.source.canonical,
                    "instruction": state.instruction,
                    "properties": list(state.task.properties),
                    "unavailable": list(self.evaluator.unavailable()),
                    "protocol": self.protocol,
                    "fragments": self.fragments,
                    "proposer": self.proposer,
                    "mode": self.mode,
                    "budget": self.budget,
                    "sample": sample,
                    **trajectory_fields(trajectory),
                    "rdkit_version": rdBase.rdkitVersion,
                }
            )
        for row, extra in zip(rows, group_fields([r["trajectory_return"] for r in rows]), strict=True):
            row.update(extra)
        return rows

    def generate(self, ctx: ShardContext) -> Iterator[GeneratedBatch]:
        """One batch per (source, setting) group of this shard; all its trajectories run in lockstep."""
        items = ctx.partition([(s, setting) for s in self.chosen_sources() for setting in self.settings])
        groups: list[tuple[MarcoSource, Setting, list[tuple[ProposalState, Random]] | InvalidSourceError]] = []
        for source, setting in items:
            try:
                groups.append((source, setting, self._starts(source, setting, ctx)))
            except InvalidSourceError as error:
                groups.append((source, setting, error))
        starts = [start for *_, group in groups if not isinstance(group, InvalidSourceError) for start in group]
        settings = TrajectorySettings(budget=self.budget, mode=self.mode, rewards=self.rewards)
        trajectories = iter(
            run_trajectories(starts, proposer=self.proposer_impl, evaluator=self.evaluator, settings=settings)
        )
        for source, setting, group in groups:
            batch = GeneratedBatch()
            if isinstance(group, InvalidSourceError):
                batch.reject(
                    f"invalid_source:{group.kind}",
                    detail=str(group),
                    values={"source_id": source.source_id},
                    parents=[source.source_id],
                )
            else:
                done = [next(trajectories) for _ in group]
                for row in self._rows(source, setting, [state for state, _ in group], done):
                    batch.add(row, parents=[source.source_id])
            yield batch
