"""`synth bench serve` and `synth bench marco-policies`: the learning loop's benches (on the `synth bench` group)."""

from __future__ import annotations

import json
from pathlib import Path

import typer

from synth.cli._common import cli_errors, console


def serve_bench_command(
    model: Path | None = typer.Option(None, "--model", help="Model folder to serve (default: a tiny local LM)."),
    requests: int = typer.Option(32, "--requests", min=1, help="Requests per pass."),
    max_tokens: int = typer.Option(16, "--max-tokens", min=1, help="Tokens per completion."),
    concurrency: list[int] = typer.Option(
        [1, 8], "--concurrency", help="Requests in flight per pass (first = baseline)."
    ),
    batch_size: int = typer.Option(8, "--batch-size", min=1, help="Server batch size."),
    out: Path | None = typer.Option(None, "--out", "-o", help="Write the JSON here too."),
) -> None:
    """Requests/s of synth serve via the openai backend at each concurrency, vs in-process; cached rerun calls."""
    from synth.pipelines.serving_bench import bench_serve

    result = bench_serve(
        model, requests=requests, max_tokens=max_tokens, concurrency=concurrency, batch_size=batch_size
    )
    text = json.dumps(result, indent=2, sort_keys=True)
    if out is not None:
        out.parent.mkdir(parents=True, exist_ok=True)
        out.write_text(text + "\n", encoding="utf-8")
    console.print_json(text)


def marco_policies_command(
    model: list[str] = typer.Option([], "--model", help="NAME=MODEL_DIR (repeatable), e.g. sft=runs/sft."),
    task: str = typer.Option("BPQ", "--task", help="MuMOInstruct task (BDP, BDQ, BPQ) or PQS."),
    start: int = typer.Option(300, "--start", min=0, help="First held-out source (train on sources before it)."),
    count: int = typer.Option(200, "--count", min=1, help="Held-out sources."),
    budget: int = typer.Option(5, "--budget", min=1, help="B of Same-B (Same-1 is its first turn)."),
    temperature: float = typer.Option(0.0, "--temperature", min=0.0, help="Sampling temperature (0 = greedy)."),
    max_tokens: int = typer.Option(
        160, "--max-tokens", min=1, help="Tokens per proposal (a SMILES answer is one token per character)."
    ),
    scripted: bool = typer.Option(True, "--scripted/--no-scripted", help="Also run the scripted proposer."),
    out: Path = typer.Option(Path("docs/bench/marco-policies.json"), "--out", "-o", help="JSON report."),
) -> None:
    """Same-1 / Same-B SR×Sim and validity of models vs the scripted proposer on the same held-out sources."""
    from synth.trainers.grpo.marco_eval import evaluate_policies

    report = evaluate_policies(
        _named_models(model),
        task=task,
        start=start,
        count=count,
        budget=budget,
        temperature=temperature,
        max_tokens=max_tokens,
        include_scripted=scripted,
    )
    text = json.dumps(report, indent=2, sort_keys=True)
    out.parent.mkdir(parents=True, exist_ok=True)
    out.write_text(text + "\n", encoding="utf-8")
    console.print_json(json.dumps({"policies": report["policies"], "paired": report["paired"]}))


def _named_models(values: list[str]) -> dict[str, Path]:
    from synth.core.errors import InputError

    models = {}
    for text in values:
        name, sep, folder = text.partition("=")
        if not sep or not name or not folder:
            msg = f"--model {text!r}: expected NAME=MODEL_DIR"
            raise InputError(msg)
        models[name] = Path(folder)
    return models


def toolforge_bfcl_command(
    dataset: Path = typer.Argument(..., help="The ToolForge dataset the models were trained on."),
    model: list[str] = typer.Option([], "--model", help="NAME=MODEL_DIR (repeatable)."),
    eval_rows: int = typer.Option(8, "--eval-rows", min=1, help="Held-out dialogues (the sft/grpo split)."),
    seed: int = typer.Option(0, "--seed", help="Seed of the split (as given to sft/grpo)."),
    max_new_tokens: int = typer.Option(96, "--max-new-tokens", min=1, help="Tokens of the first assistant turn."),
    out: Path = typer.Option(Path("docs/bench/toolforge-bfcl.json"), "--out", "-o", help="JSON report."),
) -> None:
    """First-call BFCL AST accuracy of models on the held-out dialogues exported as BFCL entries."""
    from synth.trainers.grpo.toolforge_eval import evaluate_bfcl_first_calls

    report = evaluate_bfcl_first_calls(
        _named_models(model), dataset, eval_rows=eval_rows, seed=seed, max_new_tokens=max_new_tokens
    )
    text = json.dumps(report, indent=2, sort_keys=True)
    out.parent.mkdir(parents=True, exist_ok=True)
    out.write_text(text + "\n", encoding="utf-8")
    console.print_json(text)


def register(bench_app: typer.Typer) -> None:
    """Add `serve`, `marco-policies` and `toolforge-bfcl` to the `synth bench` group."""
    bench_app.command("serve")(cli_errors(serve_bench_command))
    bench_app.command("marco-policies")(cli_errors(marco_policies_command))
    bench_app.command("toolforge-bfcl")(cli_errors(toolforge_bfcl_command))
