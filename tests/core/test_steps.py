from dataclasses import dataclass

import pytest

from synth.core.errors import MissingDependencyError
from synth.core.steps import ShardContext, Step


@pytest.mark.parametrize(("items", "shards"), [(10, 3), (3, 5), (0, 2), (17, 17)])
def test_partition_covers_every_item_once_in_order(items, shards):
    parts = [ShardContext(0, i, shards, "h").partition(list(range(items))) for i in range(shards)]
    assert [x for part in parts for x in part] == list(range(items))
    sizes = [len(p) for p in parts]
    assert max(sizes) - min(sizes) <= 1


def test_rng_depends_on_seed_shard_and_salt_only():
    a = ShardContext(7, 1, 4, "h").rng("x").integers(0, 1 << 30, 5).tolist()
    assert a == ShardContext(7, 1, 4, "other-hash").rng("x").integers(0, 1 << 30, 5).tolist()
    assert a != ShardContext(7, 2, 4, "h").rng("x").integers(0, 1 << 30, 5).tolist()
    assert a != ShardContext(8, 1, 4, "h").rng("x").integers(0, 1 << 30, 5).tolist()
    assert a != ShardContext(7, 1, 4, "h").rng("y").integers(0, 1 << 30, 5).tolist()


def test_missing_optional_dependency_names_the_step_and_extra():
    @dataclass(frozen=True, kw_only=True)
    class NeedsGhost(Step):
        requires = (("surely_not_installed_pkg", "synth[ghost]"),)

    with pytest.raises(MissingDependencyError, match=r"step `ghosty`.*surely_not_installed_pkg.*synth\[ghost\]"):
        NeedsGhost(name="ghosty")
