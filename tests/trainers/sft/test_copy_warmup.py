"""Copy warm-up: `prefix · item · gap · item` sequences (loss on the second item), SMILES spans, and a tiny LM
that learns to copy at a variable offset from them."""

from __future__ import annotations

from collections import Counter
from pathlib import Path
from random import Random

import pytest

from synth.trainers.sft.copy_warmup import SMILES_SPAN, copy_sequences, fit_copy, scrambled_span, smiles_spans
from synth.trainers.sft.data import IGNORE, EncodedDialogue, SftExample
from synth.trainers.sft.tiny import build_tiny_model, build_tiny_tokenizer

DIALOGUES = [EncodedDialogue(list(range(k * 100, k * 100 + 60)), [IGNORE] * 60, truncated=False) for k in range(3)]
MOLECULES = ("CC(=O)Oc1ccccc1C(=O)O", "c1ccc2[nH]ccc2c1", "CN1CCC[C@H]1c1cccnc1")


def _labelled(item: EncodedDialogue) -> list[int]:
    return [token for token in item.labels if token != IGNORE]


def test_second_window_repeats_the_first_and_alone_is_labelled() -> None:
    sequences = copy_sequences(DIALOGUES, count=20, seed=4, min_window=5, max_window=30, max_gap=10)
    assert len(sequences) == 20
    for item in sequences:
        labelled = _labelled(item)
        width = len(labelled)
        assert 5 <= width <= 30 and item.input_ids[:width] == labelled == item.input_ids[-width:]
        assert item.labels[: len(item.labels) - width] == [IGNORE] * (len(item.labels) - width)
        assert labelled == list(range(labelled[0], labelled[0] + width))  # one run of one dialogue, as is
    assert sequences == copy_sequences(DIALOGUES, count=20, seed=4, min_window=5, max_window=30, max_gap=10)
    assert sequences != copy_sequences(DIALOGUES, count=20, seed=5, min_window=5, max_window=30, max_gap=10)
    assert copy_sequences([], count=3, seed=0) == []


def test_span_items_are_copied_at_variable_offsets() -> None:
    spans = [[7000 + k, 7100 + k, 7200 + k] for k in range(4)]
    sequences = copy_sequences(DIALOGUES, count=200, seed=1, spans=spans, max_prefix=8, max_gap=12)
    offsets, prefixes = Counter(), Counter()
    for item in sequences:
        labelled = _labelled(item)
        assert labelled in spans and item.input_ids[-3:] == labelled and item.labels[-3:] == labelled
        first = item.input_ids.index(labelled[0])  # span tokens never occur in the dialogues
        assert item.input_ids[first : first + 3] == labelled and 0 <= first <= 8
        offsets[len(item.input_ids) - 3 - first] += 1
        prefixes[first] += 1
    assert min(offsets) == 3 and max(offsets) <= 15 and len(offsets) >= 10 and len(prefixes) == 9
    assert sequences == copy_sequences(DIALOGUES, count=200, seed=1, spans=spans, max_prefix=8, max_gap=12)


def test_smiles_spans_and_scrambled_spans() -> None:
    tokenizer = build_tiny_tokenizer([f"Input : <SMILES> {m} </SMILES> done" for m in MOLECULES], vocab_size=400)
    examples = [
        SftExample("a", ({"role": "user", "content": f"Input : <SMILES> {MOLECULES[0]} </SMILES>"},
                         {"role": "assistant", "content": f"<SMILES> {MOLECULES[1]} </SMILES>"}), (), None),
        SftExample("b", ({"role": "user", "content": f"<SMILES> {MOLECULES[1]} </SMILES>"},), (), None),
    ]  # fmt: skip
    spans = smiles_spans(tokenizer, examples)
    assert [SMILES_SPAN.fullmatch(tokenizer.decode(span)).group(1) for span in spans] == list(MOLECULES[:2])
    assert len(spans[0]) > len(MOLECULES[0])  # a character per token inside the span
    scrambled = SMILES_SPAN.fullmatch(tokenizer.decode(scrambled_span(tokenizer, MOLECULES[2], Random(0))))
    assert len(scrambled.group(1)) == len(MOLECULES[2]) and set(scrambled.group(1)) <= set(MOLECULES[2])
    assert scrambled.group(1) != MOLECULES[2]
    mixed = copy_sequences(
        [EncodedDialogue(spans[0], [IGNORE] * len(spans[0]), False)], count=40, seed=0, spans=spans, scramble=0.5,
        tokenizer=tokenizer,
    )  # fmt: skip
    copied = [SMILES_SPAN.fullmatch(tokenizer.decode(_labelled(item))).group(1) for item in mixed]
    assert 5 < sum(m not in MOLECULES for m in copied) < 35
    with pytest.raises(ValueError, match="`scramble`"):
        copy_sequences(DIALOGUES, count=1, seed=0, spans=spans, scramble=0.5)


