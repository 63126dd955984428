"""Copy warm-up: teach a tiny LM built from scratch to copy before SFT, from the training dialogues' own tokens.

Most of what a MARCO answer or a ToolForge first call says is copied from the prompt (the source molecule, a tool
name, the question's words). A randomly initialised 2-layer LM does not learn to copy from a few hundred SFT
steps: it learns the answers' unconditional token statistics. The warm-up trains the copy circuit directly, on
sequences `window · gap · window` with the loss on the second copy of the window only. A window is, in turn,
tokens drawn at random from the dialogues' vocabulary (nearly unique tokens: the copy circuit forms within a few
hundred steps), a dialogue's run of tokens shuffled (its low-entropy alphabet, e.g. SMILES characters, in random
order: copying needs a match on more than one token), or a dialogue's run as is; the gap is another dialogue's
run. Seeded: the same dialogues, counts and seed give the same sequences.
"""

from __future__ import annotations

from collections.abc import Sequence
from random import Random

from synth.trainers.sft.data import IGNORE, EncodedDialogue


def copy_sequences(
    dialogues: Sequence[EncodedDialogue],
    *,
    count: int,
    seed: int,
    min_window: int = 16,
    max_window: int = 96,
    max_gap: int = 64,
) -> list[EncodedDialogue]:
    """`count` copy sequences `window · gap · window` (labels on the second window) from `dialogues`' tokens."""
    if not dialogues:
        return []
    rng = Random(seed)
    vocabulary = sorted({token for dialogue in dialogues for token in dialogue.input_ids})
    out = []
    for index in range(count):
        source = dialogues[rng.randrange(len(dialogues))].input_ids
        width = min(rng.randint(min_window, max_window), len(source))
        start = rng.randrange(len(source) - width + 1)
        window = source[start : start + width]
        if index % 3 == 0:
            window = [vocabulary[rng.randrange(len(vocabulary))] for _ in window]
        elif index % 3 == 1:
            rng.shuffle(window)
        filler = dialogues[rng.randrange(len(dialogues))].input_ids
        gap_width = min(rng.randint(0, max_gap), len(filler))
        gap_start = rng.randrange(len(filler) - gap_width + 1)
        gap = filler[gap_start : gap_start + gap_width]
        ids = [*window, *gap, *window]
        labels = [IGNORE] * (len(window) + len(gap)) + list(window)
        out.append(EncodedDialogue(ids, labels, truncated=False))
    return out
