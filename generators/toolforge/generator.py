"""The ToolForge generator: seeds → paradigm → case scripts → plan (tools, calls, observations) → messages.

Seeds are split over shards in file order; a seed's dialogues stay in its shard. Each dialogue draws from its
own generator seeded from (run seed, shard, seed id, case number), so rows do not depend on batch boundaries.
Malformed seed records become `rejected/` rows naming the file, record and field.
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping
from dataclasses import dataclass, field
from functools import cached_property
from pathlib import Path
from typing import Any, ClassVar, Literal, NamedTuple

import pyarrow as pa

from synth.core.llm import LLMBackend
from synth.core.llm_backends import LLMBackendConfig
from synth.core.steps import GeneratedBatch, Generator, ShardContext
from synth.generators.toolforge.cases import DEFAULT_CASE_WEIGHTS, pick_cases
from synth.generators.toolforge.compose import compose_scripted
from synth.generators.toolforge.paradigms import choose_paradigm
from synth.generators.toolforge.planner import CaseNotRealisableError, PlanSettings, build_plan, gold_families
from synth.generators.toolforge.retrieval import SentenceIndex
from synth.generators.toolforge.seeds import SeedProblem, read_seed_file, seed_files
from synth.generators.toolforge.toolspace import ToolSpace
from synth.validators.toolforge.model import ChatMessage, DialoguePlan, QASeed, ToolSpec
from synth.validators.toolforge.records import TOOLFORGE_SCHEMA, dialogue_row
from synth.validators.toolforge.rules import YES_NO, appears, normalize

Writer = Literal["scripted", "llm"]


class Drop(NamedTuple):
    """A seed or case that did not become a row: a stable reason code and the detail behind it."""

    code: str
    detail: str


def answer_unsupported(seed: QASeed) -> Drop | None:
    """A drop when no supporting sentence states the answer (the dialogue's final content); None otherwise.

    Yes/no answers of comparison questions are exempt: they are inferred, not read.
    """
    if normalize(seed.answer) in YES_NO and seed.qtype == "comparison":
        return None
    if any(appears(seed.answer, seed.sentence(ref)) for ref in seed.supporting):
        return None
    detail = f"answer {seed.answer!r} is stated in none of its {len(seed.supporting)} supporting sentences"
    return Drop("seed:answer_unsupported", detail)


@dataclass(frozen=True)
class LLMSettings:
    """The LLM writer's backend block (`scripted` offline; `transformers`, `vllm` or `openai`) and its budget."""

    backend: LLMBackendConfig = field(default_factory=LLMBackendConfig)
    max_tokens: int = 4096


@dataclass(frozen=True, kw_only=True)
class ToolForgeGenerator(Generator):
    """Tool-use dialogues from QA seeds: `dialogues_per_seed` cases per seed (a clean run first)."""

    schema: ClassVar[pa.Schema] = TOOLFORGE_SCHEMA
    categories: ClassVar[tuple[str, ...]] = ("paradigm", "case_kind", "retrieval_modes", "seed_source", "qtype")
    seeds: tuple[str, ...] = ()
    limit: int | None = None
    dialogues_per_seed: int = 2
    case_weights: Mapping[str, float] = field(default_factory=lambda: dict(DEFAULT_CASE_WEIGHTS))
    variants_per_family: int = 5
    user_tools: str | None = None
    single_k: int = 3
    plan: PlanSettings = field(default_factory=PlanSettings)
    writer: Writer = "scripted"
    llm: LLMSettings = field(default_factory=lambda: LLMSettings())
    batch_size: int = 64

    def files(self) -> tuple[Path, ...]:
        """The seed files read."""
        return seed_files(self.seeds)

    def records(self) -> list[QASeed | SeedProblem]:
        """Every seed and malformed record, in file order (the first `limit`)."""
        items = [item for path in self.files() for item in read_seed_file(path)]
        return items if self.limit is None else items[: self.limit]

    def tool_space(self, seed: int) -> ToolSpace:
        """The run's tool space (base tools, gated variants, user tools), fixed by the run seed."""
        user = Path(self.user_tools) if self.user_tools else None
        return ToolSpace.build(variants_per_family=self.variants_per_family, seed=seed, user_tools=user)

    def describe_input(self) -> dict[str, Any]:
        """Seed files with their counts by source."""
        items = self.records()
        by_source: dict[str, int] = {}
        for item in items:
            key = item.source if isinstance(item, QASeed) else "malformed"
            by_source[key] = by_source.get(key, 0) + 1
        return {"seed_files": [str(p) for p in self.files()], "records": len(items), "by_source": by_source}

    @cached_property
    def _backend(self) -> LLMBackend:
        from synth.generators.toolforge.llm_writer import scripted_writer_backend

        return self.llm.backend.build(scripted=scripted_writer_backend())

    def _write(
        self, plan: DialoguePlan, tools: tuple[ToolSpec, ...], seed: QASeed
    ) -> tuple[tuple[ChatMessage, ...], int, str]:
        """(messages, LLM calls, problem) of the chosen writer; no messages and the problem when it failed."""
        if self.writer == "llm":
            from synth.generators.toolforge.llm_writer import compose_with_llm

            return compose_with_llm(plan, tools, seed, backend=self._backend, max_tokens=self.llm.max_tokens)
        return compose_scripted(plan), 0, ""

    def dialogues(self, seed: QASeed, space: ToolSpace, ctx: ShardContext) -> Iterator[dict[str, Any] | Drop]:
        """The rows of one seed (or a `Drop` when the seed or a case cannot be realised)."""
        unsupported = answer_unsupported(seed)
        if unsupported is not None:
            yield unsupported
            return
        index = SentenceIndex(seed)
        choice = choose_paradigm(seed, index, single_k=self.single_k)
        families = gold_families(seed, choice, space)
        cases = pick_cases(
            choice,
            gold_families=families,
            count=self.dialogues_per_seed,
            weights=dict(self.case_weights),
            rng=ctx.rng("cases", seed.source, seed.seed_id),
        )
        for number, case in enumerate(cases):
            rng = ctx.rng("dialogue", seed.source, seed.seed_id, number)
            try:
                plan, tools = build_plan(seed, choice, case, space, index, rng, self.plan)
            except CaseNotRealisableError as error:
                yield Drop(f"plan:{error.code}", str(error))
                continue
            messages, llm_calls, problem = self._write(plan, tools, seed)
            if not messages:
                yield Drop("writer:invalid_output", problem) if problem else Drop("writer:no_dialogue", case.name)
                continue
            yield dialogue_row(seed, plan, tools, messages, backend=self.writer, llm_calls=llm_calls)

    def generate(self, ctx: ShardContext) -> Iterator[GeneratedBatch]:
        space = self.tool_space(ctx.seed)
        batch = GeneratedBatch()
        for item in ctx.partition(self.records()):
            if isinstance(item, SeedProblem):
                where = f"{Path(item.path).name} record {item.record}" + (
                    f" ({item.record_id})" if item.record_id else ""
                )
                batch.reject(f"seed:{item.code}", detail=f"{where}: {item.reason}", values={"seed_id": item.record_id})
                continue
            for result in self.dialogues(item, space, ctx):
                if isinstance(result, Drop):
                    batch.reject(
                        result.code,
                        detail=result.detail,
                        values={"seed_id": item.seed_id, "seed_source": item.source},
                        parents=(item.seed_id,),
                    )
                else:
                    batch.add(result, parents=(f"{item.source}:{item.seed_id}",))
            if len(batch.rows) >= self.batch_size:
                yield batch
                batch = GeneratedBatch()
        if batch.rows or batch.rejections:
            yield batch
