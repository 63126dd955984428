"""LoRA (peft) fine-tuning of the reference LM on embedding rows or token rows, with matched settings, and greedy
exact-match evaluation.

The same loop trains on `inputs_embeds` (DASA, random embeddings) and on `input_ids` (source text, GRADMM text):
only the forward's input differs, so LoRA rank, targets, steps, batch order and the seeded LoRA initialisation match.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from synth.generators.dasa.base_lm import Reference, Tokenizer, encode_pairs, seeded

if TYPE_CHECKING:
    import torch

LORA_TARGETS = ("q_proj", "k_proj", "v_proj", "o_proj", "gate_proj", "up_proj", "down_proj")


@dataclass
class TrainRows:
    """Training rows: exactly one of `input_ids` [N, L] or `inputs_embeds` [N, L, d], with labels and mask."""

    labels: torch.Tensor
    attention_mask: torch.Tensor
    input_ids: torch.Tensor | None = None
    inputs_embeds: torch.Tensor | None = None

    def __post_init__(self) -> None:
        if (self.input_ids is None) == (self.inputs_embeds is None):
            msg = "give exactly one of `input_ids` or `inputs_embeds`"
            raise ValueError(msg)

    def __len__(self) -> int:
        return int(self.labels.shape[0])

    def batch(self, idx: torch.Tensor) -> dict[str, torch.Tensor]:
        """The forward keyword arguments of rows `idx`."""
        out = {"labels": self.labels[idx], "attention_mask": self.attention_mask[idx]}
        if self.input_ids is not None:
            out["input_ids"] = self.input_ids[idx]
        else:
            assert self.inputs_embeds is not None
            out["inputs_embeds"] = self.inputs_embeds[idx]
        return out


def rows_from_pairs(pairs: Sequence[tuple[str, str]], tokenizer: Tokenizer) -> TrainRows:
    """Token rows from (prompt, response) text."""
    ids, labels, mask = encode_pairs(pairs, tokenizer)
    return TrainRows(labels=labels, attention_mask=mask, input_ids=ids)


def train_lora(
    reference: Reference,
    rows: TrainRows,
    *,
    rank: int = 8,
    alpha: int = 16,
    steps: int = 200,
    batch_size: int = 16,
    lr: float = 3e-3,
    seed: int = 0,
    targets: Sequence[str] = LORA_TARGETS,
    on_step: Callable[[int, Any], None] | None = None,
) -> Any:
    """Fine-tune a LoRA adapter on `rows` and return the peft model (call `.unload()` to get the base back).

    `reference.model` itself is wrapped: unload before training another adapter on it. `on_step(k, model)` is
    called before the first step (k = 0) and after every step k (DASA's trajectory targets read the adapter there).
    """
    import torch
    from peft import LoraConfig, get_peft_model

    with seeded(seed):
        config = LoraConfig(r=rank, lora_alpha=alpha, target_modules=list(targets), lora_dropout=0.0)
        model = get_peft_model(reference.model, config)
        optimiser = torch.optim.AdamW([p for p in model.parameters() if p.requires_grad], lr=lr, weight_decay=0.0)
        generator = torch.Generator().manual_seed(seed)
        model.train()
        order = torch.randperm(len(rows), generator=generator)
        if on_step is not None:
            on_step(0, model)
        for step in range(steps):
            start = (step * batch_size) % len(rows)
            if start + batch_size > len(rows) and step:
                order = torch.randperm(len(rows), generator=generator)
            idx = order[start : start + batch_size]
            loss = model(**rows.batch(idx)).loss
            optimiser.zero_grad()
            loss.backward()
            optimiser.step()
            if on_step is not None:
                on_step(step + 1, model)
    model.eval()
    return model


def greedy_complete(model: Any, tokenizer: Tokenizer, prompts: Sequence[str], *, max_new: int = 12) -> list[str]:
    """Greedy completions (up to eos) of `prompts`, batched by prompt length."""
    import torch

    by_length: dict[int, list[int]] = {}
    encoded = [[tokenizer.bos_id, *tokenizer.encode(p)] for p in prompts]
    for i, ids in enumerate(encoded):
        by_length.setdefault(len(ids), []).append(i)
    results: list[str] = [""] * len(prompts)
    with torch.no_grad():
        for members in by_length.values():
            ids = torch.tensor([encoded[i] for i in members], dtype=torch.long)
            done = torch.zeros(len(members), dtype=torch.bool)
            out: list[list[int]] = [[] for _ in members]
            for _ in range(max_new):
                nxt = model(input_ids=ids).logits[:, -1].argmax(-1)
                for row, token in enumerate(nxt.tolist()):
                    if not done[row]:
                        done[row] = token == tokenizer.eos_id
                        if not done[row]:
                            out[row].append(token)
                if bool(done.all()):
                    break
                ids = torch.cat([ids, nxt[:, None]], dim=1)
            for row, i in enumerate(members):
                results[i] = tokenizer.decode(out[row])
    return results


def exact_match(model: Any, tokenizer: Tokenizer, pairs: Sequence[tuple[str, str]]) -> float:
    """Share of `pairs` whose greedy completion equals the response exactly."""
    answers = greedy_complete(model, tokenizer, [p for p, _ in pairs])
    return sum(a == r for a, (_, r) in zip(answers, pairs, strict=True)) / max(len(pairs), 1)


def source_loss(model: Any, tokenizer: Tokenizer, pairs: Sequence[tuple[str, str]]) -> float:
    """Mean token loss of `model` on the responses of `pairs`."""
    import torch

    ids, labels, mask = encode_pairs(pairs, tokenizer)
    with torch.no_grad():
        return float(model(input_ids=ids, attention_mask=mask, labels=labels).loss)


def train_and_evaluate(
    reference: Reference, rows: TrainRows, test_pairs: Sequence[tuple[str, str]], *, seed: int = 0, **settings: Any
) -> float:
    """Exact match on `test_pairs` after LoRA on `rows`; the reference model is restored afterwards."""
    model = train_lora(reference, rows, seed=seed, **settings)
    try:
        return exact_match(model, reference.tokenizer, test_pairs)
    finally:
        reference.model = model.unload()
