"""SMILES parsing with a reason for every invalid molecule, and canonicalisation.

Every property and similarity is computed from the molecule re-parsed from its canonical SMILES, so a stored
canonical SMILES is enough to recompute them. Multi-fragment SMILES (salts, mixtures) are refused by default;
`fragments="largest"` keeps the fragment with most heavy atoms instead (ties: the first in canonical order).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Literal

InvalidKind = Literal["empty", "too_long", "parse_error", "valence", "sanitization", "multi_fragment", "dummy_atom"]
FragmentPolicy = Literal["reject", "largest"]
INVALID_KINDS: tuple[InvalidKind, ...] = (
    "empty",
    "too_long",
    "parse_error",
    "valence",
    "sanitization",
    "multi_fragment",
    "dummy_atom",
)
MAX_SMILES_LENGTH = 500
PARSE_ERROR = "the SMILES does not parse (syntax error, e.g. an unclosed ring or branch)"


@dataclass(frozen=True, slots=True)
class ParsedMolecule:
    """A parsed SMILES: the canonical form and molecule, or the kind of failure and a sentence saying why."""

    text: str
    canonical: str | None = None
    mol: Any = None
    kind: InvalidKind | None = None
    reason: str | None = None

    @property
    def valid(self) -> bool:
        """True when the SMILES gave one sanitised molecule."""
        return self.canonical is not None


def _invalid(text: str, kind: InvalidKind, reason: str) -> ParsedMolecule:
    return ParsedMolecule(text=text, kind=kind, reason=reason)


def _diagnose(text: str) -> ParsedMolecule:
    """Why RDKit refused `text`: a syntax error, or the first chemistry problem of the unsanitised molecule."""
    from rdkit import Chem

    raw = Chem.MolFromSmiles(text, sanitize=False)
    if raw is None:
        return _invalid(text, "parse_error", PARSE_ERROR)
    try:
        problems = Chem.DetectChemistryProblems(raw)
    except Exception as error:  # RDKit raises various C++ exceptions on malformed graphs
        return _invalid(text, "sanitization", f"sanitisation failed: {error}")
    if not problems:
        return _invalid(text, "sanitization", "sanitisation failed")
    problem = problems[0]
    detail = problem.Message().strip().splitlines()[0] if problem.Message() else problem.GetType()
    kind: InvalidKind = "valence" if problem.GetType() == "AtomValenceException" else "sanitization"
    where = "valence error" if kind == "valence" else "sanitisation failed"
    return _invalid(text, kind, f"{where}: {detail}")


def _largest_fragment(mol: Any) -> Any:
    from rdkit import Chem

    fragments = Chem.GetMolFrags(mol, asMols=True, sanitizeFrags=True)
    return max(fragments, key=lambda m: (m.GetNumHeavyAtoms(), -len(Chem.MolToSmiles(m))))


def parse_smiles(text: str, *, fragments: FragmentPolicy = "reject") -> ParsedMolecule:
    """Parse and canonicalise one SMILES; never raises on any string.

    >>> parse_smiles("OCC").canonical
    'CCO'
    >>> parse_smiles("C(C)(C)(C)(C)C").kind
    'valence'
    """
    from rdkit import Chem, rdBase

    stripped = text.strip() if isinstance(text, str) else ""
    if not stripped:
        return _invalid(stripped, "empty", "the response holds no SMILES")
    if len(stripped) > MAX_SMILES_LENGTH:
        reason = f"the SMILES has {len(stripped)} characters (at most {MAX_SMILES_LENGTH})"
        return _invalid(stripped, "too_long", reason)
    if any(ch.isspace() for ch in stripped):
        return _invalid(stripped, "parse_error", "the SMILES contains whitespace")
    with rdBase.BlockLogs():
        mol = Chem.MolFromSmiles(stripped)
        if mol is None:
            return _diagnose(stripped)
        if mol.GetNumAtoms() == 0:
            return _invalid(stripped, "empty", "the SMILES has no atoms")
        if any(atom.GetAtomicNum() == 0 for atom in mol.GetAtoms()):
            return _invalid(stripped, "dummy_atom", "the SMILES has a wildcard or dummy atom (*)")
        if len(Chem.GetMolFrags(mol)) > 1:
            if fragments == "reject":
                count = len(Chem.GetMolFrags(mol))
                return _invalid(stripped, "multi_fragment", f"the SMILES has {count} disconnected fragments; give one")
            mol = _largest_fragment(mol)
        return _canonicalise(stripped, mol)


def _canonicalise(text: str, mol: Any) -> ParsedMolecule:
    """Canonical SMILES and the molecule re-parsed from it (the form every property is computed on)."""
    from rdkit import Chem

    canonical = Chem.MolToSmiles(mol)
    again = Chem.MolFromSmiles(canonical)
    if again is None or again.GetNumAtoms() == 0:
        return _invalid(text, "sanitization", f"the canonical SMILES {canonical!r} does not re-parse")
    return ParsedMolecule(text=text, canonical=canonical, mol=again)
