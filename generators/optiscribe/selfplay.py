"""Challenger/solver self-play with a size curriculum.

Each round the challenger takes the instruction of its current curriculum level and proposes `candidates`
specs: the `cem`, `bandit` and `gp` challengers sample their learned policy, the `default` challenger always answers
with the family's standard parameterisation (the Ecole-style baseline), and the `llm` challenger asks a model
through an LLM backend (one batched call per round) and reads each answer with `read_challenger_answer`: a spec
is built with the proposal's seed, LP text is solved as written, a refused answer is kept with its stable code.
Every instance is written as LP text and solved by SCIP from that text, and the rewards update the policy (not
the `llm` challenger's: its model is trained offline by `synth train grpo`). The level advances when a round is
feasible and hard enough. With `mutation_rounds`, the instances of the current level that landed in its asked band
seed an archive, and after the `rounds` knob rounds that many mutation rounds propose children of archived
instances (`archive`: objective jitter, parents by Thompson sampling on their children's in-band counts); a round
plays the challenger instead while the archive of its level is empty. The whole state (policy, level, round,
history, archive) is JSON; `run_selfplay` can save it after every round and resume.
"""

from __future__ import annotations

import json
import statistics
from collections.abc import Iterator, Mapping, Sequence
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any, Literal, get_args

import numpy as np

from synth.core.llm import LLMBackend
from synth.core.sink import write_text_atomic
from synth.generators.optiscribe.archive import Instance, InstanceArchive, ParentModel
from synth.generators.optiscribe.bandit import BanditPolicy
from synth.generators.optiscribe.build import Mutation
from synth.generators.optiscribe.llm import ChallengerLLMSettings, ask_challenger
from synth.generators.optiscribe.parallel import solve_many
from synth.generators.optiscribe.policy import CemPolicy
from synth.generators.optiscribe.surrogate import GaussianProcessPolicy
from synth.validators.optiscribe.difficulty import BandTable, EffortBand, check_band_reachable
from synth.validators.optiscribe.grammar import parse_instruction
from synth.validators.optiscribe.request import InstanceRequest
from synth.validators.optiscribe.reward import RewardSettings, request_reward
from synth.validators.optiscribe.scip import ScipSettings, ScipStats
from synth.validators.optiscribe.spec import InstanceSpec, SpecError

LearnerKind = Literal["cem", "bandit", "gp"]
ChallengerKind = Literal[LearnerKind, "default", "llm"]
LEARNERS: tuple[LearnerKind, ...] = get_args(LearnerKind)
Policy = CemPolicy | BanditPolicy | GaussianProcessPolicy


@dataclass(frozen=True, kw_only=True)
class SelfPlaySettings:
    """How self-play runs: rounds, proposals per round, the CEM learner, the `llm` challenger's backend, curriculum
    thresholds, solver, reward."""

    rounds: int = 4
    candidates: int = 8
    instance_seeds: int = 1  # instances solved per proposed spec; the learner scores a spec by their mean reward
    challenger: ChallengerKind = "cem"
    elite_fraction: float = 0.25
    smoothing: float = 0.5
    min_std: float = 0.1
    initial_std: float = 0.5
    bandit_bins: int = 4
    gp_initial_samples: int = 8  # the gp learner's uniform initial design, in proposals
    llm: ChallengerLLMSettings = field(default_factory=ChallengerLLMSettings)
    advance_reward: float = 0.5
    advance_feasible: float = 0.8
    scip: ScipSettings = field(default_factory=ScipSettings)
    reward: RewardSettings = field(default_factory=RewardSettings)
    workers: int = 1
    mutation_rounds: int = 0  # after `rounds`: rounds proposing children of archived in-band instances
    mutation_sigma: float = 0.01  # a child's objective coefficients are its parent's times exp(N(0, sigma))
    mutation_parents: ParentModel = "beta"  # how mutation rounds pick parents (`archive.ParentModel`)

    def __post_init__(self) -> None:
        if self.mutation_rounds:
            Mutation(0, self.mutation_sigma)  # raises on a sigma outside (0, 1]


@dataclass(frozen=True)
class Candidate:
    """One proposal and what SCIP made of it (`stats` is None when the spec could not be built or the answer was
    refused: `error` says why and `error_code` is the stable code; `spec` is None for an LP answer)."""

    round: int
    level: int
    instruction: str
    request: InstanceRequest
    spec: InstanceSpec | None
    seed: int
    model_text: str | None
    stats: ScipStats | None
    reward: float
    policy: str
    error: str | None = None
    error_code: str = "invalid_spec"
    mutations: tuple[Mutation, ...] = ()  # the objective jitters applied after building (spec, seed)


