"""Errors a user can act on: each renders as one line and maps to an exit code."""

from __future__ import annotations


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
