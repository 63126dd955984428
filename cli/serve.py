"""`synth serve MODEL_DIR`: an OpenAI-compatible chat server over a local model (the transformers backend).

    synth serve models/marco-grpo                      # http://127.0.0.1:8000/v1
    synth serve models/tf-sft --port 8011 --batch-size 8 --max-pending 32

Any OpenAI client (or synth's `openai` backend: `backend: openai, base_url: http://127.0.0.1:8000/v1`) can call it.
"""

from __future__ import annotations

from pathlib import Path

import typer

from synth.cli._common import cli_errors, console


def serve_command(
    model_dir: Path = typer.Argument(..., help="Local HF causal LM folder (e.g. from `synth train sft|grpo`)."),
    host: str = typer.Option("127.0.0.1", "--host", help="Interface to bind (0.0.0.0 exposes it to the network)."),
    port: int = typer.Option(8000, "--port", min=0, max=65535, help="TCP port."),
    name: str | None = typer.Option(None, "--name", help="Model id clients send (default: the folder name)."),
    batch_size: int = typer.Option(8, "--batch-size", min=1, help="Queued requests answered by one generate call."),
    max_pending: int = typer.Option(64, "--max-pending", min=1, help="Requests that may wait; more get 429."),
    max_body_bytes: int = typer.Option(1_000_000, "--max-body-bytes", min=1, help="Larger request bodies get 413."),
    max_tokens: int = typer.Option(256, "--max-tokens", min=1, help="Cap on the tokens of one completion."),
) -> None:
    """Serve MODEL_DIR at /v1/chat/completions and /v1/models until interrupted."""
    from synth.core.llm_backends import TransformersBackend
    from synth.pipelines.serving import ServeSettings, create_app, run_server

    backend = TransformersBackend(model_dir, batch_size=batch_size)
    settings = ServeSettings(
        model_name=name or model_dir.resolve().name,
        max_body_bytes=max_body_bytes,
        max_pending=max_pending,
        batch_size=batch_size,
        max_tokens=max_tokens,
    )
    console.print(f"serving {settings.model_name} at http://{host}:{port}/v1 (ctrl-c stops)", highlight=False)
    run_server(create_app(backend, settings), host=host, port=port)


def register(root: typer.Typer) -> None:
    """Add `serve` to the root app."""
    root.command("serve")(cli_errors(serve_command))
