"""Bounded proposal → feedback → revision trajectories, graded turn by turn, with shaped rewards and returns.

`mode="feedback"` (Same-B): each turn sees the earlier graded turns and their feedback; the trajectory stops at
the first success or after `budget` turns. `mode="independent"` (best-of-B): `budget` proposals that see no
feedback, all graded; the picked turn is chosen afterwards. Turn picks follow GeLLMO: a successful turn with the
largest summed relative improvement Σ gain/|source| (ties: higher similarity, then earlier); with no success,
the valid turn with most improved properties, then that sum.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field, replace
from random import Random
from typing import Literal

from synth.generators.marco.prompts import extract_smiles
from synth.generators.marco.proposers import GradedTurn, ProposalState, Proposer, propose_batch
from synth.validators.marco.evaluator import Evaluation, MoleculeEvaluator
from synth.validators.marco.feedback import feedback_message
from synth.validators.marco.reward import RewardSettings, trajectory_return, turn_reward

Mode = Literal["feedback", "independent"]
MODES: tuple[Mode, ...] = ("feedback", "independent")
StopReason = Literal["success", "budget"]


@dataclass(frozen=True)
class Turn:
    """One graded turn: the response, the extracted answer, its grade, reward and feedback."""

    index: int
    response: str
    answer: str
    move: str | None
    base: str
    evaluation: Evaluation
    reward: float
    feedback: str


@dataclass(frozen=True)
class Trajectory:
    """A finished trajectory: its turns, undiscounted return and why it stopped."""

    turns: tuple[Turn, ...]
    mode: Mode
    stop_reason: StopReason

    @property
    def total_return(self) -> float:
        """Σ of the turn rewards."""
        return trajectory_return([t.reward for t in self.turns])

    @property
    def success(self) -> bool:
        """True when some turn succeeded."""
        return any(t.evaluation.success for t in self.turns)

    @property
    def final(self) -> Turn:
        """The last turn."""
        return self.turns[-1]

    def picked(self) -> Turn | None:
        """The turn the trajectory is scored on (module docstring), or None when no turn is valid."""
        return pick_turn(self.turns)


def relative_improvement(evaluation: Evaluation) -> float:
    """GeLLMO's ranking key: Σ over scored properties of gain / |source| (|source| floored at 0.01)."""
    return sum(
        c.gain / max(abs(c.source), 0.01)  # type: ignore[operator, arg-type]
        for c in evaluation.changes
        if c.scored and c.gain is not None
    )


def pick_turn(turns: tuple[Turn, ...] | list[Turn]) -> Turn | None:
    """The best turn by the GeLLMO rule (module docstring)."""
    valid = [t for t in turns if t.evaluation.valid]
    if not valid:
        return None

    def key(turn: Turn) -> tuple[float, ...]:
        graded = turn.evaluation
        improved = sum(c.improved for c in graded.changes if c.scored)
        return (
            float(graded.success),
            float(improved),
            relative_improvement(graded),
            graded.similarity or 0.0,
            -float(turn.index),
        )

    return max(valid, key=key)


@dataclass(frozen=True)
class TrajectorySettings:
    """Budget, mode and reward weights of one trajectory."""

    budget: int = 5
    mode: Mode = "feedback"
    rewards: RewardSettings = field(default_factory=RewardSettings)

    def __post_init__(self) -> None:
        if self.budget < 1:
            msg = f"`budget` must be at least 1, got {self.budget}"
            raise ValueError(msg)
        if self.mode not in MODES:
            msg = f"unknown `mode` {self.mode!r}; choose from {list(MODES)}"
            raise ValueError(msg)


def run_trajectory(
    state: ProposalState,
    *,
    proposer: Proposer,
    evaluator: MoleculeEvaluator,
    rng: Random,
    settings: TrajectorySettings | None = None,
) -> Trajectory:
    """Run one trajectory from `state` (whose history must be empty)."""
    return run_trajectories([(state, rng)], proposer=proposer, evaluator=evaluator, settings=settings)[0]


@dataclass
class _Running:
    state: ProposalState
    rng: Random
    turns: list[Turn] = field(default_factory=list)
    history: list[GradedTurn] = field(default_factory=list)
    seen: list[str] = field(default_factory=list)
    stop: StopReason | None = None


def run_trajectories(
    starts: Sequence[tuple[ProposalState, Random]],
    *,
    proposer: Proposer,
    evaluator: MoleculeEvaluator,
    settings: TrajectorySettings | None = None,
) -> list[Trajectory]:
    """Run trajectories in lockstep: turn t of every unfinished one is proposed in one `propose_batch` call.

    Each trajectory draws only from its own generator, in the same order as when run alone, so the result does
    not depend on which trajectories share a batch (an LLM backend then sees one batch of requests per turn).
    """
    settings = settings or TrajectorySettings()
    running = [_Running(state, rng, seen=[state.source.canonical]) for state, rng in starts]
    for index in range(settings.budget):
        active = [r for r in running if r.stop is None]
        if not active:
            break
        states = [replace(r.state, history=tuple(r.history) if settings.mode == "feedback" else ()) for r in active]
        proposals = propose_batch(proposer, states, [r.rng for r in active])
        for run, proposal in zip(active, proposals, strict=True):
            answer = extract_smiles(proposal.response)
            graded = evaluator.evaluate(answer, run.state.source)
            reward = turn_reward(graded, seen=run.seen, settings=settings.rewards)
            feedback = feedback_message(graded, similarity_floor=settings.rewards.similarity_floor)
            run.turns.append(
                Turn(index, proposal.response, answer, proposal.move, proposal.base, graded, reward, feedback)
            )
            run.history.append(GradedTurn(proposal.response, proposal.move, proposal.base, graded, feedback))
            if graded.canonical:
                run.seen.append(graded.canonical)
            if graded.success and settings.mode == "feedback":
                run.stop = "success"
    return [Trajectory(tuple(r.turns), settings.mode, r.stop or "budget") for r in running]
