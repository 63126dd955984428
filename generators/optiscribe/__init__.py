"""OptiScribe: MILP instances from natural-language instructions, with solver-measured hardness and self-play.

The instruction contract lives one layer down, where the instruction verifier reads it too:
`synth.validators.optiscribe.grammar` parses instructions into `InstanceRequest`s and `...spec` holds the typed
`InstanceSpec` and the six families' standard parameterisations. Here `build` turns (spec, seed) into a SCIP model
and LP/MPS text, `policy` and `selfplay` are the scripted challenger's learner and loop, `generator` the pipeline
step, `bench` the comparison with the Ecole-style default generator.
"""

from synth.validators.optiscribe.grammar import parse_instruction, render_instruction
from synth.validators.optiscribe.request import InstanceRequest
from synth.validators.optiscribe.spec import FAMILIES, FAMILY_SPECS, InstanceSpec, SpecError

__all__ = [
    "FAMILIES",
    "FAMILY_SPECS",
    "InstanceRequest",
    "InstanceSpec",
    "SpecError",
    "parse_instruction",
    "render_instruction",
]
