"""`synth train grpo`: GRPO (TRL's GRPOTrainer) with the domain's verifier as the reward, resumable.

    synth train grpo out/marco --model models/marco-sft --out runs/marco-grpo --steps 20     # multi-turn MARCO
    synth train grpo out/toolforge --model models/tf-sft --out runs/tf-grpo --lora-rank 8   # first tool call
    synth train grpo out/optiscribe-llm --model models/os-sft --out runs/os-grpo --turns 1  # SCIP-scored specs

The run folder holds config.json, metrics.jsonl, checkpoints/ and, when done, model/ (with a model card naming the
dataset) and metrics.json; rerunning the same command resumes from the last checkpoint.
"""

from __future__ import annotations

import json
from pathlib import Path

import typer

from synth.cli._common import cli_errors, console

REWARD_HELP = "Reward NAME or NAME:WEIGHT (repeatable; default: the dataset domain's verifier reward)."
OPTION_HELP = "KEY=VALUE setting of every --reward (repeatable; VALUE read as JSON), e.g. node_weight=1.0."


def _reward_specs(rewards: list[str], options: list[str]) -> tuple[dict[str, object], ...]:
    from synth.core.errors import InputError

    if options and not rewards:
        raise InputError("--reward-option needs --reward NAME (the settings belong to a named reward)")
    settings: dict[str, object] = {}
    for text in options:
        key, sep, value = text.partition("=")
        if not sep or not key:
            msg = f"--reward-option {text!r}: expected KEY=VALUE"
            raise InputError(msg)
        try:
            settings[key] = json.loads(value)
        except json.JSONDecodeError:
            settings[key] = value
    specs = []
    for text in rewards:
        name, _, weight = text.partition(":")
        try:
            specs.append({"name": name, "weight": float(weight) if weight else 1.0, **settings})
        except ValueError:
            msg = f"--reward {text!r}: the weight after ':' must be a number"
            raise InputError(msg) from None
    return tuple(specs)


def grpo_command(
    dataset: Path = typer.Argument(..., help="A MARCO, ToolForge or OptiScribe dataset."),
    model: Path = typer.Option(..., "--model", help="Local HF causal LM folder to start from (e.g. an SFT model)."),
    out: Path = typer.Option(..., "--out", "-o", help="Run folder (checkpoints, metrics.jsonl, model/)."),
    steps: int = typer.Option(20, "--steps", min=1, help="Optimiser steps."),
    num_generations: int = typer.Option(4, "--num-generations", min=2, help="Completions per prompt (a group)."),
    prompts_per_step: int = typer.Option(2, "--prompts-per-step", min=1, help="Prompts (groups) per step."),
    lr: float | None = typer.Option(
        None, "--lr", min=0.0, help="Learning rate (default 3e-5 full fine-tuning, 5e-4 with --lora-rank)."
    ),
    lora_rank: int | None = typer.Option(None, "--lora-rank", min=1, help="Train LoRA adapters (merged on save)."),
    max_completion_length: int = typer.Option(
        160, "--max-completion-length", min=1, help="Tokens per turn (a SMILES answer: one per character)."
    ),
    turns: int = typer.Option(3, "--turns", min=1, help="MARCO: turns per trajectory (feedback between them)."),
    temperature: float = typer.Option(1.0, "--temperature", min=0.01, help="Sampling temperature."),
    beta: float = typer.Option(0.0, "--beta", min=0.0, help="KL coefficient (0: no reference model)."),
    save_steps: int = typer.Option(5, "--save-steps", min=1, help="Checkpoint every N steps."),
    seed: int = typer.Option(0, "--seed", help="Seed of sampling, batches and the ToolForge split."),
    eval_rows: int = typer.Option(8, "--eval-rows", min=0, help="ToolForge: dialogues held out (as in sft)."),
    reward: list[str] = typer.Option([], "--reward", help=REWARD_HELP),
    reward_option: list[str] = typer.Option([], "--reward-option", help=OPTION_HELP),
    overwrite: bool = typer.Option(False, "--overwrite", help="Start over in a folder holding a finished run."),
    as_json: bool = typer.Option(False, "--json", help="Print the summary as JSON."),
) -> None:
    """Train with GRPO on the dataset's prompts; the verifier scores every sampled completion."""
    from synth.core.dataset import open_dataset
    from synth.trainers.grpo.train import MODEL_DIR, GrpoSettings, train_grpo
    from synth.trainers.model_card import write_model_card

    settings = GrpoSettings(
        steps=steps,
        num_generations=num_generations,
        prompts_per_step=prompts_per_step,
        learning_rate=lr,
        lora_rank=lora_rank,
        max_completion_length=max_completion_length,
        temperature=temperature,
        beta=beta,
        turns=turns,
        save_steps=save_steps,
        seed=seed,
        eval_rows=eval_rows,
        rewards=_reward_specs(reward, reward_option),
    )
    summary = train_grpo(dataset, model=model, out=out, settings=settings, overwrite=overwrite)
    write_model_card(
        out / MODEL_DIR, trainer="grpo", dataset=open_dataset(dataset), settings=summary["settings"], metrics=summary
    )
    if as_json:
        console.print_json(json.dumps(summary))
        return
    curve = summary["reward_curve"]
    console.print(
        f"GRPO on {summary['prompts']} {summary['domain']} prompts: {summary['steps']} steps"
        + (f" (resumed from {summary['resumed_from']})" if summary["resumed_from"] else "")
        + f"; reward {curve[0]:.3f} -> {curve[-1]:.3f}" * bool(curve)
        + f"; model -> {out / MODEL_DIR}",
        highlight=False,
    )


def register(train_app: typer.Typer) -> None:
    """Add `grpo` to the `synth train` group."""
    train_app.command("grpo")(cli_errors(grpo_command))
