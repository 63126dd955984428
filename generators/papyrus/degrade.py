"""Degrade a clean text to exact character error rates (CER = Levenshtein distance / reference length).

Per document and variant, one seeded plan orders every edit the text could receive: first the variant's
own operations (non-adjacent for ``uniform``/``confusable``), then a reserve of operations at all unused
sites. Each operation is one unit edit, so applying one more operation changes the Levenshtein distance
by at most one. Level ``c`` takes the shortest prefix of the plan whose measured distance is exactly
``k = round(c * N)``: start at ``k`` operations and, while the distance ``d`` falls short (operations can
merge), add ``k - d`` more. The distance can never overshoot, so the result is exact, and because every
level takes a prefix of the same plan the errors at a lower level are a subset of those at a higher one.
Lost lines, when drawn, are deleted first (a line of length L costs L + 1) and the rest of the budget is
spent on character errors.
"""

from __future__ import annotations

import hashlib
import math
from collections.abc import Iterator, Sequence
from dataclasses import dataclass
from itertools import chain
from typing import Literal

import numpy as np
from rapidfuzz.distance import Levenshtein

from synth.generators.papyrus.epidoc import GREEK_LETTERS

__all__ = [
    "CONFUSION_GROUPS",
    "DEFAULT_LEVELS",
    "SPLITS",
    "VARIANTS",
    "Degradation",
    "TooShort",
    "Variant",
    "degrade_levels",
]

Variant = Literal["uniform", "confusable", "burst", "word"]
VARIANTS: tuple[Variant, ...] = ("uniform", "confusable", "burst", "word")
DEFAULT_LEVELS = (0.01, 0.02, 0.03, 0.05, 0.075, 0.10, 0.15, 0.20, 0.30, 0.50)

#: Groups of Greek letters that are easily misread for one another.
CONFUSION_GROUPS = ("εθοσ", "γτπ", "λαδ", "ηνι", "μν", "ρφ", "υψ", "κχ", "οω")
#: One letter read as two (two unit edits: a substitution and an insertion).
SPLITS = {"π": "τι", "μ": "λλ"}

_LETTERS = "αβγδεζηθικλμνξοπρστυφχψω"  # replacement letters: the standard 24
_ALPHABET = frozenset(GREEK_LETTERS + " \n")
_TEXT_LETTERS = frozenset(GREEK_LETTERS)
_CONFUSIONS: dict[str, tuple[str, ...]] = {}
for _group in CONFUSION_GROUPS:
    for _letter in _group:
        _partners = _CONFUSIONS.get(_letter, ()) + tuple(p for p in _group if p != _letter)
        _CONFUSIONS[_letter] = tuple(dict.fromkeys(_partners))

_SPLIT_SHARE = 0.3  # share of split letters (π, μ) read as two letters under `confusable`
_BURST_MEAN = 4.0  # mean length of a damage run
_WORD_WEIGHTS = {"space": 3.0, "split": 0.3, "edge": 2.0, "inner": 0.5}
_MAX_EVALUATIONS = 500  # distance evaluations per level before reseeding
_MAX_ATTEMPTS = 3  # plans tried per level (the first, then reseeds)
_RESERVE_CHUNK = 32  # extra reserve edits built beyond the immediate need


@dataclass(frozen=True, slots=True)
class Degradation:
    """A noisy text at exactly ``k`` edits from its reference.

    Attributes:
        cer_target: The requested CER level c.
        k: Target edits, ``round(c * N)`` with N the reference length including spaces and newlines.
        text_noisy: The degraded text (Greek letters, space and newline only).
        edit_distance: ``Levenshtein.distance(clean, noisy)``; always equals ``k``.
        lost_lines: Whole lines deleted.
        k_line: Edits spent on lost lines (sum of L + 1).
        k_char: Edits spent on character errors, ``k - k_line``.
        cer_actual: ``edit_distance / N``.
        attempts: Tries: 1, or more when ``k`` was out of reach (the lost lines are dropped first, then the
            plan is reseeded).
    """

    cer_target: float
    k: int
    text_noisy: str
    edit_distance: int
    lost_lines: int
    k_line: int
    k_char: int
    cer_actual: float
    attempts: int


@dataclass(frozen=True, slots=True)
class TooShort:
    """A level that cannot be produced for this text (too short, so k would be 0, or unreachable)."""

    cer_target: float
    k: int
    n_ref: int
    reason: str


@dataclass(frozen=True, slots=True)
class _Op:
    """One unit edit: insert `value` before `pos`, or make position `pos` read `value` ("" deletes)."""

    pos: int
    insert: bool
    value: str


