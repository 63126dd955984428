"""Copy warm-up sequences: `window · gap · window` cut from the dialogues, loss on the second window, seeded."""

from __future__ import annotations

from synth.trainers.sft.copy_warmup import copy_sequences
from synth.trainers.sft.data import IGNORE, EncodedDialogue

DIALOGUES = [EncodedDialogue(list(range(k * 100, k * 100 + 60)), [IGNORE] * 60, truncated=False) for k in range(3)]


def test_second_window_repeats_the_first_and_alone_is_labelled() -> None:
    sequences = copy_sequences(DIALOGUES, count=20, seed=4, min_window=5, max_window=30, max_gap=10)
    assert len(sequences) == 20
    for item in sequences:
        labelled = [token for token in item.labels if token != IGNORE]
        width = len(labelled)
        assert 5 <= width <= 30 and item.input_ids[:width] == labelled == item.input_ids[-width:]
        assert item.labels[: len(item.labels) - width] == [IGNORE] * (len(item.labels) - width)
        assert labelled == list(range(labelled[0], labelled[0] + width))  # one run of one dialogue, as is
    assert sequences == copy_sequences(DIALOGUES, count=20, seed=4, min_window=5, max_window=30, max_gap=10)
    assert sequences != copy_sequences(DIALOGUES, count=20, seed=5, min_window=5, max_window=30, max_gap=10)
    assert copy_sequences([], count=3, seed=0) == []
