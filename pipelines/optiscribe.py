"""The OptiScribe domain: feasible yet hard MILPs from instructions, by challenger/solver self-play, SCIP-verified."""

from __future__ import annotations

from typing import Literal

from pydantic import Field, PositiveInt, field_validator, model_validator

from synth.core.config import StrictModel
from synth.core.llm_backends import LLMBackendConfig
from synth.core.registry import DomainSpec
from synth.core.steps import Generator, Verifier

DEFAULT_CURRICULUM = (
    "a max-cut problem with 20 nodes, density 0.3, hard",
    "a max-cut problem with 25 nodes, density 0.3, hard",
    "a max-cut problem with 30 nodes, density 0.3, hard",
)


class ScipConfig(StrictModel):
    """Fixed SCIP settings of every solve (recorded in each row and reused by `synth verify`)."""

    seed: int = Field(0, ge=0, description="randomization seeds (seed shift, permutation, LP)")
    total_nodes: PositiveInt = Field(5000, description="limits/totalnodes: the reproducible cap on B&B nodes")
    time_limit: float = Field(
        60.0, gt=0, description="wall-clock safety limit in seconds; a row stopped by it fails `synth verify`"
    )
    emphasis: str = Field("default", description="SCIP emphasis preset (e.g. from `synth optiscribe tune`)")
    meta: dict[str, str] = Field(default_factory=dict, description="presolving/separating/heuristics: off|fast|...")
    overrides: dict[str, float | int | str | bool] = Field(default_factory=dict, description="SCIP parameters")
    effort_seeds: PositiveInt = Field(
        1, description="odd number of seeds (from `seed` on) each measurement solves under; the median solve counts"
    )

    @model_validator(mode="after")
    def _valid(self) -> ScipConfig:
        from synth.validators.optiscribe.scip import ScipSettings

        ScipSettings(**self.model_dump())  # an unknown emphasis or meta setting is a ValueError on this field
        return self


class RewardConfig(StrictModel):
    """Reward = feasibility gate × (node_weight·log-nodes share + gap_weight·post-cut gap share) − timeout penalty."""

    node_weight: float = Field(0.7, ge=0)
    gap_weight: float = Field(0.3, ge=0)
    node_cap: PositiveInt = 5000
    gap_cap: float = Field(0.25, gt=0)
    timeout_penalty: float = Field(0.2, ge=0)
    hard_margin: float = Field(
        0.0, ge=0, description="decades above a hard band's edge where its reward peaks (0: the hardness reward)"
    )
    capped_nodes: Literal["estimate", "count"] = Field(
        "estimate",
        description="what a node-capped solve is paid for: SCIP's tree-size estimate (reward v3) or its count (v2)",
    )


class CrossCheckConfig(StrictModel):
    """The OR-Tools second solver, run on instances up to `max_variables`."""

    solver: Literal["highs", "sat"] = "highs"
    time_limit: float = Field(20.0, gt=0)
    max_variables: PositiveInt = 1000


class OptiScribeLLMConfig(LLMBackendConfig):
    """The `llm` challenger's backend (the scripted grammar policy, a local model, vLLM or an OpenAI-compatible
    server, e.g. a `synth train grpo` run's `model/` folder on the transformers backend)."""

    temperature: float = Field(1.0, ge=0, description="sampling temperature of each proposal")
    max_tokens: PositiveInt = Field(256, description="completion budget of one proposal (a spec or LP text)")


