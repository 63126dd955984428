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

TaskName = Literal["copy", "reverse", "shift", "sort", "add", "recall"]
BASE_TASKS: tuple[TaskName, ...] = ("copy", "reverse")
ALPHABET = "abcdefghijklmnop"
Pair = tuple[str, str]


def _letters(rng: random.Random) -> str:
    return "".join(rng.choice(ALPHABET) for _ in range(rng.randint(3, 6)))


def _copy(rng: random.Random) -> Pair:
    text = _letters(rng)
    return f"{text}>", text


def _reverse(rng: random.Random) -> Pair:
    text = _letters(rng)
    return f"{text}<", text[::-1]


def _shift(rng: random.Random) -> Pair:
    text = _letters(rng)
    return f"{text}>", "".join(ALPHABET[(ALPHABET.index(c) + 1) % len(ALPHABET)] for c in text)


def _sort(rng: random.Random) -> Pair:
    text = _letters(rng)
    return f"{text}^", "".join(sorted(text))


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
    "copy": _copy,
    "reverse": _reverse,
    "shift": _shift,
    "sort": _sort,
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
