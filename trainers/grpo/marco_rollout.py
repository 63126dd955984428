"""MARCO's multi-turn GRPO rollout: proposal → RDKit feedback → revision, on the policy being trained.

TRL calls `MarcoRollout(prompts, trainer)` in place of its own generation (`rollout_func`). Every prompt (already
repeated `num_generations` times) becomes one feedback trajectory of up to `turns` turns run by the generator's own
`run_trajectories` (the same grading, shaped turn rewards, feedback text and stop-at-success as `synth run
marco`), with a proposer that samples from the trainer's model in one batched `generate` per turn and keeps the
exact token ids. The completion is every turn's answer with the feedback of turn t between them as the next user
turn (in the chat template's ChatML form); `env_mask` is 0 on those feedback tokens, so only the policy's own
tokens enter the loss. `trajectory_return` (the undiscounted sum of the turn rewards) is the reward.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from random import Random
from typing import Any

from synth.generators.marco.proposers import Proposal, ProposalState
from synth.trainers.grpo.data import PromptRow

IM_START, IM_END = "<|im_start|>", "<|im_end|>"


@dataclass
class _Tokens:
    prompt: list[int]
    completion: list[int] = field(default_factory=list)
    mask: list[int] = field(default_factory=list)
    turns: int = 0
    ended: bool = True


class TokenProposer:
    """Samples each turn's answer from `model`, recording token ids per trajectory (keyed by its generator)."""

    name = "policy"

    def __init__(self, model: Any, tokenizer: Any, *, max_new_tokens: int, temperature: float) -> None:
        self.model = model
        self.tokenizer = tokenizer
        self.max_new_tokens = max_new_tokens
        self.temperature = temperature
        self.tokens: dict[int, _Tokens] = {}

    def start(self, rng: Random, prompt_ids: list[int]) -> None:
        """Register a trajectory (its generator identifies it in later calls)."""
        self.tokens[id(rng)] = _Tokens(list(prompt_ids))

    def _encode(self, text: str) -> list[int]:
        return list(self.tokenizer.encode(text, add_special_tokens=False))

    def _add_feedback(self, tokens: _Tokens, feedback: str) -> None:
        from synth.generators.marco.prompts import REVISION_PROMPT

        text = ("" if tokens.ended else IM_END) + f"\n{IM_START}user\n{REVISION_PROMPT.format(feedback=feedback)}"
        ids = self._encode(f"{text}{IM_END}\n{IM_START}assistant\n")
        tokens.completion += ids
        tokens.mask += [0] * len(ids)

    def propose(self, state: ProposalState, rng: Random) -> Proposal:
        """One answer (see `propose_batch`)."""
        return self.propose_batch([state], [rng])[0]

    def propose_batch(self, states: Sequence[ProposalState], rngs: Sequence[Random]) -> list[Proposal]:
        """Append the latest feedback to each trajectory, then sample all next answers in one `generate` call."""
        import torch

        buffers = [self.tokens[id(rng)] for rng in rngs]
        for state, tokens in zip(states, buffers, strict=True):
            if state.history and len(state.history) == tokens.turns:
                self._add_feedback(tokens, state.history[-1].feedback)
        inputs = [t.prompt + t.completion for t in buffers]
        width = max(len(ids) for ids in inputs)
        pad = self.tokenizer.pad_token_id
        ids = torch.tensor([[pad] * (width - len(x)) + x for x in inputs], device=self.model.device)
        attention = torch.tensor([[0] * (width - len(x)) + [1] * len(x) for x in inputs], device=self.model.device)
        with torch.no_grad():
            output = self.model.generate(
                input_ids=ids,
                attention_mask=attention,
                max_new_tokens=self.max_new_tokens,
                do_sample=True,
                temperature=self.temperature,
                top_p=1.0,
                top_k=0,
                pad_token_id=pad,
                eos_token_id=self.tokenizer.eos_token_id,
            )
        proposals = []
        for row, (state, tokens) in enumerate(zip(states, buffers, strict=True)):
            new = output[row, width:].tolist()
            end = next((i for i, t in enumerate(new) if t == self.tokenizer.eos_token_id), None)
            segment = new if end is None else new[: end + 1]
            segment = [t for t in segment if t != pad] or [self.tokenizer.eos_token_id]
            tokens.completion += segment
            tokens.mask += [1] * len(segment)
            tokens.turns += 1
            tokens.ended = segment[-1] == self.tokenizer.eos_token_id
            text = self.tokenizer.decode(segment, skip_special_tokens=True)
            proposals.append(Proposal(text, None, state.source.canonical))
        return proposals


class MarcoRollout:
    """The `rollout_func` of MARCO GRPO (module docstring); `rows` maps each rendered prompt to its row."""

    def __init__(
        self,
        rows: Mapping[str, PromptRow],
        *,
        turns: int,
        max_new_tokens: int,
        temperature: float,
        rewards: Any,
        protocol: str = "gellmo",
        fragments: str = "reject",
    ) -> None:
        self.rows = dict(rows)
        self.turns = turns
        self.max_new_tokens = max_new_tokens
        self.temperature = temperature
        self.rewards = rewards
        self.protocol = protocol
        self.fragments = fragments

    def __call__(self, prompts: Sequence[str], trainer: Any) -> dict[str, Any]:
        from synth.generators.marco.tasks import get_task
        from synth.generators.marco.trajectory import TrajectorySettings, run_trajectories
        from synth.trainers.grpo.marco_reward import marco_evaluator

        tokenizer = trainer.processing_class
        model = trainer.accelerator.unwrap_model(trainer.model)
        proposer = TokenProposer(model, tokenizer, max_new_tokens=self.max_new_tokens, temperature=self.temperature)
        settings = TrajectorySettings(budget=self.turns, mode="feedback", rewards=self.rewards)
        by_task: dict[str, list[int]] = {}
        rngs = [Random(index) for index in range(len(prompts))]
        for index, prompt in enumerate(prompts):
            by_task.setdefault(self.rows[prompt].columns["task"], []).append(index)
            proposer.start(rngs[index], tokenizer.encode(prompt, add_special_tokens=False))
        trajectories: dict[int, Any] = {}
        for task_name, indices in by_task.items():
            evaluator = marco_evaluator(task_name, self.protocol, self.fragments)
            task = get_task(task_name)
            starts = []
            for index in indices:
                row = self.rows[prompts[index]]
                instruction = row.messages[-1]["content"]
                source = evaluator.profile(row.columns["source_smiles"])
                starts.append((ProposalState(task, row.columns["setting"], instruction, source), rngs[index]))
            done = run_trajectories(starts, proposer=proposer, evaluator=evaluator, settings=settings)
            trajectories.update(zip(indices, done, strict=True))
        ordered = [trajectories[i] for i in range(len(prompts))]
        buffers = [proposer.tokens[id(rng)] for rng in rngs]
        return {
            "prompt_ids": [b.prompt for b in buffers],
            "completion_ids": [b.completion for b in buffers],
            "env_mask": [b.mask for b in buffers],
            "logprobs": None,
            "trajectory_return": [t.total_return for t in ordered],
            "success": [float(t.success) for t in ordered],
            "turns": [len(t.turns) for t in ordered],
        }
