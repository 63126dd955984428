"""Prompt and parse formats of MARCO proposers (GeLLMO's `simple` template; Re2DF-style revision turns)."""

from __future__ import annotations

import re

from synth.validators.marco.answers import extract_smiles

SYSTEM_PROMPT = (
    "You are an expert medicinal chemist specializing in molecular optimization. You understand how structural "
    "modifications affect key ADMET properties and inhibitions of common receptor targets like DRD2."
)
REVISION_PROMPT = "Improve the modified molecule based on the following feedback:\n{feedback}"
__all__ = ["REVISION_PROMPT", "SYSTEM_PROMPT", "extract_smiles", "format_answer", "source_from_instruction"]
INPUT_PATTERN = re.compile(r"Input\s*:\s*<SMILES>\s*(\S+)\s*</SMILES>")


def format_answer(smiles: str) -> str:
    """A response in the expected answer format."""
    return f"<SMILES> {smiles} </SMILES>"


def source_from_instruction(instruction: str) -> str | None:
    """The source SMILES of an instruction's `Input : <SMILES> … </SMILES>` line."""
    match = INPUT_PATTERN.search(instruction)
    return match.group(1) if match else None
