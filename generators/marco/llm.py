"""The `scripted` backend's MARCO policy: a real edit algorithm answering through the LLM backend protocol.

It reads the source molecule from the instruction's `Input : <SMILES> … </SMILES>` line and answers with one
uniform mol-ga mutation of it in GeLLMO's answer format, seeded by the backend's per-request generator. It
ignores feedback, so it is the random-edit baseline behind the same prompt/parse path an LLM would use.
"""

from __future__ import annotations

from random import Random

import numpy as np

from synth.core.llm import GenRequest, ScriptedBackend
from synth.generators.marco.edits import random_mutation
from synth.generators.marco.prompts import format_answer, source_from_instruction


def scripted_edit_policy(request: GenRequest, rng: np.random.Generator) -> str:
    """Answer with a random Graph-GA mutation of the instruction's source molecule."""
    from rdkit import Chem

    instruction = next((m.content for m in request.messages if m.role == "user"), "")
    source = source_from_instruction(instruction)
    mol = Chem.MolFromSmiles(source) if source else None
    if mol is None:
        return "I cannot find a valid source molecule in the instruction."
    product = random_mutation(mol, Random(int(rng.integers(2**63))))
    return format_answer(product or Chem.MolToSmiles(mol))


def scripted_edit_backend() -> ScriptedBackend:
    """A `ScriptedBackend` running `scripted_edit_policy`."""
    return ScriptedBackend(scripted_edit_policy, name="scripted-marco")
