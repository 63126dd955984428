"""Proposers: given the task, the source and the graded turns so far, answer with one candidate molecule.

- `ScriptedProposer` (guided): picks the next graph edit from move priors fit on ZINC (`priors`), shifted by what
  earlier turns of the same trajectory showed each move does to the properties still to improve on this source,
  and never proposes a molecule it already proposed. By default it always edits the source (backs off): measured
  on 150 BPQ sources, building on the best partial candidate (`build_on_partials=True`, while its similarity is
  at least `backoff_similarity`) costs more similarity than it gains in success (SR×Sim 0.53–0.60 vs 0.62).
  Building on a partial targets the properties its feedback says still fail and protects the improved ones.
  Weighting, when editing the source, the properties the latest feedback reports as failing (`failing_weight` 1
  or 3) changed SR×Sim by less than 0.01 on 200 BPQ and 200 PQS sources, so it is off by default.
  Unguided (`guided=False`), it draws from the same priors targeting every task property, without memory.
- `RandomEditProposer`: mol-ga's uniform random mutation of the source (the research note's local anchor).
- `LLMProposer`: asks an LLM backend with GeLLMO's prompt; revision turns append the feedback (Re2DF style).
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field, replace
from random import Random
from typing import Protocol

from synth.core.llm import GenRequest, LLMBackend, Message, SamplingParams
from synth.generators.marco.edits import MOVES, apply_move, random_mutation
from synth.generators.marco.priors import load_move_priors
from synth.generators.marco.prompts import REVISION_PROMPT, SYSTEM_PROMPT, format_answer
from synth.generators.marco.tasks import MarcoTask, Setting
from synth.validators.marco.evaluator import Evaluation, SourceProfile


@dataclass(frozen=True)
class GradedTurn:
    """What a proposer sees of an earlier turn: its response, the move behind it, its grade and feedback."""

    response: str
    move: str | None
    base: str
    evaluation: Evaluation
    feedback: str


@dataclass(frozen=True)
class ProposalState:
    """Everything a proposer may use: the task, the instruction, the source, and earlier graded turns."""

    task: MarcoTask
    setting: Setting
    instruction: str
    source: SourceProfile
    history: tuple[GradedTurn, ...] = ()


@dataclass(frozen=True)
class Proposal:
    """A proposer's response text, the move it used (scripted proposers) and the molecule it edited."""

    response: str
    move: str | None = None
    base: str = ""


class Proposer(Protocol):
    """Answers a proposal state with one response."""

    name: str

    def propose(self, state: ProposalState, rng: Random) -> Proposal:
        """One response for `state`, drawing randomness only from `rng`."""
        ...


@dataclass(frozen=True)
class RandomEditProposer:
    """One uniform mol-ga mutation of the source per call, ignoring any feedback."""

    name: str = "random"

    def propose(self, state: ProposalState, rng: Random) -> Proposal:
        """A random Graph-GA mutation of the source (the source itself when no mutation applies)."""
        product = random_mutation(state.source.parsed.mol, rng)
        return Proposal(format_answer(product or state.source.canonical), "random", state.source.canonical)


def _partial_score(evaluation: Evaluation) -> float:
    """How close a failed candidate is: clipped gains over the scored properties (thresholds as units)."""
    from synth.validators.marco.properties import SPECS

    scored = [c for c in evaluation.changes if c.scored and c.gain is not None]
    return sum(max(-1.0, min(1.0, c.gain / SPECS[c.key].threshold)) for c in scored)  # type: ignore[operator]