def parse_curriculum(instructions: Sequence[str], *, bands: BandTable | None = None) -> list[InstanceRequest]:
    """Parse the curriculum's instructions (easiest first); all must name one family. `bands`, a calibrated band
    table, gives the difficulty words their node bands."""
    if not instructions:
        msg = "`curriculum`: give at least one instruction"
        raise SpecError(msg, code="empty_curriculum")
    requests = []
    for index, instruction in enumerate(instructions):
        try:
            request = parse_instruction(instruction)
            requests.append(request if bands is None else replace(request, bands=dict(bands)))
        except SpecError as error:
            msg = f"`curriculum[{index}]`: {error}"
            raise SpecError(msg, code=error.code) from None
    families = sorted({r.family for r in requests})
    if len(families) > 1:
        msg = f"`curriculum`: instructions name several families {families}; use one family per run"
        raise SpecError(msg, code="mixed_families")
    return requests


def policy_from_dict(saved: Mapping[str, Any]) -> Policy:
    """Rebuild a learner saved by its `to_dict` (its `kind`: cem, bandit or gp)."""
    if saved.get("kind") == "bandit":
        return BanditPolicy.from_dict(saved)
    if saved.get("kind") == "gp":
        return GaussianProcessPolicy.from_dict(saved)
    return CemPolicy.from_dict(saved)


@dataclass
class SelfPlayState:
    """Everything carried between rounds: the policy, the curriculum level, the next round, the history and, with
    mutation rounds, the archive of the level `archive_level`'s in-band instances."""

    policy: Policy
    level: int = 0
    round: int = 0
    history: list[dict[str, Any]] = field(default_factory=list)
    archive: InstanceArchive | None = None
    archive_level: int = 0

    def to_json(self) -> str:
        """Canonical JSON of the state."""
        data = {"policy": self.policy.to_dict(), "level": self.level, "round": self.round, "history": self.history}
        if self.archive is not None:
            data |= {"archive": self.archive.to_dict(), "archive_level": self.archive_level}
        return json.dumps(data, sort_keys=True, separators=(",", ":"))

    @classmethod
    def from_json(cls, text: str) -> SelfPlayState:
        """Rebuild a state saved by `to_json`."""
        data = json.loads(text)
        saved = data["policy"]
        archive = InstanceArchive.from_dict(data["archive"]) if "archive" in data else None
        return cls(
            policy_from_dict(saved),
            int(data["level"]),
            int(data["round"]),
            list(data["history"]),
            archive,
            int(data.get("archive_level", 0)),
        )

    def level_archive(self) -> InstanceArchive | None:
        """The archive of the current level, when it holds an instance to mutate."""
        if self.archive is None or self.archive_level != self.level or not self.archive.entries:
            return None
        return self.archive


@dataclass(frozen=True)
class RoundProposal:
    """One proposal before solving: the instance seed, a spec or LP text, or the error and its stable code."""

    seed: int
    spec: InstanceSpec | None = None
    model_text: str | None = None
    error: str | None = None
    error_code: str = "invalid_spec"
    draws: dict[str, Any] = field(default_factory=dict)
    mutations: tuple[Mutation, ...] = ()

    def text(self) -> str | None:
        """The LP text to solve: the answer's, or the spec built with the seed and mutated; None when there is
        nothing."""
        if self.error is not None:
            return None
        if self.spec is None:
            return self.model_text
        return Instance(self.spec, self.seed, self.mutations).text()


def policy_proposals(
    state: SelfPlayState, request: InstanceRequest, *, settings: SelfPlaySettings, rng: np.random.Generator
) -> list[RoundProposal]:
    """The learner's (`cem`, `bandit`, `gp`) samples, or the `default` spec, each after its instance seed; with
    `instance_seeds` k > 1 each spec is proposed k times in a row, under its own and k − 1 further seeds."""
    proposals = []
    for _ in range(settings.candidates):
        seed = int(rng.integers(2**62))
        try:
            if settings.challenger in LEARNERS:
                sampled = state.policy.sample(request, rng)
                proposal = RoundProposal(seed, spec=sampled.spec, draws=dict(sampled.draws))
            else:
                proposal = RoundProposal(seed, spec=request.make_spec())
        except SpecError as caught:
            proposal = RoundProposal(seed, error=str(caught), error_code=caught.code)
        extra = [int(rng.integers(2**62)) for _ in range(settings.instance_seeds - 1)]
        proposals += [proposal, *(replace(proposal, seed=s) for s in extra)]
    return proposals


