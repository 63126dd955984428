"""Tool variants never get parameter names a model cannot write as a Python keyword argument."""

from __future__ import annotations

import keyword

import numpy as np

from synth.generators.toolforge.toolspace import ToolSpace
from synth.generators.toolforge.variants import rename_parameter, usable_parameter_name


def test_renames_of_names_with_keyword_synonyms_are_never_keywords() -> None:
    # `type` -> class, `include` -> with/return, `start` -> from: the synonym table offers keywords
    for name in ("type", "include", "start", "category"):
        for seed in range(200):
            renamed = rename_parameter(name, np.random.default_rng(seed))
            assert usable_parameter_name(renamed), (name, seed, renamed)


def test_a_whole_tool_space_has_only_usable_parameter_names() -> None:
    for seed in range(3):
        for tool in ToolSpace.build(variants_per_family=8, seed=seed).tools:
            for name in tool.parameters.get("properties", {}):
                assert name.isidentifier() and not keyword.iskeyword(name), (tool.name, name)


def test_usable_parameter_name() -> None:
    assert usable_parameter_name("kind") and not usable_parameter_name("class")
    assert not usable_parameter_name("match") and not usable_parameter_name("two words")