@dataclass(frozen=True)
class ScriptedProposer:
    """Feedback-guided graph edits (see the module docstring); `guided=False` drops the feedback and memory."""

    name: str = "scripted"
    guided: bool = True
    temperature: float = 0.5
    similarity_weight: float = 4.0
    protect_weight: float = 1.0
    learning_rate: float = 1.0
    failing_weight: float = 0.0
    build_on_partials: bool = False
    backoff_similarity: float = 0.75
    moves: tuple[str, ...] = field(default=MOVES)

    def _base(self, state: ProposalState) -> tuple[str, Evaluation | None]:
        """The molecule to edit: the best partial candidate still similar enough (if enabled), else the source."""
        best: tuple[float, str, Evaluation] | None = None
        if not self.build_on_partials:
            return state.source.canonical, None
        for turn in state.history:
            graded = turn.evaluation
            if not graded.valid or (graded.similarity or 0.0) < self.backoff_similarity:
                continue
            if not any(c.improved for c in graded.changes if c.scored):
                continue
            score = _partial_score(graded) + (graded.similarity or 0.0)
            if best is None or score > best[0]:
                best = (score, graded.canonical or "", graded)
        return (best[1], best[2]) if best else (state.source.canonical, None)

    def _targets(self, state: ProposalState, base: Evaluation | None) -> tuple[dict[str, float], list[str]]:
        """(weight of each property to improve, properties to protect) for the next edit.

        Editing the source, every scorable property must improve; those the latest valid turn's feedback
        reports as failing weigh `1 + failing_weight`. Editing a partial candidate, only its failing ones count.
        """
        scorable = [k for k in state.task.properties if state.source.values.get(k) is not None]
        if base is not None:
            failing = [k for k in base.failing if k in scorable] or scorable
            return dict.fromkeys(failing, 1.0), [k for k in scorable if k not in failing]
        latest = next((t.evaluation for t in reversed(state.history) if t.evaluation.valid), None)
        failing = set(latest.failing) if latest is not None else set()
        return {k: 1.0 + self.failing_weight * (k in failing) for k in scorable}, []

    def _move_scores(
        self, state: ProposalState, targets: Mapping[str, float], protected: Sequence[str]
    ) -> dict[str, float]:
        """Prior score of each move: mean target gain, losses on protected properties, similarity, applicability."""
        priors = load_move_priors()
        scores: dict[str, float] = {}
        for move in self.moves:
            prior = priors[move]
            gain = prior["gain"]
            score = sum(w * gain.get(k, 0.0) for k, w in targets.items()) / max(sum(targets.values()), 1e-9)
            score += self.protect_weight * sum(min(gain.get(k, 0.0), 0.0) for k in protected) / max(len(protected), 1)
            score += self.similarity_weight * (prior["similarity"] - 0.7) + math.log(max(prior["applies"], 1e-3))
            scores[move] = score
        if self.guided:
            self._learn(scores, state, targets)
        return scores

    def _learn(self, scores: dict[str, float], state: ProposalState, targets: Mapping[str, float]) -> None:
        """Shift each tried move's score by the weighted clipped target gains it showed on this source."""
        from synth.validators.marco.properties import SPECS

        for turn in state.history:
            if turn.move not in scores or not turn.evaluation.valid:
                continue
            gains = [c for c in turn.evaluation.changes if c.key in targets and c.gain is not None]
            observed = sum(targets[c.key] * max(-1.0, min(1.0, c.gain / SPECS[c.key].threshold)) for c in gains)  # type: ignore[operator]
            scores[turn.move] += self.learning_rate * observed / max(sum(targets[c.key] for c in gains), 1e-9)

    def _order(self, scores: dict[str, float], rng: Random) -> list[str]:
        """Moves in Gumbel-top-k order: a draw without replacement from softmax(score / temperature)."""
        keyed = [
            (score / self.temperature - math.log(-math.log(max(rng.random(), 1e-300))), move)
            for move, score in scores.items()
        ]
        return [move for _, move in sorted(keyed, reverse=True)]

    def propose(self, state: ProposalState, rng: Random) -> Proposal:
        """Edit the base molecule with the best-scoring move that gives a molecule not proposed before."""
        from rdkit import Chem

        history = state.history if self.guided else ()
        guided_state = replace(state, history=history)
        base_smiles, base_eval = self._base(guided_state)
        targets, protected = self._targets(guided_state, base_eval)
        exclude = frozenset({state.source.canonical, *(t.evaluation.canonical or "" for t in history)})
        base_mol = Chem.MolFromSmiles(base_smiles)
        for move in self._order(self._move_scores(guided_state, targets, protected), rng):
            product = apply_move(base_mol, move, rng, exclude=exclude).smiles
            if product is not None:
                return Proposal(format_answer(product), move, base_smiles)
        return Proposal(format_answer(base_smiles), None, base_smiles)


def proposal_messages(state: ProposalState) -> tuple[Message, ...]:
    """The conversation so far: system prompt, instruction, then each answer and its feedback."""
    messages = [Message("system", SYSTEM_PROMPT), Message("user", state.instruction)]
    for turn in state.history:
        messages.append(Message("assistant", turn.response))
        messages.append(Message("user", REVISION_PROMPT.format(feedback=turn.feedback)))
    return tuple(messages)


def propose_batch(proposer: Proposer, states: Sequence[ProposalState], rngs: Sequence[Random]) -> list[Proposal]:
    """One proposal per state: the proposer's own `propose_batch` when it has one (one backend call), else each."""
    batched = getattr(proposer, "propose_batch", None)
    if batched is not None:
        return batched(states, rngs)
    return [proposer.propose(state, rng) for state, rng in zip(states, rngs, strict=True)]


@dataclass(frozen=True)
class LLMProposer:
    """Asks `backend` for the next molecule; `guided=False` sends only the instruction (independent samples).

    The reply is parsed as GeLLMO's answer (`<SMILES> … </SMILES>`, else a bare one-token reply), downstream
    by `extract_smiles`; anything else grades as an empty, invalid answer.
    """

    backend: LLMBackend
    model: str = "scripted"
    temperature: float = 1.0
    max_tokens: int = 256
    guided: bool = True
    name: str = "llm"

    def _request(self, state: ProposalState, rng: Random) -> GenRequest:
        history = state.history if self.guided else ()
        messages = proposal_messages(replace(state, history=history))
        sampling = SamplingParams(temperature=self.temperature, max_tokens=self.max_tokens, seed=rng.getrandbits(31))
        return GenRequest(model=self.model, messages=messages, sampling=sampling)

    def propose(self, state: ProposalState, rng: Random) -> Proposal:
        """The backend's first completion; the sampling seed comes from `rng` so independent draws differ."""
        return self.propose_batch([state], [rng])[0]

    def propose_batch(self, states: Sequence[ProposalState], rngs: Sequence[Random]) -> list[Proposal]:
        """All states' requests in one backend call (the backend batches them)."""
        requests = [self._request(state, rng) for state, rng in zip(states, rngs, strict=True)]
        results = self.backend.generate(requests)
        return [
            Proposal(result.texts[0], None, state.source.canonical)
            for state, result in zip(states, results, strict=True)
        ]
