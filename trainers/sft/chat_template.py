"""A tool-capable Hermes/Qwen-style chat template, and the probe that decides whether a tokenizer needs it.

The template renders `tools` in the system turn inside `<tools></tools>`, assistant reasoning as `<think>` blocks
(`reasoning_content`, or `reasoning` as synth rows store it), calls as `<tool_call>` JSON blocks (`arguments` as
a dict or a JSON string), and consecutive tool results as one user turn of `<tool_response>` blocks. Each
assistant turn, its `<|im_end|>` included, sits inside `{% generation %}` so that
`apply_chat_template(..., return_assistant_tokens_mask=True)` marks exactly the assistant tokens.
"""

from __future__ import annotations

from typing import Any, Literal

IM_START = "<|im_start|>"
IM_END = "<|im_end|>"
PAD = "<|endoftext|>"
SPECIAL_TOKENS = (PAD, IM_START, IM_END)
TAG_TOKENS = ("<tool_call>", "</tool_call>", "<tool_response>", "</tool_response>", "<think>", "</think>")

TemplateSource = Literal["model", "trl-training", "synth"]

TOOL_CHAT_TEMPLATE = (
    "{%- if messages and messages[0].role == 'system' -%}"
    "{%- set system = messages[0].content or '' -%}{%- set rest = messages[1:] -%}"
    "{%- else -%}{%- set system = '' -%}{%- set rest = messages -%}{%- endif -%}"
    "{%- if tools or system -%}"
    "{{- '<|im_start|>system\\n' + system -}}"
    "{%- if tools -%}"
    "{%- if system -%}{{- '\\n\\n' -}}{%- endif -%}"
    "{{- '# Tools\\n\\nYou may call one or more functions to assist with the user query.\\n\\n"
    "You are provided with function signatures within <tools></tools> XML tags:\\n<tools>' -}}"
    "{%- for tool in tools -%}{{- '\\n' + (tool | tojson) -}}{%- endfor -%}"
    "{{- '\\n</tools>\\n\\nFor each function call, return a json object with function name and arguments within "
    '<tool_call></tool_call> XML tags:\\n<tool_call>\\n{"name": <function-name>, "arguments": '
    "<args-json-object>}\\n</tool_call>' -}}"
    "{%- endif -%}"
    "{{- '<|im_end|>\\n' -}}"
    "{%- endif -%}"
    "{%- for message in rest -%}"
    "{%- if message.role == 'assistant' -%}"
    "{{- '<|im_start|>assistant\\n' -}}"
    "{% generation %}"
    "{%- set reasoning = message.reasoning_content or message.reasoning or '' -%}"
    "{%- if reasoning -%}{{- '<think>\\n' + reasoning + '\\n</think>\\n\\n' -}}{%- endif -%}"
    "{{- message.content or '' -}}"
    "{%- for call in message.tool_calls or [] -%}"
    "{%- set fn = call.function if call.function is defined else call -%}"
    "{%- if not loop.first or message.content -%}{{- '\\n' -}}{%- endif -%}"
    '{{- \'<tool_call>\\n{"name": "\' + fn.name + \'", "arguments": \' -}}'
    "{%- if fn.arguments is string -%}{{- fn.arguments -}}{%- else -%}{{- fn.arguments | tojson -}}{%- endif -%}"
    "{{- '}\\n</tool_call>' -}}"
    "{%- endfor -%}"
    "{{- '<|im_end|>' -}}"
    "{% endgeneration %}"
    "{{- '\\n' -}}"
    "{%- elif message.role == 'tool' -%}"
    "{%- if loop.first or rest[loop.index0 - 1].role != 'tool' -%}{{- '<|im_start|>user' -}}{%- endif -%}"
    "{{- '\\n<tool_response>\\n' + (message.content or '') + '\\n</tool_response>' -}}"
    "{%- if loop.last or rest[loop.index0 + 1].role != 'tool' -%}{{- '<|im_end|>\\n' -}}{%- endif -%}"
    "{%- else -%}"
    "{{- '<|im_start|>' + message.role + '\\n' + (message.content or '') + '<|im_end|>\\n' -}}"
    "{%- endif -%}"
    "{%- endfor -%}"
    "{%- if add_generation_prompt -%}{{- '<|im_start|>assistant\\n' -}}{%- endif -%}"
)

PROBE_TOOL = "synth_probe_tool_7f3a"
PROBE_TOOLS = [
    {
        "type": "function",
        "function": {
            "name": PROBE_TOOL,
            "description": "Probe.",
            "parameters": {"type": "object", "properties": {"q": {"type": "string"}}, "required": ["q"]},
        },
    }
]
PROBE_MESSAGES = [{"role": "system", "content": "s"}, {"role": "user", "content": "u"}]


def supports_tools(tokenizer: Any) -> bool:
    """Whether the tokenizer's own chat template renders a `tools` list (the probe tool's name appears)."""
    if not getattr(tokenizer, "chat_template", None):
        return False
    try:
        text = tokenizer.apply_chat_template(PROBE_MESSAGES, tools=PROBE_TOOLS, tokenize=False)
    except Exception:  # any template failure means "cannot render tools"
        return False
    return PROBE_TOOL in str(text)


def has_generation_markers(template: str | None) -> bool:
    """Whether a template marks assistant text with `{% generation %}` (needed for assistant-only masks)."""
    return bool(template) and "generation" in template and "endgeneration" in template  # type: ignore[operator]


def ensure_tool_template(tokenizer: Any) -> TemplateSource:
    """Give the tokenizer a tool-capable template with generation markers; returns which one it now has.

    `"model"`: its own template renders tools and marks assistant text; `"trl-training"`: it renders tools and
    TRL ships a patched training variant with markers (installed); `"synth"`: `TOOL_CHAT_TEMPLATE` (installed).
    """
    if supports_tools(tokenizer):
        from trl.chat_template_utils import get_training_chat_template

        try:
            patched = get_training_chat_template(tokenizer)
        except Exception:  # TRL raises for templates it has no training variant of
            patched = ""
        if patched is None:
            return "model"
        if patched and has_generation_markers(patched):
            tokenizer.chat_template = patched
            return "trl-training"
    tokenizer.chat_template = TOOL_CHAT_TEMPLATE
    return "synth"