def degrade_levels(
    text: str,
    *,
    doc_id: str,
    variant: Variant,
    seed: int,
    levels: Sequence[float] = DEFAULT_LEVELS,
    lost_lines: float = 0.0,
    sample: int = 0,
) -> list[Degradation | TooShort]:
    """Degrade `text` to each CER level, exactly: ``Levenshtein.distance(text, noisy) == round(c * N)``.

    The result depends only on the arguments (the RNG is keyed by seed, doc_id, variant and sample), not
    on the order in which documents are processed.

    Args:
        text: A clean reference (Greek letters, space, newline), e.g. `PapyrusDocument.text`.
        doc_id: The document key mixed into the seed.
        variant: The error shape: ``uniform`` (i.i.d. sites, sub:del:ins 0.6:0.2:0.2), ``confusable``
            (visually confusable letters, splits like π→τι), ``burst`` (damage runs, geometric lengths
            of mean 4) or ``word`` (space deletion/insertion, errors at word and line edges).
        seed: The run seed.
        levels: CER targets in (0, 1]; one result per level, in this order.
        lost_lines: Probability, per level, that whole lines are lost (deleted) within the budget.
        sample: Index of an independent draw for the same document and variant.

    Returns:
        A `Degradation` per level, or a `TooShort` where ``N < 1/c`` or ``k`` cannot be reached.

    Raises:
        ValueError: An unknown `variant`, a level outside (0, 1], `lost_lines` outside [0, 1], or a
            character outside the Greek letters, space and newline.

    Example:
        >>> text = "ετουσ μϛ μεσορη δ εν παθυρε\\nομολογει πανερευσ γουνσιοσ"
        >>> result = degrade_levels(text, doc_id="ddb:p.adl.G2", variant="uniform", seed=0, levels=[0.1])[0]
        >>> (result.k, result.edit_distance, Levenshtein.distance(text, result.text_noisy))
        (5, 5, 5)
    """
    _check_arguments(text, variant=variant, levels=levels, lost_lines=lost_lines)
    key = f"{seed}|{doc_id}|{variant}|{sample}"
    rng = _generator(key)
    planner = _plan(text, rng, variant)
    line_spans = _line_spans(text)
    lost_key = int(rng.integers(2**63)) if lost_lines > 0 and len(line_spans) > 1 else None
    line_order = [int(j) for j in rng.permutation(len(line_spans))] if lost_key is not None else []
    n_ref = len(text)
    results: dict[int, Degradation | TooShort] = {}
    solver = _Solver(planner)
    for index in sorted(range(len(levels)), key=lambda i: (levels[i], i)):
        level = float(levels[index])
        k = round(level * n_ref)
        if level * n_ref < 1:
            reason = f"text too short: n_ref={n_ref} < 1/cer={1 / level:.4g}"
            results[index] = TooShort(cer_target=level, k=k, n_ref=n_ref, reason=reason)
            continue
        lost: list[int] = []
        if lost_key is not None and _lost_drawn(lost_key, level, lost_lines):
            lost = _choose_lost_lines(line_spans, line_order, k=k, key=lost_key, level=level)
        results[index] = _degrade_level(solver, key, variant, level=level, k=k, lost=lost, spans=line_spans)
    return [results[i] for i in range(len(levels))]


def _check_arguments(text: str, *, variant: str, levels: Sequence[float], lost_lines: float) -> None:
    if variant not in VARIANTS:
        msg = f"`variant` must be one of {', '.join(VARIANTS)}; got {variant!r}"
        raise ValueError(msg)
    for level in levels:
        if not 0 < level <= 1:
            msg = f"each of `levels` must lie in (0, 1]; got {level!r}"
            raise ValueError(msg)
    if not 0 <= lost_lines <= 1:
        msg = f"`lost_lines` must lie in [0, 1]; got {lost_lines!r}"
        raise ValueError(msg)
    bad = next((char for char in text if char not in _ALPHABET), None)
    if bad is not None:
        msg = f"`text` holds {bad!r} (U+{ord(bad):04X}); expected Greek letters, space and newline only"
        raise ValueError(msg + ". Hint: build it with `strip_edition` or `normalise_greek`.")


def _generator(key: str) -> np.random.Generator:
    digest = hashlib.blake2b(key.encode(), digest_size=8).digest()
    return np.random.Generator(np.random.PCG64(int.from_bytes(digest, "little")))


