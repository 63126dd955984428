"""The root `synth` command: registers one module per command group."""

from __future__ import annotations

import typer

from synth import __version__
from synth.cli import (
    bench,
    curate,
    deploy,
    domains,
    inspect,
    lob,
    loop,
    optiscribe,
    run,
    serve,
    study,
    toolforge,
    train,
    verify,
)
from synth.cli._common import setup_logging

app = typer.Typer(
    name="synth",
    help="Chain generators, verifiers and filters into Arrow datasets, locally or as Prefect flows.",
    no_args_is_help=True,
    pretty_exceptions_enable=False,
    add_completion=False,
)


def _version(value: bool) -> None:
    if value:
        typer.echo(f"synth {__version__}")
        raise typer.Exit()


@app.callback()
def root(
    verbose: bool = typer.Option(False, "--verbose", "-v", help="Log progress details (INFO) to stderr."),
    version: bool = typer.Option(
        False, "--version", callback=_version, is_eager=True, help="Print the synth version and exit."
    ),
) -> None:
    """synth: data synthesis and curation pipelines."""
    setup_logging(verbose)


run.register(app)
inspect.register(app)
verify.register(app)
domains.register(app)
train.register(app)
lob.register(app)
optiscribe.register(app)
toolforge.register(app)
curate.register(app)
deploy.register(app)
serve.register(app)
loop.register(app)
app.add_typer(study.app, name="study")
app.add_typer(bench.app, name="bench")


def main() -> None:
    """Console-script entry point."""
    app()


if __name__ == "__main__":
    main()
