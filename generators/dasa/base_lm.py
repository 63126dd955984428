"""The frozen reference model: a tiny Llama-style LM with a byte-level tokenizer, built and pre-trained locally.

`build_base_lm` pre-trains on the base tasks (copy, reverse) so that adapting it to a related task means something,
and saves it with `save_pretrained` beside `synth_tokenizer.json`; `load_reference` loads it, or any local HF causal
LM directory (Llama/Qwen), and fingerprints its input embedding matrix. Same seed and settings give the same weights.
"""

from __future__ import annotations

import contextlib
import hashlib
import json
from collections.abc import Iterator, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

from synth.generators.dasa.tasks import BASE_TASKS, make_pairs

if TYPE_CHECKING:
    import torch

TOKENIZER_FILE = "synth_tokenizer.json"
IGNORE = -100


@dataclass(frozen=True)
class ByteTokenizer:
    """Bytes shifted by the three special ids (pad 0, bos 1, eos 2)."""

    pad_id: int = 0
    bos_id: int = 1
    eos_id: int = 2
    offset: int = 3

    @property
    def vocab_size(self) -> int:
        return 256 + self.offset

    def encode(self, text: str) -> list[int]:
        return [b + self.offset for b in text.encode("utf-8")]

    def decode(self, ids: Sequence[int]) -> str:
        data = bytes(i - self.offset for i in ids if self.offset <= i < self.vocab_size)
        return data.decode("utf-8", errors="replace")


class HFTokenizerAdapter:
    """A HF tokenizer behind the `ByteTokenizer` interface (no special tokens added by `encode`)."""

    def __init__(self, tokenizer: Any) -> None:
        self.tokenizer = tokenizer
        self.eos_id = int(tokenizer.eos_token_id)
        self.bos_id = int(tokenizer.bos_token_id if tokenizer.bos_token_id is not None else tokenizer.eos_token_id)
        self.pad_id = int(tokenizer.pad_token_id if tokenizer.pad_token_id is not None else self.eos_id)

    def encode(self, text: str) -> list[int]:
        return list(self.tokenizer.encode(text, add_special_tokens=False))

    def decode(self, ids: Sequence[int]) -> str:
        return str(self.tokenizer.decode(list(ids), skip_special_tokens=True))


Tokenizer = ByteTokenizer | HFTokenizerAdapter


@dataclass
class Reference:
    """A loaded reference model with its tokenizer and the identity stored in datasets made with it."""

    model: Any
    tokenizer: Tokenizer
    model_id: str
    hidden_size: int
    embedding_hash: str


@contextlib.contextmanager
def seeded(seed: int) -> Iterator[None]:
    """Fork torch's RNG, seed it, and turn on deterministic kernels for the block."""
    import torch

    previous = torch.are_deterministic_algorithms_enabled()
    with torch.random.fork_rng(devices=[]):
        torch.manual_seed(seed)
        torch.use_deterministic_algorithms(True)
        try:
            yield
        finally:
            torch.use_deterministic_algorithms(previous)


def embedding_hash(model: Any) -> str:
    """sha256 (first 16 hex) of the input embedding matrix as float32 bytes."""
    weight = model.get_input_embeddings().weight.detach().float().contiguous().cpu().numpy()
    return hashlib.sha256(weight.tobytes()).hexdigest()[:16]


def encode_pairs(
    pairs: Sequence[tuple[str, str]], tokenizer: Tokenizer, *, length: int | None = None
) -> tuple[torch.Tensor, torch.Tensor, torch.Tensor]:
    """Right-padded `(input_ids, labels, attention_mask)` of `bos prompt response eos`; prompt labels are -100."""
    import torch

    seqs, labs = [], []
    for prompt, response in pairs:
        p, r = tokenizer.encode(prompt), tokenizer.encode(response)
        seqs.append([tokenizer.bos_id, *p, *r, tokenizer.eos_id])
        labs.append([IGNORE] * (1 + len(p)) + [*r, tokenizer.eos_id])
    width = length or max(len(s) for s in seqs)
    if any(len(s) > width for s in seqs):
        msg = f"an example is longer than `length`={width} tokens"
        raise ValueError(msg)
    ids = torch.tensor([s + [tokenizer.pad_id] * (width - len(s)) for s in seqs], dtype=torch.long)
    labels = torch.tensor([s + [IGNORE] * (width - len(s)) for s in labs], dtype=torch.long)
    mask = torch.tensor([[1] * len(s) + [0] * (width - len(s)) for s in seqs], dtype=torch.long)
    return ids, labels, mask


