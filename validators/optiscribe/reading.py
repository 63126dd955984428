"""Read LP/MPS text into a SCIP model, turning SCIP's parser errors into one-line messages."""

from __future__ import annotations

import os
import re
import sys
import tempfile
from collections.abc import Iterator
from contextlib import contextmanager
from typing import TYPE_CHECKING, Literal

if TYPE_CHECKING:
    from pyscipopt import Model

ModelFormat = Literal["lp", "mps"]


class ModelTextError(ValueError):
    """LP/MPS text SCIP cannot read; the message is the parser's first error line."""


def _parser_message(output: str) -> str:
    lines = [re.sub(r"^\[[^\]]*\]\s*", "", line).strip() for line in output.splitlines()]
    errors = [line.removeprefix("ERROR: ").strip() for line in lines if line.startswith("ERROR")]
    return errors[0] if errors else (next((line for line in lines if line), "SCIP could not read the model"))


@contextmanager
def captured_output() -> Iterator[list[str]]:
    """Redirect file descriptors 1 and 2 (C-level output) to a temporary file; yields a list that gets its text.

    Other threads' output in that instant lands there too.
    """
    sys.stdout.flush()
    sys.stderr.flush()
    saved = (os.dup(1), os.dup(2))
    captured: list[str] = []
    try:
        with tempfile.TemporaryFile() as sink:
            os.dup2(sink.fileno(), 1)
            os.dup2(sink.fileno(), 2)
            try:
                yield captured
            finally:
                os.dup2(saved[0], 1)
                os.dup2(saved[1], 2)
                sink.seek(0)
                captured.append(sink.read().decode(errors="replace"))
    finally:
        os.close(saved[0])
        os.close(saved[1])


def read_model_text(text: str, *, fmt: ModelFormat = "lp") -> Model:
    """A SCIP model read from `text` with output hidden; malformed text raises `ModelTextError`."""
    from pyscipopt import Model

    if not text.strip():
        msg = "empty model text"
        raise ModelTextError(msg)
    fd, path = tempfile.mkstemp(suffix=f".{fmt}")
    with os.fdopen(fd, "w", encoding="utf-8") as handle:
        handle.write(text)
    model = Model()
    model.hideOutput()
    error: OSError | None = None
    try:
        with captured_output() as output:
            try:
                model.readProblem(path)
            except OSError as caught:
                error = caught
    finally:
        os.remove(path)
    if error is not None:
        raise ModelTextError(_parser_message(output[0])) from None
    return model


def write_model_text(model: Model, *, fmt: ModelFormat = "lp") -> str:
    """The model as LP or MPS text, as SCIP writes it."""
    fd, path = tempfile.mkstemp(suffix=f".{fmt}")
    os.close(fd)
    try:
        model.writeProblem(path, verbose=False)
        with open(path, encoding="utf-8") as handle:
            return handle.read()
    finally:
        os.remove(path)


PROBLEM_NAME = re.compile(r"^[\\*]\s+Problem name\s*:\s*(\S+)", re.MULTILINE)


def convert_model_text(text: str, *, source: ModelFormat, target: ModelFormat, name: str = "model") -> str:
    """Re-write model text from one format to the other through SCIP's readers and writers.

    The converted model keeps the problem name in the source's SCIP header (else `name`): SCIP would name it
    after the temporary file it read, so the same text would convert to different bytes each time.
    """
    if source == target:
        return text
    model = read_model_text(text, fmt=source)
    header = PROBLEM_NAME.search(text)
    model.setProbName(header.group(1) if header else name)
    return write_model_text(model, fmt=target)
