"""Graph edits for the scripted proposer: mol-ga's seven Graph-GA operators plus a few directed medicinal edits.

mol-ga's operators (Jensen's GB-GA) work on a Kekulé copy and reject products with rings larger than six;
the directed edits (methylation, halogenation, removing a terminal polar group, ring N↔CH walks,
neutralisation) work on the aromatic form. Every edit takes a `random.Random`, so a seeded generator gives the
same product; mol-ga draws from the generator it is given and never from the global `random` state.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from random import Random
from typing import Any

MOLGA_MOVES = (
    "insert_atom",
    "change_bond_order",
    "delete_cyclic_bond",
    "add_ring",
    "delete_atom",
    "change_atom",
    "append_atom",
)
DIRECTED_SMARTS: dict[str, tuple[str, ...]] = {
    "methylate": ("[#6,#7,#8;!H0;+0:1]>>[*:1]-[CH3]",),
    "halogenate": ("[c;H1:1]>>[c:1]-F", "[c;H1:1]>>[c:1]-Cl", "[c;H1:1]>>[c:1]-Br"),
    "drop_polar": ("[*:1]-[O,N,S;D1;+0:2]>>[*:1]", "[*:1]=[O;D1:2]>>[*:1]"),
    "ring_n_to_ch": ("[n;H0;X2;+0:1]>>[cH1:1]",),
    "ring_ch_to_n": ("[c;H1:1]>>[n;H0:1]",),
    "hetero_to_carbon": ("[O,N,S;!R;D2;+0:1]>>[CH2:1]",),
}
MOVES: tuple[str, ...] = (*MOLGA_MOVES, *DIRECTED_SMARTS, "neutralize")
ATTEMPTS = 10  # mol-ga's tries per mutation
DIRECTED_ATTEMPTS = 3


@dataclass(frozen=True)
class EditResult:
    """A product SMILES (canonical) or None when the move does not apply to the molecule."""

    move: str
    smiles: str | None


def _molga_smarts(move: str, mol: Any, rng: Random) -> str:
    from mol_ga.graph_ga import mutate as molga

    builders: dict[str, Callable[[], str]] = {
        "insert_atom": lambda: molga.insert_atom(rng),
        "change_bond_order": lambda: molga.change_bond_order(rng),
        "delete_cyclic_bond": molga.delete_cyclic_bond,
        "add_ring": lambda: molga.add_ring(rng),
        "delete_atom": lambda: molga.delete_atom(rng),
        "change_atom": lambda: molga.change_atom(mol, rng),
        "append_atom": lambda: molga.append_atom(rng),
    }
    return builders[move]()


def _first_product(mol: Any, smarts: str, rng: Random) -> Any | None:
    """A uniformly drawn product passing mol-ga's `mol_ok` and `ring_OK` checks (shuffle, then first that passes)."""
    from mol_ga.graph_ga.crossover import mol_ok, ring_OK
    from rdkit.Chem import AllChem

    products = [p[0] for p in AllChem.ReactionFromSmarts(smarts).RunReactants((mol,))]
    rng.shuffle(products)
    return next((p for p in products if mol_ok(p, rng) and ring_OK(p)), None)


def _neutralize(mol: Any) -> Any | None:
    from rdkit.Chem.MolStandardize import rdMolStandardize

    if not any(atom.GetFormalCharge() for atom in mol.GetAtoms()):
        return None
    return rdMolStandardize.Uncharger().uncharge(mol)


def _draw(mol: Any, move: str, rng: Random) -> Any | None:
    """One product of `move` on a copy of `mol`, or None."""
    from rdkit import Chem

    work = Chem.Mol(mol)
    if move == "neutralize":
        return _neutralize(work)
    if move in DIRECTED_SMARTS:
        options = DIRECTED_SMARTS[move]
        return _first_product(work, options[rng.randrange(len(options))], rng)
    try:
        Chem.Kekulize(work, clearAromaticFlags=True)
    except (ValueError, RuntimeError):
        return None
    return _first_product(work, _molga_smarts(move, work, rng), rng)


def apply_move(mol: Any, move: str, rng: Random, *, exclude: frozenset[str] = frozenset()) -> EditResult:
    """Apply `move` to `mol` (never modified): up to ten draws (three for directed edits) for a new valid product."""
    from rdkit import Chem, rdBase

    if move not in MOVES:
        msg = f"unknown `move` {move!r}; choose from {list(MOVES)}"
        raise ValueError(msg)
    with rdBase.BlockLogs():
        for _ in range(DIRECTED_ATTEMPTS if move in DIRECTED_SMARTS else ATTEMPTS):
            product = _draw(mol, move, rng)
            if product is None:
                continue
            smiles = Chem.MolToSmiles(product)
            again = Chem.MolFromSmiles(smiles)
            if again is None or len(Chem.GetMolFrags(again)) != 1:
                continue
            canonical = Chem.MolToSmiles(again)
            if canonical not in exclude and canonical != Chem.MolToSmiles(mol):
                return EditResult(move, canonical)
            if move == "neutralize":
                break
    return EditResult(move, None)


def random_mutation(mol: Any, rng: Random) -> str | None:
    """mol-ga's own `mutate` (uniform over its seven operators) on a copy of `mol`: the random-edit baseline."""
    from mol_ga.graph_ga.mutate import mutate
    from rdkit import Chem, rdBase

    with rdBase.BlockLogs():
        product = mutate(Chem.Mol(mol), rng)
        if product is None:
            return None
        again = Chem.MolFromSmiles(Chem.MolToSmiles(product))
        return None if again is None else Chem.MolToSmiles(again)
