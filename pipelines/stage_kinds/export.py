"""The `export` stage: write one synth dataset in a format other tools read, into the stage's folder.

    openai:  {kind: export, inputs: [dialogues], format: openai, arguments: dict, reasoning: field}
    lobster: {kind: export, inputs: [rollouts], format: lobster}

Formats by domain: lob → `lobster` (a folder per rollout, message + orderbook files, replayed strictly);
optiscribe → `mps`, `lp` (`<id>.<format>` per instance); toolforge → `openai`, `hermes`, `xlam` (`<format>.jsonl`)
and `bfcl` (a `bfcl/` folder). The same input gives byte-identical files. The summary counts rows read, records
written and rows skipped by reason; `path` is where the files are, relative to the stage's folder.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any, ClassVar, Literal

from pydantic import Field, PositiveInt

from synth.core.config import StrictModel
from synth.core.errors import ConfigError, InputError
from synth.core.stage import StageContext, StageInput
from synth.pipelines.stage_kinds.inputs import DATASET_KINDS, describe, require_count
from synth.pipelines.stage_kinds.tagged import parse_tagged

READER = "an export stage"


class ExportSettings(StrictModel):
    """One export format's settings; `write` puts its files into a fresh folder and returns the counts."""

    domain: ClassVar[str]
    format: str

    def write(self, dataset: Path, work: Path) -> dict[str, Any]:
        """Export the kept rows of `dataset` into `work` (empty) and return the report."""
        raise NotImplementedError


class LobsterExport(ExportSettings):
    """LOB rollouts as LOBSTER files (see `synth lob export`)."""

    domain: ClassVar[str] = "lob"
    format: Literal["lobster"]
    limit: PositiveInt | None = Field(None, description="export only the first N rollouts")
    check: bool = Field(True, description="replay every written file strictly; a refused message fails the stage")

    def write(self, dataset: Path, work: Path) -> dict[str, Any]:
        from synth.core.dataset import open_dataset
        from synth.generators.lob.export import export_dataset

        rows = open_dataset(dataset, domain="lob", needs="LOBSTER export").rows
        report = export_dataset(dataset, work, limit=self.limit, check=self.check)
        if self.check and (report.violations or report.level_mismatches):
            msg = (
                f"{dataset}: the strict replay of the exported LOBSTER files refused {sum(report.violations.values())} "
                f"messages and found {report.level_mismatches} book mismatches; `synth verify` the dataset"
            )
            raise InputError(msg)
        skipped = {"limit": rows - report.rollouts} if rows > report.rollouts else {}
        return _report(self.format, ".", rows=rows, written=report.rollouts, skipped=skipped, **report.to_dict())


class MilpExport(ExportSettings):
    """OptiScribe instances as solver files, `<id>.<format>` (as `synth optiscribe export` names them).

    A converted model keeps the problem name of its source text (SCIP would name it after a temporary file).
    """

    domain: ClassVar[str] = "optiscribe"
    format: Literal["mps", "lp"]

    def write(self, dataset: Path, work: Path) -> dict[str, Any]:
        from synth.core.dataset import read_rows
        from synth.validators.optiscribe.reading import convert_model_text

        frame = read_rows(
            dataset, domain="optiscribe", columns=("id", "model_text", "model_format"), needs="MILP export"
        )
        for row in frame.iter_rows(named=True):
            text = convert_model_text(row["model_text"], source=row["model_format"], target=self.format, name=row["id"])
            (work / f"{row['id']}.{self.format}").write_text(text, encoding="utf-8")
        return _report(self.format, ".", rows=frame.height, written=frame.height, skipped={})


