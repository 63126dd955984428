"""`synth toolforge export`: write a ToolForge dataset in the formats other trainers and benchmarks read.

    synth toolforge export out/toolforge --format openai --out tf.jsonl --arguments dict --reasoning field
    synth toolforge export out/toolforge --format hermes --out tf-hermes.jsonl
    synth toolforge export out/toolforge --format xlam --out tf-xlam.jsonl      # one-round dialogues only
    synth toolforge export out/toolforge --format bfcl --out tf-bfcl/           # questions + possible answers

Prints the counts as JSON: rows read, rows written, rows skipped by reason (and BFCL categories).
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Literal

import typer

from synth.cli._common import cli_errors, console

FormatOption = Literal["openai", "hermes", "xlam", "bfcl"]
ArgumentsOption = Literal["dict", "string"]
ReasoningOption = Literal["drop", "field", "inline"]
ToolRoleOption = Literal["tool", "user"]

toolforge_app = typer.Typer(
    help="ToolForge datasets: export dialogues as OpenAI, Hermes, xLAM or BFCL files.", no_args_is_help=True
)

FORMAT_HELP = (
    "openai: JSONL {messages, tools}; hermes: JSONL with <tools>/<tool_call>/<tool_response>/<answer> tags; "
    "xlam: JSONL {id, query, tools, answers} (one-round dialogues); bfcl: a directory of question and "
    "possible-answer files per category."
)
OUT_HELP = "Target JSONL file (a directory for bfcl); refused when it exists unless --overwrite."
ARGUMENTS_HELP = "openai: tool-call arguments as a dict (most chat templates) or a JSON string (OpenAI API)."
REASONING_HELP = "openai: drop the reasoning, keep it as `reasoning_content`, or inline it as <think>…</think>."


@toolforge_app.command("export")
@cli_errors
def export_command(
    dataset: Path = typer.Argument(..., help="ToolForge dataset directory (from `synth generate toolforge`)."),
    fmt: FormatOption = typer.Option(..., "--format", help=FORMAT_HELP),
    out: Path = typer.Option(..., "--out", "-o", help=OUT_HELP),
    arguments: ArgumentsOption = typer.Option("string", "--arguments", help=ARGUMENTS_HELP),
    reasoning: ReasoningOption = typer.Option("drop", "--reasoning", help=REASONING_HELP),
    tool_role: ToolRoleOption = typer.Option("tool", "--tool-role", help="hermes: role of the tool-result turns."),
    overwrite: bool = typer.Option(False, "--overwrite", help="Replace an existing target."),
) -> None:
    """Export the kept dialogues; rows a format cannot express are skipped and counted by reason."""
    from synth.generators.toolforge.export import export_dataset

    report = export_dataset(
        dataset, out, fmt=fmt, arguments=arguments, reasoning=reasoning, tool_role=tool_role, overwrite=overwrite
    )
    console.print_json(json.dumps(report))


def register(root: typer.Typer) -> None:
    """Add the `toolforge` group to the root app."""
    root.add_typer(toolforge_app, name="toolforge")
