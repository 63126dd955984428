"""Shared CLI helpers: consoles, one-line errors, config overrides, progress bars, bench reports."""

from __future__ import annotations

import errno
import functools
import logging
import os
from collections.abc import Callable, Collection, Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any, ParamSpec, TypeVar

import typer
from rich.console import Console
from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeElapsedColumn
from rich.text import Text

from synth.core.errors import SynthError
from synth.core.sink import write_json_atomic

console = Console()
err_console = Console(stderr=True)

P = ParamSpec("P")
R = TypeVar("R")


def exit_with_error(message: str, code: int = 1) -> None:
    """Print `error: message` on one line to stderr (the message taken literally) and exit with `code`."""
    line = Text.assemble(("error:", "bold red"), " ", " ".join(message.splitlines()))
    err_console.print(line, highlight=False, soft_wrap=True, emoji=False)
    raise typer.Exit(code)


def write_report(out: Path, report: Any, *, sort_keys: bool = False) -> None:
    """Write a bench report to `out` as indented JSON, atomically (an interrupted run never leaves half a file),
    creating its folder."""
    out.parent.mkdir(parents=True, exist_ok=True)
    write_json_atomic(out, report, sort_keys=sort_keys)


def split_choices(value: str, allowed: Collection[str], *, option: str, noun: str) -> list[str]:
    """The comma-separated names of `option`; an unknown one (or none) is one error line and exit 2."""
    names = [name.strip() for name in value.split(",") if name.strip()]
    unknown = [name for name in names if name not in allowed]
    if unknown or not names:
        shown = unknown[0] if unknown else value
        exit_with_error(f"{option}: unknown {noun} {shown!r}; choose from {sorted(allowed)}", code=2)
    return names


def describe_os_error(error: OSError) -> str:
    """One line for an `OSError` of the system (full disk, permissions, ...): what happened, to which file."""
    target = error.filename if error.filename is not None else "an unnamed file"
    if error.errno in (errno.ENOSPC, errno.EDQUOT):
        what = "no space left" if error.errno == errno.ENOSPC else "disk quota exceeded"
        device = _mount_point(Path(os.fsdecode(target))) if error.filename is not None else "the device"
        return f"{what} on {device} while writing {target}; free some space there or use another --out"
    reason = error.strerror or str(error) or type(error).__name__
    hint = {
        errno.EACCES: "; check its permissions or use another --out",
        errno.EPERM: "; check its permissions or use another --out",
        errno.EROFS: "; use a writable --out",
    }.get(error.errno or 0, "")
    return f"{target}: {reason[:1].lower()}{reason[1:]}{hint}"


def _mount_point(path: Path) -> Path:
    path = path.absolute()
    while path != path.parent and not os.path.ismount(path):
        path = path.parent
    return path


def cli_errors(command: Callable[P, R]) -> Callable[P, R]:
    """Turn `SynthError`s and system `OSError`s raised by a command into one line and an exit code.

    A `SynthError` exits with its own code; an `OSError` (disk full, permission denied, ...) exits 1.
    """

    @functools.wraps(command)
    def wrapper(*args: P.args, **kwargs: P.kwargs) -> R:
        try:
            return command(*args, **kwargs)
        except SynthError as error:
            exit_with_error(str(error), error.exit_code)
            raise AssertionError("unreachable") from error
        except OSError as error:
            exit_with_error(describe_os_error(error), 1)
            raise AssertionError("unreachable") from error

    return wrapper


def setup_logging(verbose: bool) -> None:
    """Log warnings (or info with --verbose) to stderr through rich."""
    from rich.logging import RichHandler

    handler = RichHandler(console=err_console, show_time=False, show_path=False, markup=False)
    logging.basicConfig(level=logging.INFO if verbose else logging.WARNING, handlers=[handler], force=True)


@contextmanager
def shard_progress(total_shards: int, *, enabled: bool = True) -> Iterator[Progress | None]:
    """A rich progress display with a shard bar (and room for a rows counter); the caller starts it, so a run
    refused before its first shard prints only its error line."""
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
    try:
        yield progress
    finally:
        if progress.live.is_started:
            progress.stop()
