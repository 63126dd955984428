"""Reading a proposer's answer: the SMILES inside GeLLMO's `<SMILES> … </SMILES>` tags."""

from __future__ import annotations

import re

SMILES_PATTERN = re.compile(r"<SMILES>\s*([A-Za-z0-9@+\-\[\]\(\)\\\/%=#\$:.]+)\s*</SMILES>")


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
