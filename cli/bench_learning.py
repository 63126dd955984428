"""`synth bench serve`: the learning loop's serving bench (registered on the `synth bench` group)."""

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


def register(bench_app: typer.Typer) -> None:
    """Add `serve` to the `synth bench` group."""
    bench_app.command("serve")(cli_errors(serve_bench_command))