def _degrade_level(
    solver: _Solver,
    key: str,
    variant: Variant,
    *,
    level: float,
    k: int,
    lost: list[int],
    spans: list[tuple[int, int]],
) -> Degradation | TooShort:
    """Solve one level; when k is out of reach, drop the lost lines, then reseed the plan."""
    n_ref = len(solver.text)
    for attempt, (trial, trial_lost) in enumerate(_trials(solver, key, variant, lost), start=1):
        removed = _removed_positions(spans, trial_lost, n_ref)
        noisy = trial.solve(k, removed=removed)
        if noisy is not None:
            return Degradation(
                cer_target=level,
                k=k,
                text_noisy=noisy,
                edit_distance=k,
                lost_lines=len(trial_lost),
                k_line=len(removed),
                k_char=k - len(removed),
                cer_actual=k / n_ref,
                attempts=attempt,
            )
    reason = f"edit distance {k} not reached after {attempt} attempts"
    return TooShort(cer_target=level, k=k, n_ref=n_ref, reason=reason)


def _trials(solver: _Solver, key: str, variant: Variant, lost: list[int]) -> Iterator[tuple[_Solver, list[int]]]:
    """The plan with its lost lines, the same plan without them, then reseeded plans without them."""
    yield solver, lost
    if lost:
        yield solver, []
    for retry in range(1, _MAX_ATTEMPTS):
        yield _Solver(_plan(solver.text, _generator(f"{key}|retry{retry}"), variant)), []


class _Solver:
    """Find the shortest plan prefix at exactly k edits; consecutive calls with rising k reuse the work."""

    def __init__(self, planner: _Planner) -> None:
        self.planner = planner
        self.text = planner.text
        self._removed: tuple[int, ...] | None = None
        self._state = _Hypothesis(self.text, ())
        self._ops: list[_Op] = []
        self._start = 0

    def solve(self, k: int, *, removed: tuple[int, ...]) -> str | None:
        if removed != self._removed:
            self._ops = self._usable(self.planner.ops, removed)
            self._state = _Hypothesis(self.text, removed)
            self._removed = removed
            self._start = 0
        # d(prefix p) <= len(removed) + p, so no prefix shorter than this reaches k.
        prefix = max(self._start, k - len(removed))
        for _ in range(_MAX_EVALUATIONS):
            while prefix > len(self._ops) and not self.planner.exhausted:
                more = self.planner.reserve(prefix - len(self._ops) + _RESERVE_CHUNK)
                self._ops.extend(self._usable(more, removed))
            if prefix > len(self._ops):
                return None
            if prefix < self._state.applied:  # only after an earlier level gave up: rebuild
                self._state = _Hypothesis(self.text, removed)
            self._state.advance(self._ops, prefix)
            noisy = self._state.render()
            # The distance never exceeds k here (unit edits), so a cutoff at k keeps it exact while rapidfuzz
            # only fills a band of width about 2k around the diagonal (any larger value comes back as k + 1).
            distance = Levenshtein.distance(self.text, noisy, score_cutoff=k)
            if distance == k:
                self._start = prefix
                return noisy
            if distance > k:  # impossible for unit edits; refuse rather than return a wrong row
                return None
            prefix += k - distance
        return None

    @staticmethod
    def _usable(ops: list[_Op], removed: tuple[int, ...]) -> list[_Op]:
        gone = set(removed)
        return [op for op in ops if op.pos not in gone]


class _Hypothesis:
    """The noisy text as per-position readings plus insertions before each position."""

    def __init__(self, text: str, removed: tuple[int, ...]) -> None:
        self.reading = list(text)
        for pos in removed:
            self.reading[pos] = ""
        self.inserted = [""] * (len(text) + 1)
        self.applied = 0

    def advance(self, ops: list[_Op], prefix: int) -> None:
        for op in ops[self.applied : prefix]:
            if op.insert:
                self.inserted[op.pos] = op.value
            else:
                self.reading[op.pos] = op.value
        self.applied = prefix

    def render(self) -> str:
        pairs = chain.from_iterable(zip(self.inserted, self.reading, strict=False))
        return "".join(pairs) + self.inserted[-1]


def _line_spans(text: str) -> list[tuple[int, int]]:
    """Return (start, end) of each line, end exclusive and without the newline."""
    spans = []
    start = 0
    for line in text.split("\n"):
        spans.append((start, start + len(line)))
        start += len(line) + 1
    return spans


def _lost_drawn(lost_key: int, level: float, probability: float) -> bool:
    return _level_generator(lost_key, level).random() < probability


def _level_generator(lost_key: int, level: float) -> np.random.Generator:
    """A generator per (document, level), so lost-line draws do not depend on which levels are asked."""
    return np.random.Generator(np.random.PCG64([lost_key, round(level * 1_000_000_000)]))