def build_tiny_model(*, seed: int, vocab_size: int, hidden: int = 64, layers: int = 2) -> Any:
    """A randomly initialised Llama-style causal LM (eager attention: double backprop needs it)."""
    from transformers import LlamaConfig, LlamaForCausalLM

    config = LlamaConfig(
        vocab_size=vocab_size,
        hidden_size=hidden,
        intermediate_size=2 * hidden,
        num_hidden_layers=layers,
        num_attention_heads=4,
        num_key_value_heads=4,
        max_position_embeddings=64,
        bos_token_id=1,
        eos_token_id=2,
        pad_token_id=0,
        tie_word_embeddings=False,
        attn_implementation="eager",
    )
    with seeded(seed):
        return LlamaForCausalLM(config)


def pretrain(
    model: Any, tokenizer: Tokenizer, *, steps: int, seed: int, batch_size: int = 32, lr: float = 3e-3
) -> float:
    """Train all weights on fresh base-task batches (copy and reverse); returns the last loss."""
    import torch

    pairs = [p for task in BASE_TASKS for p in make_pairs(task, steps * batch_size // 2 + batch_size, seed=seed)]
    ids, labels, mask = encode_pairs(pairs, tokenizer)
    order = torch.randperm(len(pairs), generator=torch.Generator().manual_seed(seed))
    optimiser = torch.optim.AdamW(model.parameters(), lr=lr, weight_decay=0.0)
    schedule = torch.optim.lr_scheduler.LambdaLR(optimiser, lambda s: min(1.0, (s + 1) / 50) * (1 - s / steps))
    model.train()
    loss = torch.tensor(0.0)
    with seeded(seed):
        for step in range(steps):
            idx = order[(step * batch_size) % len(order) :][:batch_size]
            loss = model(input_ids=ids[idx], attention_mask=mask[idx], labels=labels[idx]).loss
            optimiser.zero_grad()
            loss.backward()
            torch.nn.utils.clip_grad_norm_(model.parameters(), 1.0)
            optimiser.step()
            schedule.step()
    model.eval()
    return float(loss.detach())


def build_base_lm(
    out: str | Path, *, seed: int = 0, hidden: int = 64, layers: int = 2, steps: int = 600, threads: int | None = 1
) -> Path:
    """Build, pre-train and save the tiny reference LM in `out` (reused as is when `out` already holds it).

    Returns `out`. `threads` fixes torch's thread count while training (None leaves it), for byte-identical weights.
    """
    import torch

    out = Path(out).expanduser()
    settings = {"seed": seed, "hidden": hidden, "layers": layers, "steps": steps, "tasks": list(BASE_TASKS)}
    meta = out / TOKENIZER_FILE
    if meta.is_file():
        existing = json.loads(meta.read_text())["base_lm"]
        if existing != settings:
            msg = f"{out}: holds a base LM built with {existing}, not {settings}; use another directory"
            raise ValueError(msg)
        return out
    tokenizer = ByteTokenizer()
    model = build_tiny_model(seed=seed, vocab_size=tokenizer.vocab_size, hidden=hidden, layers=layers)
    previous = torch.get_num_threads()
    if threads is not None:
        torch.set_num_threads(threads)
    try:
        loss = pretrain(model, tokenizer, steps=steps, seed=seed)
    finally:
        torch.set_num_threads(previous)
    tmp = out.with_name(f".{out.name}.tmp")
    model.save_pretrained(tmp, safe_serialization=True)
    (tmp / TOKENIZER_FILE).write_text(json.dumps({"kind": "bytes", "base_lm": settings, "final_loss": loss}))
    tmp.replace(out)
    return out


def load_reference(path: str | Path, *, model_id: str | None = None) -> Reference:
    """Load a reference LM directory (from `build_base_lm`, or any local HF causal LM) with eager attention."""
    from transformers import AutoModelForCausalLM

    path = Path(path).expanduser()
    if not (path / "config.json").is_file():
        msg = f"{path}: not a model directory (no config.json); build one with `synth train base-lm`"
        raise FileNotFoundError(msg)
    model = AutoModelForCausalLM.from_pretrained(path, attn_implementation="eager")
    model.eval()
    tokenizer: Tokenizer
    if (path / TOKENIZER_FILE).is_file():
        tokenizer = ByteTokenizer()
    else:
        from transformers import AutoTokenizer

        tokenizer = HFTokenizerAdapter(AutoTokenizer.from_pretrained(path))
    digest = embedding_hash(model)
    return Reference(
        model=model,
        tokenizer=tokenizer,
        model_id=model_id or f"{path.name}@{digest}",
        hidden_size=int(model.config.hidden_size),
        embedding_hash=digest,
    )
