"""Supervised fine-tuning on synth tool-use datasets (`messages` + `tools`) with a tool-capable chat template.

`train_sft` is the engine of `synth train sft`; `TOOL_CHAT_TEMPLATE` the Hermes/Qwen-style template it installs
on tokenizers whose own template cannot render tools with assistant-only loss markers.
"""

from synth.trainers.sft.chat_template import TOOL_CHAT_TEMPLATE, ensure_tool_template, supports_tools
from synth.trainers.sft.train import METRICS_FILE, train_sft

__all__ = ["METRICS_FILE", "TOOL_CHAT_TEMPLATE", "ensure_tool_template", "supports_tools", "train_sft"]
