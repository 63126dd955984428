"""`synth loop CONFIG`: rounds of generate → verify → GRPO, each generating with the previous round's model.

    synth loop configs/marco-loop.yaml                     # round-00 (scripted + SFT), round-01..R (GRPO)
    synth loop configs/marco-loop.yaml --set rounds=1      # overrides as in `synth run`

A rerun resumes: complete datasets and finished runs are reused, an interrupted GRPO run continues from its last
checkpoint.
"""

from __future__ import annotations

import json
from pathlib import Path

import typer

from synth.cli._common import cli_errors, console


def loop_command(
    config: Path = typer.Argument(..., help="Loop config (YAML): rounds, generate (a MARCO pipeline), sft, grpo."),
    out: Path | None = typer.Option(None, "--out", "-o", help="Output folder (default: the config's `out`)."),
    overrides: list[str] = typer.Option([], "--set", help="Override a config value: key.path=value (YAML)."),
    as_json: bool = typer.Option(False, "--json", help="Print the per-round summary as JSON."),
) -> None:
    """Run (or resume) the learning loop the config describes."""
    from pydantic import ValidationError

    from synth.core.config import apply_overrides, format_validation_error, read_config_mapping
    from synth.core.errors import ConfigError
    from synth.pipelines.learning_loop import LoopConfig, run_loop

    data = apply_overrides(read_config_mapping(config), overrides)
    target = out or (Path(str(data.pop("out"))) if "out" in data else None)
    data.pop("out", None)
    if target is None:
        msg = f"{config}: no `out` in the config; pass --out"
        raise ConfigError(msg)
    try:
        parsed = LoopConfig.model_validate(data)
    except ValidationError as error:
        raise ConfigError(format_validation_error(error, source=str(config))) from None
    result = run_loop(parsed, target)
    if as_json:
        console.print_json(json.dumps(result))
        return
    for entry in result["rounds"]:
        figures = entry["generated"]
        console.print(
            f"round {entry['round']}: {figures['trajectories']} trajectories by "
            f"{entry['generator_model'] or 'the scripted proposer'} (SR×Sim {figures['sr_x_sim']:.3f}, validity "
            f"{figures['validity']:.2f}) -> {entry['model']}",
            highlight=False,
        )


def register(root: typer.Typer) -> None:
    """Add `loop` to the root app."""
    root.command("loop")(cli_errors(loop_command))
