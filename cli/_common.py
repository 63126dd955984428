"""Shared CLI helpers: consoles, one-line errors, config overrides, progress bars."""

from __future__ import annotations

import functools
import logging
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from typing import Any, ParamSpec, TypeVar

import typer
import yaml
from rich.console import Console
from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeElapsedColumn

from synth.core.errors import ConfigError, SynthError

console = Console()
err_console = Console(stderr=True)

P = ParamSpec("P")
R = TypeVar("R")


def exit_with_error(message: str, code: int = 1) -> None:
    """Print `error: message` on one line to stderr and exit with `code`."""
    err_console.print(f"[bold red]error:[/] {message}", highlight=False, soft_wrap=True)
    raise typer.Exit(code)


def cli_errors(command: Callable[P, R]) -> Callable[P, R]:
    """Turn `SynthError`s raised by a command into a one-line message and the error's exit code."""

    @functools.wraps(command)
    def wrapper(*args: P.args, **kwargs: P.kwargs) -> R:
        try:
            return command(*args, **kwargs)
        except SynthError as error:
            exit_with_error(str(error), error.exit_code)
            raise AssertionError("unreachable") from error

    return wrapper


def apply_overrides(data: dict[str, Any], assignments: list[str] | None) -> dict[str, Any]:
    """Apply `--set a.b=value` overrides (values parsed as YAML) to a config mapping."""
    for assignment in assignments or []:
        key, sep, raw = assignment.partition("=")
        if not sep or not key:
            msg = f"--set {assignment!r}: expected KEY=VALUE, e.g. --set generator.samples=2"
            raise ConfigError(msg)
        node = data
        *parents, leaf = key.split(".")
        for part in parents:
            node = node.setdefault(part, {})
            if not isinstance(node, dict):
                msg = f"--set {assignment!r}: `{part}` is not a mapping"
                raise ConfigError(msg)
        node[leaf] = yaml.safe_load(raw)
    return data


def setup_logging(verbose: bool) -> None:
    """Log warnings (or info with --verbose) to stderr through rich."""
    from rich.logging import RichHandler

    handler = RichHandler(console=err_console, show_time=False, show_path=False, markup=False)
    logging.basicConfig(level=logging.INFO if verbose else logging.WARNING, handlers=[handler], force=True)


@contextmanager
def shard_progress(total_shards: int, *, enabled: bool = True) -> Iterator[Progress | None]:
    """A rich progress display with a shard bar (and room for a rows counter)."""
    if not enabled:
        yield None
        return
    progress = Progress(
        TextColumn("[bold]{task.description}"),
        BarColumn(),
        MofNCompleteColumn(),
        TextColumn("{task.fields[rows]:,} rows"),
        TimeElapsedColumn(),
        console=err_console,
        transient=False,
    )
    with progress:
        yield progress
