"""MARCO tasks: which properties to improve, the below-threshold rule that picks sources, and the instructions.

The three-objective MuMOInstruct tasks (BDP, BDQ, BPQ) keep GeLLMO's property names and instruction templates;
`seen` instructions use template indices 0, 1, 2, 4, 5 and each property's first name, `unseen` ones template 3
and each property's last synonym. Their test thresholds are the ones implied by the released test files (BDP
plogp −0.3 and BDQ qed 0.3 differ from GeLLMO's `config.py`). PQS (penalised logP, QED, SA) is computable with
RDKit alone: its sources are ZINC250k molecules below all three thresholds (plogp < −0.5, QED < 0.7, SA > 2.5;
synth's choice, about 10 % of ZINC).
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Literal

from synth.validators.marco.properties import SPECS

Setting = Literal["seen", "unseen"]
Origin = Literal["mumoinstruct", "zinc"]
SETTINGS: tuple[Setting, ...] = ("seen", "unseen")
SEEN_TEMPLATES = (0, 1, 2, 4, 5)
UNSEEN_TEMPLATE = 3

# GeLLMO's instruction templates (MuMOInstruct, CC BY 4.0), by `instr_idx`.
TEMPLATES: dict[int, str] = {
    0: "Modify the given molecule to adjust the specified molecular properties by substituting functional groups "
    "while keeping changes to the core structure minimal. Output only the SMILES of the modified molecule, "
    "wrapped in <SMILES> </SMILES> tags.",
    1: "Your goal is to fine-tune the specified molecular properties of the given compound with minimal structural "
    "changes. Make the necessary adjustments and return the modified molecule in a SMILES format enclosed in "
    "<SMILES> </SMILES> tags.",
    2: "Adjust the structure of the given molecule to target the specified adjustments in molecular properties. "
    "Retain the core structure as much as possible. Respond with only the SMILES of the modified molecule "
    "enclosed in <SMILES> </SMILES> tags.",
    3: "Modify the given molecular structure to target specific property changes, aiming to keep structural "
    "adjustments minimal. Respond solely with the SMILES notation for the adjusted molecule, enclosed within "
    "<SMILES> </SMILES> tags.",
    4: "Alter the given molecule to meet the desired property changes with the least structural alteration "
    "possible. Output only the adjusted molecule in SMILES format, using <SMILES> </SMILES> tags.",
    5: "Your task is to modify the given molecule to adjust specific molecular properties while keeping structural "
    "changes as minimal as possible. Your response should only contain a valid SMILES representation of the "
    "modified molecule enclosed with <SMILES> </SMILES> tag.",
}


@dataclass(frozen=True)
class MarcoTask:
    """A multi-property optimisation task: properties (in instruction order) and the source thresholds."""

    name: str
    properties: tuple[str, ...]
    test_thresholds: Mapping[str, float]
    origin: Origin

    def is_eligible(self, values: Mapping[str, float | None]) -> bool:
        """The below-threshold rule: every property has room to improve (worse than its threshold)."""
        for key in self.properties:
            value, threshold = values.get(key), self.test_thresholds[key]
            if value is None:
                return False
            if SPECS[key].direction == "increase" and not value < threshold:
                return False
            if SPECS[key].direction == "decrease" and not value > threshold:
                return False
        return True

    def adjust_line(self, setting: Setting) -> str:
        """The `Adjust:` clause: "increase A, increase B and increase C" with seen or unseen property names."""
        parts = [
            f"{SPECS[key].direction} {SPECS[key].label if setting == 'seen' else SPECS[key].unseen_label}"
            for key in self.properties
        ]
        return parts[0] if len(parts) == 1 else f"{', '.join(parts[:-1])} and {parts[-1]}"

    def instruction(self, smiles: str, *, setting: Setting, template: int) -> str:
        """The full MuMOInstruct-style instruction for one source molecule."""
        if template not in TEMPLATES:
            msg = f"unknown instruction `template` {template}; choose from {sorted(TEMPLATES)}"
            raise ValueError(msg)
        return f"{TEMPLATES[template]}\nInput : <SMILES> {smiles} </SMILES>\nAdjust: {self.adjust_line(setting)}"


TASKS: dict[str, MarcoTask] = {
    task.name: task
    for task in (
        MarcoTask("BDP", ("bbbp", "drd2", "plogp"), {"bbbp": 0.5, "drd2": 0.1, "plogp": -0.3}, "mumoinstruct"),
        MarcoTask("BDQ", ("bbbp", "drd2", "qed"), {"bbbp": 0.6, "drd2": 0.1, "qed": 0.3}, "mumoinstruct"),
        MarcoTask("BPQ", ("bbbp", "plogp", "qed"), {"bbbp": 0.5, "plogp": -1.5, "qed": 0.7}, "mumoinstruct"),
        MarcoTask("PQS", ("plogp", "qed", "sa"), {"plogp": -0.5, "qed": 0.7, "sa": 2.5}, "zinc"),
    )
}


def get_task(name: str) -> MarcoTask:
    """The task called `name` (case-insensitive)."""
    task = TASKS.get(name.upper())
    if task is None:
        msg = f"unknown task {name!r}; choose from {sorted(TASKS)}"
        raise ValueError(msg)
    return task
