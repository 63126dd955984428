"""`synth train sft`: supervised fine-tuning on a synth tool-use dataset (`messages` + `tools` columns).

    synth train sft out/toolforge --out models/tf-tiny --steps 200            # tiny local LM, no download
    synth train sft out/toolforge --out models/tf-qwen --model ~/qwen --lora-rank 16 --lr 2e-4

Writes the model, its tokenizer (with a tool-capable chat template), `metrics.json` and a model card (`README.md`,
naming the dataset) to `--out`; prints the assistant-token loss before/after and the first-tool-call accuracy on
held-out dialogues.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import typer
from rich.table import Table

from synth.cli._common import cli_errors, console

DATASET_HELP = "A ToolForge dialogue dataset (`messages` + `tools`), or a MARCO or OptiScribe dataset (as chat)."
MODEL_HELP = "Local HF causal LM directory; default: a tiny Llama-style LM and BPE tokenizer built from the rows."
LR_HELP = "Learning rate; default 3e-3 for the tiny LM, 2e-4 with --lora-rank, 2e-5 for full fine-tuning."


def sft_command(
    dataset: Path = typer.Argument(..., help=DATASET_HELP),
    out: Path = typer.Option(..., "--out", "-o", help="Directory for the model, tokenizer and metrics.json."),
    model: Path | None = typer.Option(None, "--model", help=MODEL_HELP),
    steps: int = typer.Option(200, "--steps", min=1, help="Optimiser steps."),
    lr: float | None = typer.Option(None, "--lr", min=0.0, help=LR_HELP),
    lora_rank: int | None = typer.Option(None, "--lora-rank", min=1, help="Train LoRA adapters (merged on save)."),
    seed: int = typer.Option(0, "--seed", help="Seed of the split, the tiny LM's weights and the batches."),
    max_length: int = typer.Option(4096, "--max-length", min=16, help="Tokens per dialogue (the start is kept)."),
    eval_rows: int = typer.Option(8, "--eval-rows", min=0, help="Dialogues held out for loss and tool-call accuracy."),
    batch_size: int = typer.Option(4, "--batch-size", min=1, help="Dialogues per step."),
    max_new_tokens: int = typer.Option(
        256, "--max-new-tokens", min=1, help="Tokens decoded for the first assistant turn of each held-out dialogue."
    ),
    tiny_hidden: int = typer.Option(128, "--tiny-hidden", min=8, help="Width of the tiny LM (without --model)."),
    tiny_layers: int = typer.Option(2, "--tiny-layers", min=1, help="Layers of the tiny LM (without --model)."),
    assistant_turns: int | None = typer.Option(
        None, "--assistant-turns", min=1, help="Train on each dialogue's first N assistant turns only (default: all)."
    ),
    copy_warmup: int = typer.Option(
        0, "--copy-warmup", min=0, help="Steps of copy warm-up (short item-gap-item sequences) before SFT."
    ),
    copy_batch_size: int = typer.Option(16, "--copy-batch-size", min=1, help="Sequences per copy warm-up step."),
    copy_lr: float | None = typer.Option(
        None, "--copy-lr", min=0.0, help="Learning rate of the copy warm-up (default: the SFT rate)."
    ),
    overwrite: bool = typer.Option(False, "--overwrite", help="Write over a directory that holds a trained model."),
    as_json: bool = typer.Option(False, "--json", help="Print the metrics as JSON instead of a table."),
) -> None:
    """Fine-tune on the dialogues (loss on assistant turns only) and score the first tool call on held-out rows."""
    from synth.core.dataset import open_dataset
    from synth.trainers.model_card import write_model_card
    from synth.trainers.sft import train_sft

    metrics = train_sft(
        dataset,
        model=model,
        out=out,
        steps=steps,
        lr=lr,
        lora_rank=lora_rank,
        seed=seed,
        max_length=max_length,
        eval_rows=eval_rows,
        batch_size=batch_size,
        max_new_tokens=max_new_tokens,
        tiny_hidden=tiny_hidden,
        tiny_layers=tiny_layers,
        assistant_turns=assistant_turns,
        copy_warmup=copy_warmup,
        copy_batch_size=copy_batch_size,
        copy_lr=copy_lr,
        overwrite=overwrite,
    )
    settings = {
        "model": str(model) if model is not None else None,
        "steps": steps,
        "lr": lr,
        "lora_rank": lora_rank,
        "seed": seed,
        "max_length": max_length,
        "eval_rows": eval_rows,
        "batch_size": batch_size,
        "max_new_tokens": max_new_tokens,
        "assistant_turns": assistant_turns,
        "copy_warmup": copy_warmup,
        **({"copy_batch_size": copy_batch_size, "copy_lr": copy_lr} if copy_warmup else {}),
        **({"tiny_hidden": tiny_hidden, "tiny_layers": tiny_layers} if model is None else {}),
    }
    write_model_card(out, trainer="sft", dataset=open_dataset(dataset), settings=settings, metrics=metrics)
    show(metrics, as_json=as_json, saved=out)


def show(metrics: dict[str, Any], *, as_json: bool, saved: Path) -> None:
    """Print the metrics as JSON, or as a before/after table with a header and a footer."""
    if as_json:
        console.print_json(json.dumps(metrics))
        return
    rows, settings = metrics["rows"], metrics["settings"]
    console.print(
        f"[bold]{metrics['model']}[/] ({metrics['parameters']:,} parameters, chat template: {metrics['chat_template']})"
        f" on {rows['train']} dialogues, {settings['steps']} steps at lr {settings['lr']:g}"
        + (f", LoRA rank {settings['lora_rank']}" if settings["lora_rank"] else ""),
        highlight=False,
    )
    table = Table("measure", "before", "after", title=f"{rows['held_out']} held-out dialogues", title_justify="left")
    key = "first_answer" if "first_answer" in metrics else "tool_call"
    loss, before, after = metrics["loss"], metrics[key]["before"], metrics[key]["after"]
    table.add_row("train assistant loss", _number(loss["train_before"]), _number(loss["train_after"]))
    table.add_row("held-out assistant loss", _number(loss["held_out_before"]), _number(loss["held_out_after"]))
    scores = (
        ("parse_rate", "validity", "success_rate")
        if key == "first_answer"
        else ("parse_rate", "name_accuracy", "exact_accuracy")
    )
    label = "first answer" if key == "first_answer" else "first call"
    for score in scores:
        table.add_row(f"{label} {score.replace('_', ' ')}", _number(before[score]), _number(after[score]))
    console.print(table)
    console.print(
        f"truncated dialogues: {rows['truncated']}; training {metrics['train_seconds']:.1f} s, "
        f"total {metrics['total_seconds']:.1f} s; saved model and metrics.json -> {saved}",
        highlight=False,
    )


def _number(value: float | None) -> str:
    return "-" if value is None else f"{value:.4f}"


def register(train_app: typer.Typer) -> None:
    """Add `sft` to the `synth train` group."""
    train_app.command("sft")(cli_errors(sft_command))