def mutation_proposals(
    archive: InstanceArchive, *, settings: SelfPlaySettings, rng: np.random.Generator
) -> list[RoundProposal]:
    """`candidates` × `instance_seeds` children of archived instances (the parent's index in `draws`)."""
    return [
        RoundProposal(child.seed, spec=child.spec, mutations=child.mutations, draws={"parent": parent})
        for parent, child in archive.propose(settings.candidates * settings.instance_seeds, rng)
    ]


def spec_scores(rewards: Sequence[float], work: Sequence[float], group: int) -> tuple[list[float], list[float]]:
    """Each spec's mean reward and mean solver work over its `group` consecutive instances."""
    chunks = range(0, len(rewards), group)
    return (
        [statistics.fmean(rewards[i : i + group]) for i in chunks],
        [statistics.fmean(work[i : i + group]) for i in chunks],
    )


def llm_proposals(
    backend: LLMBackend, instruction: str, *, settings: SelfPlaySettings, rng: np.random.Generator
) -> list[RoundProposal]:
    """The `llm` challenger's answers to `instruction`, one per instance seed, asked in one backend call."""
    seeds = [int(rng.integers(2**62)) for _ in range(settings.candidates)]
    answers = ask_challenger(backend, settings.llm, instruction, seeds)
    return [
        RoundProposal(seed, spec=answer.spec, model_text=answer.model_text)
        if answer.reason is None
        else RoundProposal(seed, error=answer.reason, error_code=answer.code or "invalid_spec")
        for seed, answer in zip(seeds, answers, strict=True)
    ]


def play_round(
    state: SelfPlayState,
    curriculum: Sequence[InstanceRequest],
    *,
    settings: SelfPlaySettings,
    instructions: Sequence[str],
    rng: np.random.Generator,
    backend: LLMBackend | None = None,
) -> list[Candidate]:
    """Propose, solve and score one round, then update the policy and maybe advance the level (in place).

    All proposals are drawn first, then solved (in `settings.workers` processes), so the draws and the results do
    not depend on the number of workers. The `llm` challenger asks `backend`; its rows record the backend's
    provenance as their policy.
    """
    request = curriculum[state.level]
    band = request.effort()
    archive = state.level_archive() if state.round >= settings.rounds else None
    if archive is not None:
        proposals = mutation_proposals(archive, settings=settings, rng=rng)
        policy_before = json.dumps({"kind": "mutation", "sigma": archive.sigma, "archive": len(archive.entries)})
    elif settings.challenger == "llm":
        if backend is None:
            msg = "challenger `llm` needs a backend (see `SelfPlaySettings.llm`)"
            raise ValueError(msg)
        proposals = llm_proposals(backend, instructions[state.level], settings=settings, rng=rng)
        policy_before = settings.llm.provenance()
    else:
        proposals = policy_proposals(state, request, settings=settings, rng=rng)
        policy_before = json.dumps(state.policy.to_dict(), sort_keys=True, separators=(",", ":"))
    texts = {i: text for i, p in enumerate(proposals) if (text := p.text()) is not None}
    results = solve_many([(text, settings.scip) for text in texts.values()], workers=settings.workers)
    solved = dict(zip(texts, results, strict=True))
    candidates = []
    for index, proposal in enumerate(proposals):
        stats = solved.get(index)
        candidates.append(
            Candidate(
                round=state.round,
                level=state.level,
                instruction=instructions[state.level],
                request=request,
                spec=proposal.spec,
                seed=proposal.seed,
                model_text=texts.get(index),
                stats=stats,
                reward=0.0 if stats is None else request_reward(stats.to_dict(), band, settings.reward),
                policy=policy_before,
                error=proposal.error,
                error_code=proposal.error_code,
                mutations=proposal.mutations,
            )
        )
    if archive is not None:
        for proposal, candidate in zip(proposals, candidates, strict=True):
            if candidate.stats is not None and candidate.spec is not None:
                archive.record(proposal.draws["parent"], _instance(candidate), candidate.stats)
    elif settings.mutation_rounds and band is not None:
        _archive_in_band(state, candidates, band, settings)
    if archive is None and settings.challenger in LEARNERS:
        work = [c.stats.deterministic_time if c.stats else 0.0 for c in candidates]
        group = settings.instance_seeds
        rewards, work = spec_scores([c.reward for c in candidates], work, group)
        state.policy.update([p.draws for p in proposals[::group]], rewards, tiebreak=work)
    _record_round(state, candidates, settings, last_level=len(curriculum) - 1)
    return candidates


def _instance(candidate: Candidate) -> Instance:
    return Instance(candidate.spec, candidate.seed, candidate.mutations)  # type: ignore[arg-type]


