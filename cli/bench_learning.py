"""`synth bench serve`, `marco-policies`, `toolforge-bfcl`, `optiscribe-challenger`: the learning loop's benches."""

from __future__ import annotations

import json
from pathlib import Path

import typer

from synth.cli._common import cli_errors, console, write_report


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
    if out is not None:
        write_report(out, result, sort_keys=True)
    console.print_json(json.dumps(result, sort_keys=True))


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
    write_report(out, report, sort_keys=True)
    console.print_json(json.dumps({"policies": report["policies"], "paired": report["paired"]}))


def _named_models(values: list[str], *, option: str = "--model", what: str = "MODEL_DIR") -> dict[str, Path]:
    from synth.core.errors import InputError

    models = {}
    for text in values:
        name, sep, folder = text.partition("=")
        if not sep or not name or not folder:
            msg = f"{option} {text!r}: expected NAME={what}"
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
    write_report(out, report, sort_keys=True)
    console.print_json(json.dumps(report, sort_keys=True))


def optiscribe_challenger_command(
    model: list[str] = typer.Option([], "--model", help="NAME=MODEL_DIR (repeatable); each gets its ratios to sft."),
    grpo_run: list[str] = typer.Option(
        [], "--grpo-run", help="NAME=RUN (repeatable): a `synth train grpo` run folder; its model/ and reward curve."
    ),
    instruction: str | None = typer.Option(
        None, "--instruction", help="The instruction every policy answers (default: max-cut, 30 nodes, p = 0.3)."
    ),
    seeds: int = typer.Option(16, "--seeds", min=1, help="Instance seeds 0..N-1 (the same for every policy)."),
    total_nodes: int = typer.Option(1000, "--total-nodes", min=1, help="SCIP node cap of every solve."),
    time_limit: float = typer.Option(20.0, "--time-limit", min=1, help="SCIP wall-clock safety cap per solve (s)."),
    max_tokens: int = typer.Option(128, "--max-tokens", min=1, help="Tokens per answer."),
    temperature: float = typer.Option(0.0, "--temperature", min=0.0, help="Models' sampling (0 = greedy)."),
    scripted: bool = typer.Option(True, "--scripted/--no-scripted", help="Also run the scripted challenger."),
    out: Path = typer.Option(Path("docs/bench/optiscribe-llm-challenger.json"), "--out", "-o", help="JSON report."),
) -> None:
    """Median SCIP nodes, post-cut gap and feasibility of challenger models vs the scripted challenger."""
    from synth.trainers.grpo.optiscribe_eval import BENCH_INSTRUCTION, evaluate_challengers

    report = evaluate_challengers(
        _named_models(model),
        grpo_runs=_named_models(grpo_run, option="--grpo-run", what="RUN_DIR"),
        instruction=instruction or BENCH_INSTRUCTION,
        seeds=tuple(range(seeds)),
        total_nodes=total_nodes,
        time_limit=time_limit,
        max_tokens=max_tokens,
        temperature=temperature,
        include_scripted=scripted,
    )
    write_report(out, report, sort_keys=True)
    keys = ("valid_rate", "feasibility_rate", "median_nodes", "median_postcut_gap", "mean_reward", "refusals")
    summary = {name: {k: p[k] for k in keys} for name, p in report["policies"].items()}
    console.print_json(json.dumps({"policies": summary, "vs_sft": report.get("vs_sft")}))
    console.print(f"wrote {out}")


def register(bench_app: typer.Typer) -> None:
    """Add `serve`, `marco-policies`, `toolforge-bfcl` and `optiscribe-challenger` to the `synth bench` group."""
    bench_app.command("serve")(cli_errors(serve_bench_command))
    bench_app.command("marco-policies")(cli_errors(marco_policies_command))
    bench_app.command("toolforge-bfcl")(cli_errors(toolforge_bfcl_command))
    bench_app.command("optiscribe-challenger")(cli_errors(optiscribe_challenger_command))
