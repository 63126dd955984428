"""Prompt and parse formats of MARCO proposers (GeLLMO's `simple` template; Re2DF-style revision turns)."""

from __future__ import annotations

import re

SYSTEM_PROMPT = (
    "You are an expert medicinal chemist specializing in molecular optimization. You understand how structural "
    "modifications affect key ADMET properties and inhibitions of common receptor targets like DRD2."
)
REVISION_PROMPT = "Improve the modified molecule based on the following feedback:\n{feedback}"
SMILES_PATTERN = re.compile(r"<SMILES>\s*([A-Za-z0-9@+\-\[\]\(\)\\\/%=#\$:.]+)\s*</SMILES>")
INPUT_PATTERN = re.compile(r"Input\s*:\s*<SMILES>\s*(\S+)\s*</SMILES>")


def extract_smiles(response: str) -> str:
    """The first `<SMILES> … </SMILES>` answer (GeLLMO's regex); a bare one-token response is taken as is.

    Anything else gives "" (graded as an empty answer).

    >>> extract_smiles("Sure: <SMILES> CCO </SMILES>")
    'CCO'
    """
    match = SMILES_PATTERN.search(response)
    if match:
        return match.group(1)
    stripped = response.strip()
    return stripped if stripped and not any(ch.isspace() for ch in stripped) and "<" not in stripped else ""


def format_answer(smiles: str) -> str:
    """A response in the expected answer format."""
    return f"<SMILES> {smiles} </SMILES>"


def source_from_instruction(instruction: str) -> str | None:
    """The source SMILES of an instruction's `Input : <SMILES> … </SMILES>` line."""
    match = INPUT_PATTERN.search(instruction)
    return match.group(1) if match else None
