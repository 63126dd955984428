"""Checks shared by stage kinds on what they read: how many inputs, and whether one is a dataset of a domain.

Messages name the field and carry no stage prefix (the engine adds `FILE: field `stages.NAME``).
"""

from __future__ import annotations

from collections.abc import Sequence

from synth.core.errors import ConfigError
from synth.core.stage import StageInput

DATASET_KINDS = ("generate", "curate", "dataset")
"""Kinds of input that are synth datasets (rows through `synth.core.dataset`): stages that write one, or a path."""


def describe(item: StageInput) -> str:
    """`dialogues` (a generate stage, 'toolforge' rows) — how an error names an input."""
    article = "an" if item.kind[:1] in "aeiou" else "a"
    kind = "a dataset path" if item.kind == "dataset" else f"{article} {item.kind} stage"
    if item.kind == "export" and item.format:
        what = f"{item.format} files"
    else:
        what = f"{item.domain!r} rows" if item.domain else "no rows"
    return f"`{item.name}` ({kind}, {what})"


def require_count(inputs: Sequence[StageInput], count: int, *, reader: str, what: str) -> None:
    """Refuse anything but `count` inputs; `reader` names who reads them, `what` what each one must be."""
    if len(inputs) != count:
        got = f"{len(inputs)}: {[item.name for item in inputs]}" if inputs else "none"
        msg = f"`inputs`: {reader} reads exactly {count} input ({what}), got {got}"
        raise ConfigError(msg)


def require_dataset(inputs: Sequence[StageInput], *, domains: Sequence[str], reader: str) -> StageInput:
    """The single input, which must be a synth dataset of one of `domains`."""
    wanted = " or ".join(repr(d) for d in domains)
    require_count(inputs, 1, reader=reader, what=f"a {wanted} dataset")
    item = inputs[0]
    if item.kind not in DATASET_KINDS or item.domain not in domains:
        msg = f"`inputs`: {reader} needs a {wanted} dataset, but {describe(item)} is not one"
        raise ConfigError(msg)
    return item