class OptiScribeConfig(StrictModel):
    """Generator settings: the curriculum of instructions, the challenger, self-play and verifier settings."""

    curriculum: list[str] = Field(
        default_factory=lambda: list(DEFAULT_CURRICULUM), description="instructions of one family, easiest first"
    )
    challenger: Literal["cem", "bandit", "gp", "default", "llm"] = Field(
        "cem",
        description="cem, bandit or gp (Bayesian optimisation) learner, the Ecole-style default parameterisation, "
        "or an LLM (`llm`)",
    )
    llm: OptiScribeLLMConfig = Field(default_factory=OptiScribeLLMConfig, description="the `llm` challenger's backend")
    rounds: PositiveInt = Field(4, description="self-play rounds per shard")
    candidates: PositiveInt = Field(8, description="proposals per round")
    instance_seeds: PositiveInt = Field(
        1, description="instances solved per proposed spec (not with llm); a learner scores the spec by their mean"
    )
    elite_fraction: float = Field(0.25, gt=0, le=1)
    smoothing: float = Field(0.5, gt=0, le=1, description="CEM step towards the elite")
    min_std: float = Field(0.1, gt=0, le=1, description="CEM floor on each dimension's spread (normalised)")
    initial_std: float = Field(0.5, gt=0, le=1, description="CEM starting spread around the standard knobs")
    bandit_bins: PositiveInt = Field(4, description="bandit arms per numeric dimension")
    gp_initial_samples: PositiveInt = Field(8, description="gp learner: uniform proposals before the surrogate is used")
    advance_reward: float = Field(0.5, ge=0, description="median reward that moves the curriculum on")
    advance_feasible: float = Field(0.8, ge=0, le=1, description="feasible share that moves the curriculum on")
    scip: ScipConfig = Field(default_factory=ScipConfig)
    reward: RewardConfig = Field(default_factory=RewardConfig)
    crosscheck: CrossCheckConfig = Field(default_factory=CrossCheckConfig)
    workers: PositiveInt = Field(1, description="processes solving a round's proposals (results do not depend on it)")
    mutation_rounds: int = Field(
        0, ge=0, description="rounds after `rounds` proposing children of the in-band instances found (0: none)"
    )
    mutation_sigma: float = Field(
        0.01, gt=0, le=1, description="a child's objective coefficients are its parent's times exp(N(0, sigma))"
    )
    mutation_parents: Literal["beta", "lognormal"] = Field(
        "beta", description="how mutation rounds pick parents: children's in-band counts, or predicted log-nodes"
    )

    @model_validator(mode="after")
    def _bands_reachable(self) -> OptiScribeConfig:
        from synth.generators.optiscribe.selfplay import parse_curriculum
        from synth.validators.optiscribe.difficulty import check_band_reachable

        for request in parse_curriculum(self.curriculum):
            check_band_reachable(request.effort(), self.scip.total_nodes)
        return self

    @model_validator(mode="after")
    def _seeds_per_spec_need_a_spec_challenger(self) -> OptiScribeConfig:
        if self.instance_seeds > 1 and self.challenger == "llm":
            msg = "instance_seeds > 1 needs a spec challenger (cem, bandit, gp, default): the llm answers once per seed"
            raise ValueError(msg)
        return self

    @model_validator(mode="after")
    def _mutation_needs_bands(self) -> OptiScribeConfig:
        from synth.generators.optiscribe.selfplay import parse_curriculum

        if self.mutation_rounds and any(r.effort() is None for r in parse_curriculum(self.curriculum)):
            msg = "mutation_rounds > 0 needs every curriculum instruction to ask a difficulty (easy, medium, hard, ...)"
            raise ValueError(msg)
        return self

    @field_validator("curriculum")
    @classmethod
    def _parseable(cls, curriculum: list[str]) -> list[str]:
        from synth.generators.optiscribe.selfplay import parse_curriculum

        parse_curriculum(curriculum)  # SpecError is a ValueError: pydantic reports it on the field
        return curriculum


def build_generator(config: OptiScribeConfig) -> Generator:
    """The self-play generator of a validated config."""
    from synth.generators.optiscribe.generator import OptiScribeGenerator
    from synth.generators.optiscribe.llm import ChallengerLLMSettings
    from synth.generators.optiscribe.selfplay import SelfPlaySettings
    from synth.validators.optiscribe import RewardSettings, ScipSettings

    settings = SelfPlaySettings(
        rounds=config.rounds,
        candidates=config.candidates,
        instance_seeds=config.instance_seeds,
        challenger=config.challenger,
        elite_fraction=config.elite_fraction,
        smoothing=config.smoothing,
        min_std=config.min_std,
        initial_std=config.initial_std,
        bandit_bins=config.bandit_bins,
        gp_initial_samples=config.gp_initial_samples,
        llm=ChallengerLLMSettings(
            backend=LLMBackendConfig(**config.llm.model_dump(include=set(LLMBackendConfig.model_fields))),
            temperature=config.llm.temperature,
            max_tokens=config.llm.max_tokens,
        ),
        advance_reward=config.advance_reward,
        advance_feasible=config.advance_feasible,
        scip=ScipSettings(**config.scip.model_dump()),
        reward=RewardSettings(**config.reward.model_dump()),
        workers=config.workers,
        mutation_rounds=config.mutation_rounds,
        mutation_sigma=config.mutation_sigma,
        mutation_parents=config.mutation_parents,
    )
    return OptiScribeGenerator(
        name=f"optiscribe-{config.challenger}", version="3", curriculum=tuple(config.curriculum), settings=settings
    )


def build_verifiers(config: OptiScribeConfig) -> dict[str, Verifier]:
    """The domain's verifiers by name, in dependency order (the others read the SCIP scores)."""
    from synth.validators.optiscribe import (
        CrossCheckSettings,
        InstructionVerifier,
        OrtoolsVerifier,
        RewardSettings,
        RewardVerifier,
        ScipVerifier,
    )

    return {
        "scip": ScipVerifier(name="scip", version="2"),
        "ortools": OrtoolsVerifier(
            name="ortools", version="1", settings=CrossCheckSettings(**config.crosscheck.model_dump())
        ),
        "instruction": InstructionVerifier(name="instruction", version="2"),
        "reward": RewardVerifier(name="reward", version="3", settings=RewardSettings(**config.reward.model_dump())),
    }


DOMAIN = DomainSpec(
    name="optiscribe",
    summary=(
        "MILP instances (facility location, max-cut, set cover, combinatorial auction, independent set, knapsack) "
        "from natural-language instructions, proposed by a challenger that learns from a SCIP reward "
        "(feasibility gate × B&B nodes and post-cut root gap) over a size curriculum; each row is re-solved by "
        "SCIP with its recorded settings, cross-checked by OR-Tools/HiGHS and checked against the instruction."
    ),
    config_model=OptiScribeConfig,
    build_generator=build_generator,
    build_verifiers=build_verifiers,
    verifier_names=("scip", "ortools", "instruction", "reward"),
    card_defaults={
        "pretty_name": "OptiScribe MILP instances",
        "license": "apache-2.0",
        "tags": ["milp", "optimization", "scip", "self-play", "synthetic"],
    },
    attribution="All instances are synthetic, generated from Ecole-style parameterisations; no external data.",
)
