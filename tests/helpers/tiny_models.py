"""A tiny random chat model (local BPE tokenizer, the tool chat template) saved like any HF model folder.

On the test path through `pythonpath = ["tests/helpers"]`; nothing is downloaded.
"""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path

MARCO_TEXTS = ("<SMILES> CCOc1ccccc1 </SMILES> Improve the modified molecule based on the following feedback:",) * 8


def save_tiny_chat_model(path: Path, texts: Sequence[str] = MARCO_TEXTS, *, seed: int = 0) -> Path:
    """Build and save a tiny Llama (hidden 32, one layer) with a tokenizer trained on `texts`; returns `path`."""
    from synth.trainers.sft.tiny import build_tiny_model, build_tiny_tokenizer

    tokenizer = build_tiny_tokenizer(list(texts), vocab_size=320)
    model = build_tiny_model(tokenizer, seed=seed, hidden=32, layers=1, heads=2)
    tokenizer.save_pretrained(path)
    model.save_pretrained(path)
    return path
