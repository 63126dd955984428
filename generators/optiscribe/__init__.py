"""OptiScribe: MILP instances from natural-language instructions, with solver-measured hardness and self-play.

`grammar` parses instructions into `InstanceRequest`s, `spec` holds the typed `InstanceSpec` and the six
families' standard parameterisations, `build` turns (spec, seed) into a SCIP model and LP/MPS text, `policy`
and `selfplay` are the scripted challenger's learner and loop, `generator` the pipeline step, `bench` the
comparison with the Ecole-style default generator.
"""

from synth.generators.optiscribe.grammar import parse_instruction, render_instruction
from synth.generators.optiscribe.request import InstanceRequest
from synth.generators.optiscribe.spec import FAMILIES, FAMILY_SPECS, InstanceSpec, SpecError

__all__ = [
    "FAMILIES",
    "FAMILY_SPECS",
    "InstanceRequest",
    "InstanceSpec",
    "SpecError",
    "parse_instruction",
    "render_instruction",
]