def test_fit_copy_teaches_a_tiny_lm_to_copy_at_a_variable_offset(one_thread: None) -> None:
    import torch

    tokenizer = build_tiny_tokenizer(["abc"], vocab_size=300)
    model = build_tiny_model(tokenizer, seed=0, hidden=64, layers=2, heads=4, max_positions=128)
    rng = Random(0)
    alphabet = range(40, 56)

    def spans(count: int) -> list[list[int]]:
        return [[rng.choice(alphabet) for _ in range(6)] for _ in range(count)]

    fillers = [EncodedDialogue(list(range(100, 140)), [IGNORE] * 40, False)]
    train = copy_sequences(fillers, count=4096, seed=0, spans=spans(4096), max_prefix=4, max_gap=8)
    held = copy_sequences(fillers, count=64, seed=1, spans=spans(64), max_prefix=4, max_gap=8)

    def copy_loss(items: list[EncodedDialogue]) -> float:
        total = 0.0
        with torch.no_grad():
            for item in items:
                logits = model(input_ids=torch.tensor([item.input_ids])).logits[0, :-1]
                total += float(
                    torch.nn.functional.cross_entropy(logits, torch.tensor(item.labels[1:]), ignore_index=IGNORE)
                )
        return total / len(items)

    def unseen(item: EncodedDialogue) -> EncodedDialogue:  # the first copy replaced by other tokens
        width = len(_labelled(item))
        start = item.input_ids.index(item.labels[-width])
        other = [rng.choice(alphabet) for _ in range(width)]
        ids = item.input_ids[:start] + other + item.input_ids[start + width :]
        return EncodedDialogue(ids, item.labels, False)

    logged = fit_copy(model, train, steps=300, batch_size=32, lr=3e-3, seed=0, pad_id=tokenizer.pad_token_id)
    assert len(logged) == 10 and logged[-1] < 0.5 * logged[0]
    copied, blind = copy_loss(held), copy_loss([unseen(item) for item in held])
    assert copied < 0.5 and blind > 1.5  # it reads the first copy: without it the loss stays near log(16)


def test_marco_sft_warms_up_on_the_molecules(tmp_path: Path, one_thread: None) -> None:
    from synth.core.config import parse_config
    from synth.pipelines.execution import run_local
    from synth.trainers.sft import train_sft

    generator = {"task": "PQS", "sources": 3, "settings": ["seen"], "group_size": 2, "budget": 1}
    run_local(parse_config({"domain": "marco", "seed": 1, "shards": 1, "generator": generator}), tmp_path / "data")
    metrics = train_sft(
        tmp_path / "data", out=tmp_path / "m", steps=1, copy_warmup=3, copy_batch_size=2, assistant_turns=1,
        eval_rows=2, batch_size=2, max_new_tokens=2,
    )  # fmt: skip
    settings = metrics["settings"]["copy_warmup_settings"]
    assert settings == {"batch_size": 2, "lr": 3e-3, "items": "smiles_spans"}
    assert len(metrics["loss"]["copy_warmup_logged"]) == 3
    held = metrics["loss"]["copy_held_out"]
    assert held["before"] > 0 and held["after"] > 0 and held["after"] != held["before"]
