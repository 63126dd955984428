"""MARCO: bounded proposal → feedback → revision trajectories of molecular edits, graded by the MARCO evaluator.

Tasks (`tasks`), shipped sources (`sources`), proposers (`proposers`: scripted graph edits, or an LLM through the
backend protocol), trajectories with shaped rewards and GRPO statistics (`trajectory`), the dataset generator
(`generator`) and the Same-1 / Same-5 / best-of-5 benchmark (`bench`). RDKit and mol-ga (`synth[chem]`) are
imported inside the functions that use them.
"""

from synth.generators.marco.sources import MarcoSource, read_sources
from synth.generators.marco.tasks import SETTINGS, TASKS, MarcoTask, Setting, get_task

__all__ = ["SETTINGS", "TASKS", "MarcoSource", "MarcoTask", "Setting", "get_task", "read_sources"]
