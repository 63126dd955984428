"""The ToolForge domain: virtual-tool multi-hop, multi-turn and self-reflection dialogues from QA seeds."""

from __future__ import annotations

from typing import Literal

from pydantic import Field, NonNegativeFloat, PositiveInt, field_validator, model_validator

from synth.core.config import StrictModel
from synth.core.llm_backends import LLMBackendConfig
from synth.core.registry import DomainSpec
from synth.core.steps import Generator, Verifier
from synth.generators.toolforge.cases import DEFAULT_CASE_WEIGHTS, REFLECTION_KINDS
from synth.validators.toolforge.verifiers import LAYERS


class ToolForgeLLMConfig(LLMBackendConfig):
    """The LLM writer's backend: `scripted` (offline), local `transformers`, `vllm` (GPU) or an `openai` server."""

    max_tokens: PositiveInt = Field(4096, description="completion budget of one dialogue")


class ToolForgeConfig(StrictModel):
    """Generator settings: seeds, cases per seed, the tool space, retrieval depth and the writer."""

    input: list[str] = Field(
        default_factory=list,
        description="HotpotQA / 2Wiki / MuSiQue files or folders (JSON array or JSONL); empty = the shipped seeds",
    )
    limit: PositiveInt | None = Field(None, description="use only the first N seed records")
    dialogues_per_seed: PositiveInt = Field(2, le=6, description="a clean run, then error-and-recovery cases")
    case_weights: dict[str, NonNegativeFloat] = Field(
        default_factory=lambda: dict(DEFAULT_CASE_WEIGHTS),
        description="relative weights of the error-and-recovery cases",
    )
    variants_per_family: int = Field(5, ge=0, le=40, description="gated variants generated per base tool")
    user_tools: str | None = Field(None, description="a YAML/JSON file of extra tools (each with a `family`)")
    single_k: PositiveInt = Field(3, description="`single` when one query ranks every gold sentence in this top-k")
    top_k: tuple[PositiveInt, PositiveInt] = Field((3, 5), description="distractor sentences per tool result")
    distractors: tuple[int, int] = Field((3, 6), description="distractor tools offered per dialogue")
    writer: Literal["scripted", "llm"] = Field(
        "scripted", description="scripted composer, or the LLM writer (structured output) on the scripted backend"
    )
    llm: ToolForgeLLMConfig = Field(default_factory=ToolForgeLLMConfig, description="the LLM writer's backend")
    judge: Literal["rule", "llm"] = Field("rule", description="rule-based judge, or the LLM judge (scripted backend)")

    @field_validator("input", mode="before")
    @classmethod
    def _one_or_many(cls, value: object) -> object:
        return [value] if isinstance(value, str) else value

    @field_validator("user_tools")
    @classmethod
    def _readable_tools(cls, path: str | None) -> str | None:
        if path is not None:
            from pathlib import Path

            from synth.generators.toolforge.toolspace import load_user_tools

            load_user_tools(Path(path))  # a bad file is refused before anything is written
        return path

    @field_validator("case_weights")
    @classmethod
    def _known_cases(cls, weights: dict[str, float]) -> dict[str, float]:
        unknown = sorted(set(weights) - set(REFLECTION_KINDS))
        if unknown:
            msg = f"unknown case(s) {unknown}; choose from {list(REFLECTION_KINDS)}"
            raise ValueError(msg)
        return weights

    @model_validator(mode="after")
    def _ranges(self) -> ToolForgeConfig:
        for name in ("top_k", "distractors"):
            low, high = getattr(self, name)
            if low > high or low < 0:
                msg = f"`{name}` must be [low, high] with 0 <= low <= high, got {[low, high]}"
                raise ValueError(msg)
        return self


def build_generator(config: ToolForgeConfig) -> Generator:
    """The dialogue generator of a validated config; reads the seed files once so a bad one is refused up front."""
    from synth.generators.toolforge.generator import LLMSettings, ToolForgeGenerator
    from synth.generators.toolforge.planner import PlanSettings

    generator = ToolForgeGenerator(
        name=f"toolforge-{config.writer}",
        version="1",
        seeds=tuple(config.input),
        limit=config.limit,
        dialogues_per_seed=config.dialogues_per_seed,
        case_weights=dict(config.case_weights),
        variants_per_family=config.variants_per_family,
        user_tools=config.user_tools,
        single_k=config.single_k,
        plan=PlanSettings(top_k=tuple(config.top_k), distractors=tuple(config.distractors)),
        writer=config.writer,
        llm=LLMSettings(config.llm, max_tokens=config.llm.max_tokens),
    )
    generator.records()  # an unreadable seed file fails here, before anything is written
    return generator


def build_verifiers(config: ToolForgeConfig) -> dict[str, Verifier]:
    """The multi-layer validation: rule layers and the judge, one verdict column each."""
    from dataclasses import replace

    from synth.validators.toolforge.verifiers import build_verifiers as build_layers

    layers = build_layers(judge_backend="rule" if config.judge == "rule" else "scripted-llm")
    return {layer: replace(verifier, name=layer) for layer, verifier in layers.items()}


ATTRIBUTION = """\
Seeds: HotpotQA (Yang et al. 2018, CC BY-SA 4.0; Wikipedia text), MuSiQue (Trivedi et al. 2022, CC BY 4.0) and
2WikiMultihopQA (Ho et al. 2020, Apache-2.0) records shipped in generators/toolforge/data (see ATTRIBUTION.md).
Dialogues built from HotpotQA records contain its questions and Wikipedia sentences and carry CC BY-SA 4.0
(column `seed_license`). Tools are virtual (written here) and never executed; results are simulated by BM25 over
the seed's context. Method: ToolForge (arXiv 2512.16149), re-implemented from its description.
"""

DOMAIN = DomainSpec(
    name="toolforge",
    summary=(
        "Tool-use dialogues (OpenAI messages with tool_calls) from multi-hop QA seeds: 19 virtual base tools plus "
        "gated variants, four paradigms (single, parallel, multi-hop, multi-turn) chosen per seed, BM25-simulated "
        "successful and misleading retrieval, error-and-recovery scripts for self-reflection; multi-layer "
        "validation (8 rule layers and a judge) audited by MCTS-mined hard negatives."
    ),
    config_model=ToolForgeConfig,
    build_generator=build_generator,
    build_verifiers=build_verifiers,
    verifier_names=LAYERS,
    card_defaults={
        "pretty_name": "ToolForge tool-use dialogues",
        "license": "cc-by-sa-4.0",
        "tags": ["tool-use", "function-calling", "multi-hop", "multi-turn", "self-reflection", "synthetic", "sft"],
    },
    attribution=ATTRIBUTION,
)
