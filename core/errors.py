"""Errors a user can act on: each renders as one line and maps to an exit code."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any


class SynthError(Exception):
    """Base class for errors shown to the user as a single line."""

    exit_code: int = 1


class ConfigError(SynthError):
    """A pipeline config (YAML or options) is invalid."""

    exit_code = 2


class InputError(SynthError):
    """An input path or file cannot be used."""

    exit_code = 2


class OutputDirError(SynthError):
    """The output directory holds another run's data, or is in use."""

    exit_code = 3


class MissingDependencyError(SynthError):
    """A step needs an optional package that is not installed."""

    exit_code = 2


def read_json_file(path: Path) -> Any:
    """Parse a JSON file; invalid JSON is an `InputError` naming the file, line and problem."""
    try:
        return json.loads(path.read_text(encoding="utf-8"))
    except json.JSONDecodeError as error:
        msg = f"{path}: not valid JSON ({error.msg} at line {error.lineno})"
        raise InputError(msg) from None


def read_text_file(path: Path, *, hint: str, error: type[SynthError] = InputError) -> str:
    """A UTF-8 text file's contents; an unreadable or binary file is one `error` line naming the file, the line
    and byte where decoding failed, and `hint` (what the file should be)."""
    try:
        raw = path.read_bytes()
    except OSError as caught:
        msg = f"{path}: cannot read ({caught.strerror or caught})"
        raise error(msg) from None
    try:
        return raw.decode("utf-8")
    except UnicodeDecodeError as caught:
        line = raw.count(b"\n", 0, caught.start) + 1
        msg = f"{path}:{line}: not UTF-8 text (byte 0x{raw[caught.start]:02x} at offset {caught.start}); {hint}"
        raise error(msg) from None
