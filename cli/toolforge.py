"""`synth toolforge export|tools|audit`: export a ToolForge dataset in the formats other trainers and benchmarks
read, show the tool space, and mine hard negatives with the MCTS audit.

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
    help="ToolForge: export dialogues (OpenAI, Hermes, xLAM, BFCL), list the tool space, mine hard negatives.",
    no_args_is_help=True,
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


@toolforge_app.command("tools")
@cli_errors
def tools_command(
    variants: int = typer.Option(5, "--variants", min=0, help="Gated variants per base tool."),
    seed: int = typer.Option(0, "--seed", min=0, help="Seed of the variant rewrites."),
    user_tools: Path | None = typer.Option(None, "--user-tools", help="A YAML/JSON file of extra tools."),
    as_json: bool = typer.Option(False, "--json", help="Print every tool and the gate statistics as JSON."),
) -> None:
    """The tool space a run would use: base tools, gated variants, user tools, and the gate's statistics."""
    from rich.table import Table

    from synth.generators.toolforge.toolspace import ToolSpace

    space = ToolSpace.build(variants_per_family=variants, seed=seed, user_tools=user_tools)
    if as_json:
        report = {
            "tools": [json.loads(line) for line in space.to_json_lines()],
            "gate": space.gate_stats,
            "rejected_user_tools": [r.__dict__ for r in space.rejected],
        }
        console.print_json(json.dumps(report))
        return
    table = Table("family", "tools", "candidates", "near-duplicate", "drift", title=f"{len(space)} tools")
    for family in space.families:
        stats = space.gate_stats.get(family, {})
        table.add_row(
            family,
            str(len(space.by_family(family))),
            str(stats.get("candidates", "")),
            str(stats.get("rejected_near_duplicate", "")),
            str(stats.get("rejected_drift", "")),
        )
    console.print(table)
    for rejection in space.rejected:
        console.print(f"user tool `{rejection.name}` rejected ({rejection.verdict}): {rejection.reason}")


@toolforge_app.command("audit")
@cli_errors
def audit_command(
    dataset: Path = typer.Argument(..., help="ToolForge dataset directory."),
    out: Path = typer.Option(..., "--out", "-o", help="Folder for the hard-negative preference dataset."),
    rows: int = typer.Option(40, "--rows", min=1, help="Dialogues audited (spread over the dataset)."),
    iterations: int = typer.Option(60, "--iterations", min=1, help="MCTS iterations per dialogue."),
    random_per_row: int = typer.Option(20, "--random-per-row", min=1, help="Random corruptions per dialogue."),
    seed: int = typer.Option(0, "--seed", help="Seed of corruption and search."),
    overwrite: bool = typer.Option(False, "--overwrite", help="Replace a non-empty --out."),
) -> None:
    """Mine hard negatives by MCTS, write them as a preference dataset, and print the validator's audit figures."""
    from synth.validators.toolforge.audit_dataset import write_negatives

    report = write_negatives(
        dataset, out, rows=rows, iterations=iterations, random_per_row=random_per_row, seed=seed, overwrite=overwrite
    )
    summary = {key: report[key] for key in ("rows", "false_reject_rate", "random", "mined", "operators_missed")}
    console.print_json(json.dumps(summary))
    console.print(f"wrote {out}")


def register(root: typer.Typer) -> None:
    """Add the `toolforge` group to the root app."""
    root.add_typer(toolforge_app, name="toolforge")
