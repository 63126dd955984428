"""Reading DASA/GRADMM datasets for training, refusing one made with another reference model."""

from __future__ import annotations

from pathlib import Path
from typing import Literal

from synth.core.dataset import open_dataset, read_rows
from synth.generators.dasa.base_lm import Reference
from synth.generators.dasa.lora import TrainRows

META_MODEL, META_HIDDEN, META_HASH = b"synth.dasa.model_id", b"synth.dasa.hidden_size", b"synth.dasa.embedding_hash"


class ReferenceMismatchError(ValueError):
    """A dataset's embeddings belong to another reference model."""


def check_reference(out: str | Path, reference: Reference) -> None:
    """Raise a one-line error naming both models when `out` was not made with `reference`."""
    meta = open_dataset(out, domain="dasa", needs="LoRA on embeddings").schema().metadata or {}
    if META_HASH not in meta:
        msg = f"{out}: not a DASA dataset (no `synth.dasa.embedding_hash` in the schema metadata)"
        raise ReferenceMismatchError(msg)
    made_with = meta[META_MODEL].decode()
    if meta[META_HASH].decode() != reference.embedding_hash or int(meta[META_HIDDEN]) != reference.hidden_size:
        msg = (
            f"{out}: embeddings were made with reference model {made_with!r} (hidden {int(meta[META_HIDDEN])}, "
            f"embedding hash {meta[META_HASH].decode()}), not with {reference.model_id!r} "
            f"(hidden {reference.hidden_size}, embedding hash {reference.embedding_hash}); "
            "train with the model the dataset was made with"
        )
        raise ReferenceMismatchError(msg)


def load_rows(out: str | Path, reference: Reference, *, inputs: Literal["embeds", "ids"] = "embeds") -> TrainRows:
    """Training rows of a DASA/GRADMM dataset (through the dataset API); `ids` uses the token column."""
    import torch

    check_reference(out, reference)
    columns = ["labels", "attention_mask", "input_ids" if inputs == "ids" else "inputs_embeds"]
    frame = read_rows(out, columns=columns, domain="dasa", needs="LoRA on embeddings")
    labels = torch.tensor(frame["labels"].to_list())
    mask = torch.tensor(frame["attention_mask"].to_list()).long()
    if inputs == "ids":
        return TrainRows(labels=labels, attention_mask=mask, input_ids=torch.tensor(frame["input_ids"].to_list()))
    embeds = torch.tensor(frame["inputs_embeds"].to_list()).float()
    return TrainRows(labels=labels, attention_mask=mask, inputs_embeds=embeds)