def _choose_lost_lines(spans: list[tuple[int, int]], order: list[int], *, k: int, key: int, level: float) -> list[int]:
    """Pick whole lines in the shared random order, within a random share of k (at least one if any fits)."""
    rng = _level_generator(key, level)
    rng.random()  # the lost/not-lost draw
    budget = max(1, math.floor(rng.uniform(0.25, 0.75) * k))
    chosen: list[int] = []
    spent = 0
    for line in order:
        cost = spans[line][1] - spans[line][0] + 1
        if len(chosen) < len(spans) - 1 and spent + cost <= budget:
            chosen.append(line)
            spent += cost
    if not chosen:
        chosen = next(([line] for line in order if spans[line][1] - spans[line][0] + 1 <= k), [])
    return sorted(chosen)


def _removed_positions(spans: list[tuple[int, int]], lost: list[int], n: int) -> tuple[int, ...]:
    """Positions deleted with the lost lines: each line with one newline, L + 1 characters per line."""
    lost_set = set(lost)
    removed: list[int] = []
    tail = len(spans)  # the first line of the run of lost lines that ends the text
    while tail > 0 and tail - 1 in lost_set:
        tail -= 1
    for line in sorted(lost_set):
        start, end = spans[line]
        removed.extend(range(start, end))
        # Trailing newline, unless the line ends a lost run at the very end: then the preceding one.
        removed.append(start - 1 if line >= tail else end)
    return tuple(sorted(p for p in removed if 0 <= p < n))


# --- plans -------------------------------------------------------------------------------------------


def _plan(text: str, rng: np.random.Generator, variant: Variant) -> _Planner:
    """Plan the variant's own edits now; the reserve is seeded now and built only when a level needs it."""
    planner = _Planner(text, rng)
    if variant == "uniform":
        planner.plan_uniform()
    elif variant == "confusable":
        planner.plan_confusable()
    elif variant == "burst":
        planner.plan_burst()
    else:
        planner.plan_word()
    planner.reserve_seed = int(rng.integers(2**63))
    return planner


