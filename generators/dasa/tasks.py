"""Adaptation tasks a tiny LM can learn and be scored on by exact match, deterministic per seed, plus a reader of
(prompt, response) rows from a synth or HF dataset.

A task example is a pair `(prompt, response)`: the model reads `prompt` (which ends in `>`) and must write
`response` then end-of-sequence. Nothing here imports torch.
"""

from __future__ import annotations

import random
from collections.abc import Callable
from pathlib import Path
from typing import Literal

TaskName = Literal["copy", "reverse", "shift", "sort", "add", "recall", "increment", "cipher"]
BASE_TASKS: tuple[TaskName, ...] = ("copy", "reverse")
ALPHABET = "abcdefghijklmnop"
Pair = tuple[str, str]
# the `cipher` task's key: a fixed substitution of the alphabet, knowledge the LoRA must store in its weights
CIPHER = dict(zip(ALPHABET, random.Random("synth-dasa-cipher").sample(ALPHABET, len(ALPHABET)), strict=True))


def _letters(rng: random.Random) -> str:
    return "".join(rng.choice(ALPHABET) for _ in range(rng.randint(3, 6)))


def _shift_text(text: str) -> str:
    return "".join(ALPHABET[(ALPHABET.index(c) + 1) % len(ALPHABET)] for c in text)


def _increment_text(text: str) -> str:
    """Small arithmetic: add one to a base-16 numeral written with the letters a..p (a = 0), carry included."""
    value = 0
    for c in text:
        value = 16 * value + ALPHABET.index(c)
    value = (value + 1) % 16 ** len(text)
    digits = []
    for _ in text:
        value, digit = divmod(value, 16)
        digits.append(ALPHABET[digit])
    return "".join(reversed(digits))


# letter tasks: prompt = letters + marker, response = rule(letters)
LETTER_RULES: dict[str, tuple[str, Callable[[str], str]]] = {
    "copy": (">", lambda text: text),
    "reverse": ("<", lambda text: text[::-1]),
    "shift": (">", _shift_text),
    "sort": ("^", lambda text: "".join(sorted(text))),
    "increment": (">", _increment_text),
    "cipher": (">", lambda text: "".join(CIPHER[c] for c in text)),  # knowledge-style lookup of a fixed table
}


def _letter_task(name: str) -> Callable[[random.Random], Pair]:
    marker, rule = LETTER_RULES[name]

    def make(rng: random.Random) -> Pair:
        text = _letters(rng)
        return f"{text}{marker}", rule(text)

    return make


def answer(task: str, prompt: str) -> str | None:
    """The correct response to a letter task's prompt; None when the prompt is not one of that task's (marker,
    letters) or the task is not a letter task."""
    if task not in LETTER_RULES:
        return None
    marker, rule = LETTER_RULES[task]
    text = prompt[: -len(marker)]
    if not prompt.endswith(marker) or not text or any(c not in ALPHABET for c in text):
        return None
    return rule(text)


def _add(rng: random.Random) -> Pair:
    a, b = rng.randint(0, 99), rng.randint(0, 99)
    return f"{a}+{b}=", str(a + b)


def _recall(rng: random.Random) -> Pair:
    keys = rng.sample(ALPHABET, 3)
    values = [rng.choice("0123456789") for _ in keys]
    query = rng.randrange(len(keys))
    facts = "".join(f"{k}{v}" for k, v in zip(keys, values, strict=True))
    return f"{facts}?{keys[query]}>", values[query]


TASKS: dict[str, Callable[[random.Random], Pair]] = {
    **{name: _letter_task(name) for name in LETTER_RULES},
    "add": _add,
    "recall": _recall,
}


def make_pairs(task: TaskName | str, n: int, *, seed: int) -> list[Pair]:
    """`n` examples of `task`, the same for the same seed.

    >>> make_pairs("shift", 1, seed=0)
    [('fogpn>', 'gphao')]
    """
    if task not in TASKS:
        msg = f"unknown task {task!r}; choose from {list(TASKS)}"
        raise ValueError(msg)
    rng = random.Random(f"{task}|{seed}")
    return [TASKS[task](rng) for _ in range(n)]


def split_pairs(task: TaskName | str, *, train: int, test: int, seed: int) -> tuple[list[Pair], list[Pair]]:
    """Disjoint train and test examples (test prompts never seen in train)."""
    pool = make_pairs(task, 4 * (train + test), seed=seed)
    seen: set[str] = set()
    unique = [p for p in pool if not (p[0] in seen or seen.add(p[0]))]
    if len(unique) < train + test:
        msg = f"task {task!r} has too few distinct prompts for {train} train + {test} test examples"
        raise ValueError(msg)
    return unique[:train], unique[train : train + test]


def read_pairs(source: str | Path, *, prompt: str = "prompt", response: str = "response") -> list[Pair]:
    """(prompt, response) rows from a synth output dir, a Parquet file or dir, or a local HF dataset dir."""
    import datasets

    path = Path(source).expanduser()
    if path.is_file():
        table = datasets.load_dataset("parquet", data_files=str(path), split="train")
    else:
        table = datasets.load_dataset(str(path), split="train")
    missing = [c for c in (prompt, response) if c not in table.column_names]
    if missing:
        msg = f"{source}: no column {missing[0]!r}; columns are {table.column_names}"
        raise ValueError(msg)
    return list(zip(table[prompt], table[response], strict=True))