def _archive_in_band(
    state: SelfPlayState, candidates: Sequence[Candidate], band: EffortBand, settings: SelfPlaySettings
) -> None:
    """Keep the round's in-band instances in the archive of the current level (a new archive for a new level)."""
    if state.archive is None or state.archive_level != state.level:
        archive = InstanceArchive(band, sigma=settings.mutation_sigma, parent_model=settings.mutation_parents)
        state.archive, state.archive_level = archive, state.level
    state.archive.extend((_instance(c), c.stats) for c in candidates if c.spec is not None and c.stats is not None)


def _record_round(
    state: SelfPlayState, candidates: Sequence[Candidate], settings: SelfPlaySettings, *, last_level: int
) -> None:
    rewards = [c.reward for c in candidates]
    feasible = [c.stats is not None and c.stats.feasible for c in candidates]
    summary = {
        "round": state.round,
        "level": state.level,
        "median_reward": statistics.median(rewards) if rewards else 0.0,
        "feasible_rate": sum(feasible) / len(feasible) if feasible else 0.0,
        "median_nodes": statistics.median([c.stats.nodes for c in candidates if c.stats]) if any(feasible) else 0,
    }
    state.history.append(summary)
    state.round += 1
    ready = (
        summary["feasible_rate"] >= settings.advance_feasible and summary["median_reward"] >= settings.advance_reward
    )
    if ready and state.level < last_level:
        state.level += 1


def new_state(settings: SelfPlaySettings) -> SelfPlayState:
    """A fresh state (level 0, round 0): the CEM policy at the family defaults (unused by the `default` and `llm`
    challengers), or an empty bandit."""
    if settings.challenger == "bandit":
        return SelfPlayState(BanditPolicy(bins=settings.bandit_bins))
    if settings.challenger == "gp":
        return SelfPlayState(GaussianProcessPolicy(initial_samples=settings.gp_initial_samples))
    return SelfPlayState(
        CemPolicy(
            elite_fraction=settings.elite_fraction,
            smoothing=settings.smoothing,
            min_std=settings.min_std,
            initial_std=settings.initial_std,
        )
    )


def round_rng(seed: int, round_index: int) -> np.random.Generator:
    """The generator of one round, so a resumed run draws what an uninterrupted one would."""
    return np.random.Generator(np.random.PCG64([seed, round_index]))


def iterate_selfplay(
    instructions: Sequence[str],
    *,
    settings: SelfPlaySettings,
    seed: int,
    state: SelfPlayState | None = None,
    bands: BandTable | None = None,
    backend: LLMBackend | None = None,
) -> Iterator[tuple[list[Candidate], SelfPlayState]]:
    """Play rounds from `state` (or a fresh one) until `settings.rounds` plus `mutation_rounds`, yielding each
    round and the state. The `llm` challenger asks `backend`, or one built from `settings.llm`."""
    curriculum = parse_curriculum(instructions, bands=bands)
    for request in curriculum:
        check_band_reachable(request.effort(), settings.scip.total_nodes)
    state = state or new_state(settings)
    if settings.challenger == "llm" and backend is None:
        backend = settings.llm.build()
    while state.round < settings.rounds + settings.mutation_rounds:
        rng = round_rng(seed, state.round)
        candidates = play_round(
            state, curriculum, settings=settings, instructions=instructions, rng=rng, backend=backend
        )
        yield candidates, state


def run_selfplay(
    instructions: Sequence[str],
    *,
    settings: SelfPlaySettings,
    seed: int,
    state_path: str | Path | None = None,
    bands: BandTable | None = None,
    backend: LLMBackend | None = None,
) -> tuple[list[Candidate], SelfPlayState]:
    """Run self-play to `settings.rounds` (plus `mutation_rounds`), saving the state after each round to
    `state_path` and resuming from it (the `llm` challenger asks `backend`, or one built from `settings.llm`).

    Returns the candidates of the rounds played in this call and the final state.
    """
    path = Path(state_path) if state_path is not None else None
    state = SelfPlayState.from_json(path.read_text()) if path is not None and path.is_file() else None
    played: list[Candidate] = []
    state = state or new_state(settings)
    rounds = iterate_selfplay(instructions, settings=settings, seed=seed, state=state, bands=bands, backend=backend)
    for candidates, current in rounds:
        played.extend(candidates)
        if path is not None:
            write_text_atomic(path, current.to_json())
    return played, state


def summarise(candidates: Sequence[Candidate]) -> Mapping[str, Any]:
    """Counts, feasibility and median nodes of some candidates."""
    solved = [c for c in candidates if c.stats is not None]
    return {
        "candidates": len(candidates),
        "feasible": sum(c.stats.feasible for c in solved),  # type: ignore[union-attr]
        "median_nodes": statistics.median([c.stats.nodes for c in solved]) if solved else None,  # type: ignore[union-attr]
    }