class _Planner:
    """Builds the ordered unit edits for one text; site bookkeeping keeps edits apart and distinct."""

    def __init__(self, text: str, rng: np.random.Generator) -> None:
        self.text = text
        self.n = len(text)
        self.rng = rng
        self.ops: list[_Op] = []
        self.anchored = bytearray(self.n + 3)  # phase-one sites, offset by one
        self.read = bytearray(self.n)  # positions with a reading op
        self.filled = bytearray(self.n + 1)  # gaps with an insertion
        self._pool = np.empty(0)
        self._next = 0
        self.reserve_seed = 0
        self._reserve_sites: list[tuple[int, bool]] | None = None
        self._reserve_next = 0

    # random draws come from a pooled array: one numpy call per few thousand draws
    def uniform(self) -> float:
        if self._next >= len(self._pool):
            self._pool = self.rng.random(max(256, 2 * self.n))
            self._next = 0
        value = float(self._pool[self._next])
        self._next += 1
        return value

    def pick(self, options: Sequence[str]) -> str:
        return options[min(int(self.uniform() * len(options)), len(options) - 1)]

    def letter(self, *exclude: str) -> str:
        """A random replacement letter that is none of `exclude` (rejection sampling)."""
        while True:
            value = self.pick(_LETTERS)
            if value not in exclude:
                return value

    def char(self, pos: int) -> str:
        return self.text[pos] if 0 <= pos < self.n else ""

    def free(self, pos: int) -> bool:
        """True when neither `pos` nor a neighbour is a phase-one site (sites stay two apart)."""
        return not (self.anchored[pos] or self.anchored[pos + 1] or self.anchored[pos + 2])

    def anchor(self, pos: int) -> None:
        self.anchored[pos + 1] = 1

    def doubled(self, pos: int) -> bool:
        char = self.text[pos]
        return char in (self.char(pos - 1), self.char(pos + 1))

    def substitute(self, pos: int, value: str | None = None) -> None:
        if value is None:
            value = self.letter(self.text[pos], self.char(pos - 1), self.char(pos + 1))
        self.ops.append(_Op(pos, False, value))
        self.read[pos] = 1

    def delete(self, pos: int) -> None:
        self.ops.append(_Op(pos, False, ""))
        self.read[pos] = 1

    def insert(self, pos: int, value: str | None = None) -> None:
        if value is None:
            value = self.letter(self.char(pos - 1), self.char(pos))
        self.ops.append(_Op(pos, True, value))
        self.filled[pos] = 1

    def mixed(self, pos: int, *, substitute: float, delete: float) -> None:
        """A substitution, deletion or insertion with the given shares; never deletes half a double."""
        draw = self.uniform()
        if draw < substitute or (draw < substitute + delete and self.doubled(pos)):
            self.substitute(pos)
        elif draw < substitute + delete:
            self.delete(pos)
        else:
            self.insert(pos)

    def plan_uniform(self) -> None:
        for pos in self.rng.permutation(self.n).tolist():
            if self.text[pos] != "\n" and self.free(pos):
                self.anchor(pos)
                self.mixed(pos, substitute=0.6, delete=0.2)

    def plan_confusable(self) -> None:
        for pos in self.rng.permutation(self.n).tolist():
            if self.text[pos] in _CONFUSIONS and self.free(pos):
                self.confuse(pos, split_allowed=True)
        for pos in self.rng.permutation(self.n).tolist():  # adjacent confusions once sites run out
            if self.text[pos] in _CONFUSIONS and not self.read[pos]:
                self.confuse(pos, split_allowed=False)

    def confuse(self, pos: int, *, split_allowed: bool) -> None:
        char, before, after = self.text[pos], self.char(pos - 1), self.char(pos + 1)
        split = SPLITS.get(char)
        if (
            split_allowed
            and split is not None
            and self.free(pos + 1)
            and split[0] not in (before, after)
            and split[-1] != after
            and self.uniform() < _SPLIT_SHARE
        ):
            self.anchor(pos)
            self.anchor(pos + 1)
            self.substitute(pos, split[0])
            self.ops.append(_Op(pos, False, split))
            return
        partners = [p for p in _CONFUSIONS[char] if p not in (before, after)]
        if partners:
            if split_allowed:
                self.anchor(pos)
            self.substitute(pos, self.pick(partners))

    def plan_burst(self) -> None:
        stop = 1 / _BURST_MEAN
        for start in self.rng.permutation(self.n).tolist():
            if self.text[start] == "\n" or self.anchored[start + 1]:
                continue
            length = 1 + math.floor(math.log(1 - self.uniform()) / math.log(1 - stop))
            end = start
            while end < min(self.n, start + length) and self.text[end] != "\n" and not self.anchored[end + 1]:
                self.anchor(end)
                self.mixed(end, substitute=0.6, delete=0.3)
                end += 1

    def plan_word(self) -> None:
        sites: list[tuple[int, str]] = []
        for pos, char in enumerate(self.text):
            if char == "\n":
                continue
            if char == " ":
                sites.append((pos, "space"))
                continue
            edge = self.char(pos - 1) not in _TEXT_LETTERS or self.char(pos + 1) not in _TEXT_LETTERS
            sites.append((pos, "edge" if edge else "inner"))
            if self.char(pos - 1) in _TEXT_LETTERS:
                sites.append((pos, "split"))
        if not sites:
            return
        weights = np.array([_WORD_WEIGHTS[kind] for _, kind in sites])
        keys = np.log(self.rng.random(len(sites))) / weights  # weighted order without replacement
        for index in np.argsort(-keys, kind="stable").tolist():
            pos, kind = sites[index]
            if not self.free(pos):
                continue
            self.anchor(pos)
            if kind == "space":
                self.mixed(pos, substitute=0.2, delete=0.8)
            elif kind == "split":
                self.insert(pos, " ")
            else:
                self.mixed(pos, substitute=0.6, delete=0.2)

    def reserve(self, count: int) -> list[_Op]:
        """Append and return up to `count` more reserve edits.

        The reserve is a substitution at every unread position and an insertion at every empty gap, in
        one random order fixed on first use, so building it in chunks gives the same edits.
        """
        if self._reserve_sites is None:
            self.rng = np.random.Generator(np.random.PCG64(self.reserve_seed))
            self._pool, self._next = np.empty(0), 0
            reading = [(pos, False) for pos in range(self.n) if not self.read[pos] and self.text[pos] != "\n"]
            gaps = [(pos, True) for pos in range(self.n + 1) if not self.filled[pos]]
            sites = reading + gaps
            self._reserve_sites = [sites[i] for i in self.rng.permutation(len(sites)).tolist()]
        first = len(self.ops)
        chunk = self._reserve_sites[self._reserve_next : self._reserve_next + count]
        self._reserve_next += len(chunk)
        for pos, is_insert in chunk:
            if is_insert:
                self.insert(pos)
            else:
                self.substitute(pos)
        return self.ops[first:]

    @property
    def exhausted(self) -> bool:
        return self._reserve_sites is not None and self._reserve_next >= len(self._reserve_sites)
