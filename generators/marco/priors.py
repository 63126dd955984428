"""Move priors of the scripted proposer: each edit's mean effect on every RDKit property, fit on ZINC molecules.

The fit applies every move to ZINC molecules with room to improve (PQS's below-threshold rule) that are not task
sources, and records how often it applies, the mean similarity of its product to the molecule, and the mean gain
of each property in units of that property's improvement threshold (positive = towards its goal). The shipped
`data/move_priors.json` was fit by `fit_move_priors(zinc_sample(400, seed=1), seed=0)`; the evaluation sources
never enter it.
"""

from __future__ import annotations

import json
import random
from collections.abc import Sequence
from functools import cache
from typing import Any

from synth.generators.marco.edits import MOVES, apply_move
from synth.generators.marco.sources import DATA_DIR, read_sources, select_zinc_sources, zinc_smiles
from synth.generators.marco.tasks import TASKS

PRIORS_FILE = DATA_DIR / "move_priors.json"
FIT_PROPERTIES = ("plogp", "qed", "sa", "logp", "tpsa", "mw")


def zinc_sample(count: int, *, seed: int) -> list[str]:
    """`count` ZINC250k molecules with room to improve (PQS's below-threshold rule), none a shipped source."""
    taken = {s.source_id for s in read_sources("PQS")}
    rows = select_zinc_sources(TASKS["PQS"], zinc_smiles(), count=count + len(taken), seed=seed)
    picked: list[str] = []
    for row in rows:
        if row["source_id"] not in taken:
            picked.append(str(row["source_smiles"]))
        if len(picked) == count:
            break
    return picked


def fit_move_priors(smiles: Sequence[str], *, seed: int = 0) -> dict[str, Any]:
    """Apply each move once to each molecule and average its effects (see the module docstring)."""
    from synth.validators.marco.evaluator import MoleculeEvaluator
    from synth.validators.marco.properties import SPECS

    evaluator = MoleculeEvaluator(properties=FIT_PROPERTIES, protocol="repo")
    rng = random.Random(seed)
    sums = {move: {"tried": 0, "applied": 0, "similarity": 0.0, **dict.fromkeys(FIT_PROPERTIES, 0.0)} for move in MOVES}
    for text in smiles:
        try:
            profile = evaluator.profile(text)
        except ValueError:
            continue
        for move in MOVES:
            entry = sums[move]
            entry["tried"] += 1
            product = apply_move(profile.parsed.mol, move, rng).smiles
            if product is None:
                continue
            graded = evaluator.evaluate(product, profile)
            entry["applied"] += 1
            entry["similarity"] += graded.similarity or 0.0
            for change in graded.changes:
                if change.gain is not None:
                    entry[change.key] += change.gain / SPECS[change.key].threshold
    priors: dict[str, Any] = {}
    for move, entry in sums.items():
        applied = max(entry["applied"], 1)
        priors[move] = {
            "applies": round(entry["applied"] / max(entry["tried"], 1), 4),
            "similarity": round(entry["similarity"] / applied, 4),
            "gain": {key: round(entry[key] / applied, 4) for key in FIT_PROPERTIES},
        }
    return {"molecules": len(smiles), "seed": seed, "moves": priors}


@cache
def load_move_priors() -> dict[str, Any]:
    """The shipped move priors (`data/move_priors.json`)."""
    return json.loads(PRIORS_FILE.read_text())["moves"]
