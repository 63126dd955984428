"""`synth optiscribe export`: write the kept MILPs of an OptiScribe dataset as `.lp`/`.mps` files.

synth optiscribe export out/optiscribe                      # -> out/optiscribe/instances/<id>.lp, <id>.mps
"""

from __future__ import annotations

import json
from pathlib import Path

import typer

from synth.cli._common import cli_errors, console, err_console

app = typer.Typer(help="OptiScribe datasets: export the instances as solver files.", no_args_is_help=True)


@app.command("export")
@cli_errors
def export_command(
    dataset: Path = typer.Argument(
        ..., help="OptiScribe dataset directory (from `synth run configs/optiscribe.yaml`)."
    ),
    target: Path | None = typer.Option(None, "--target", help="New or empty directory (default: DATASET/instances)."),
    formats: str = typer.Option("lp,mps", "--formats", help="Comma-separated file formats: lp, mps."),
) -> None:
    """Write each kept model as `<id>.lp` / `<id>.mps`, the files SCIP, HiGHS or Gurobi read."""
    from synth.generators.optiscribe.export import export_instances

    chosen = tuple(name.strip() for name in formats.split(",") if name.strip())
    unknown = sorted(set(chosen) - {"lp", "mps"})
    if unknown or not chosen:
        err_console.print(f"[bold red]error:[/] --formats: unknown format {(unknown or [''])[0]!r}; choose lp, mps")
        raise typer.Exit(2)
    report = export_instances(dataset, target=target, formats=chosen)  # type: ignore[arg-type]
    console.print_json(json.dumps(report))


def register(root: typer.Typer) -> None:
    """Add the `optiscribe` group to the root app."""
    root.add_typer(app, name="optiscribe")