class ToolForgeExport(ExportSettings):
    """ToolForge dialogues for other trainers and benchmarks (see `synth toolforge export`)."""

    domain: ClassVar[str] = "toolforge"
    format: Literal["xlam", "bfcl"]

    def options(self) -> dict[str, Any]:
        """The format's own options, as `export_dataset` takes them."""
        return {}

    def write(self, dataset: Path, work: Path) -> dict[str, Any]:
        from synth.generators.toolforge.export import export_dataset

        target = self.format if self.format == "bfcl" else f"{self.format}.jsonl"
        report = export_dataset(dataset, work / target, fmt=self.format, **self.options())  # type: ignore[arg-type]
        extras = {"categories": report["categories"]} if "categories" in report else {}
        return _report(
            self.format, target, rows=report["rows"], written=report["written"], skipped=report["skipped"], **extras
        )


class OpenAIExport(ToolForgeExport):
    """ToolForge dialogues as OpenAI chat JSONL."""

    format: Literal["openai"]  # type: ignore[assignment]
    arguments: Literal["dict", "string"] = Field("string", description="tool-call arguments as a dict or JSON string")
    reasoning: Literal["drop", "field", "inline"] = Field(
        "drop", description="drop the reasoning, keep it as `reasoning_content`, or inline it as <think>"
    )

    def options(self) -> dict[str, Any]:
        return {"arguments": self.arguments, "reasoning": self.reasoning}


class HermesExport(ToolForgeExport):
    """ToolForge dialogues as Hermes/Qwen-style JSONL with string contents."""

    format: Literal["hermes"]  # type: ignore[assignment]
    tool_role: Literal["tool", "user"] = Field("tool", description="role of the tool-result turns")

    def options(self) -> dict[str, Any]:
        return {"tool_role": self.tool_role}


FORMATS: dict[str, type[ExportSettings]] = {
    "lobster": LobsterExport,
    "mps": MilpExport,
    "lp": MilpExport,
    "openai": OpenAIExport,
    "hermes": HermesExport,
    "xlam": ToolForgeExport,
    "bfcl": ToolForgeExport,
}
FORMATS_BY_DOMAIN: dict[str, tuple[str, ...]] = {
    domain: tuple(name for name, model in FORMATS.items() if model.domain == domain)
    for domain in dict.fromkeys(model.domain for model in FORMATS.values())
}


class ExportStageKind:
    """The `export` stage kind (see the module docstring)."""

    kind: ClassVar[str] = "export"

    def parse_settings(self, data: Mapping[str, Any]) -> ExportSettings:
        """Validate `format` and its options (pydantic `ValidationError` on bad input)."""
        return parse_tagged(data, tag="format", members=FORMATS)

    def check(self, settings: ExportSettings, inputs: Sequence[StageInput]) -> None:
        """Refuse anything but one synth dataset whose domain has `format`."""
        require_count(inputs, 1, reader=READER, what="a synth dataset")
        item = inputs[0]
        if item.kind not in DATASET_KINDS:
            msg = f"`inputs`: {READER} reads a synth dataset, but {describe(item)} is not one"
            raise ConfigError(msg)
        allowed = FORMATS_BY_DOMAIN.get(item.domain or "")
        if allowed is None:
            domains = ", ".join(FORMATS_BY_DOMAIN)
            msg = f"`format`: {describe(item)} has no export format; formats exist for {domains} rows"
            raise ConfigError(msg)
        if settings.format not in allowed:
            msg = f"`format`: {settings.format!r} does not fit {describe(item)}; choose {', '.join(allowed)}"
            raise ConfigError(msg)

    def run(self, settings: ExportSettings, ctx: StageContext) -> dict[str, Any]:
        """Write the export into `ctx.work` and return its report."""
        return settings.write(ctx.only_input().path, ctx.work)


def _report(
    fmt: str, path: str, *, rows: int, written: int, skipped: Mapping[str, int], **extras: Any
) -> dict[str, Any]:
    """The summary every format returns: where, rows read, records written, skips by reason, then its own counts."""
    return {"format": fmt, "path": path, "rows": rows, "written": written, "skipped": dict(skipped), **extras}
