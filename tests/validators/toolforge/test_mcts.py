"""MCTS hard-negative mining: deterministic by seed, finds corruptions the baseline layers accept."""

from __future__ import annotations

from typing import Any

import pytest
from toolforge_rows import clean_row, fixture_rows, wrong_arguments_row

from synth.validators.toolforge.mcts import messages_hash, mine_negatives
from synth.validators.toolforge.verifiers import LAYERS, TOOLFORGE_BASELINE_LAYERS, validate_row


def _summary(negatives: list[Any]) -> list[tuple[str, tuple[Any, ...]]]:
    return [(messages_hash(n.row), n.path) for n in negatives]


def test_mining_is_deterministic_by_seed() -> None:
    row = wrong_arguments_row()
    first = mine_negatives(row, layers=TOOLFORGE_BASELINE_LAYERS, iterations=15, seed=3)
    again = mine_negatives(row, layers=TOOLFORGE_BASELINE_LAYERS, iterations=15, seed=3)
    assert _summary(first) == _summary(again)
    assert len({h for h, _ in _summary(first)}) == len(first)  # deduplicated by content hash


def test_mcts_finds_negatives_the_baseline_accepts_and_the_full_validator_rejects() -> None:
    row = wrong_arguments_row()
    mined = mine_negatives(row, layers=TOOLFORGE_BASELINE_LAYERS, iterations=25, seed=0)
    accepted = [n for n in mined if n.accepted]
    assert accepted, "MCTS found no baseline miss"
    assert all(len(n.path) <= 3 and messages_hash(n.row) != messages_hash(row) for n in mined)
    for negative in accepted:
        assert any(validate_row(negative.row, LAYERS).values()), negative.operators
    assert mined == sorted(mined, key=lambda n: -n.reward)


def test_against_all_layers_nothing_mined_is_accepted() -> None:
    for row in fixture_rows():
        mined = mine_negatives(row, layers=LAYERS, iterations=20, seed=1)
        assert mined and not any(n.accepted for n in mined)


def test_bad_settings_are_refused() -> None:
    with pytest.raises(ValueError, match="depth"):
        mine_negatives(clean_row(), depth=0)
