"""`trainer: lob`: fit the LOB model on LOBSTER files (the settings of `synth train lob`).

The files are a rollout of one input, an export stage with `format: lobster` (found through its manifest's file
list, each checked against its sha256; `rollout` picks the folder, default the first), or, with no inputs, the
`messages` file and its `orderbook`. The model folder holds `lob_model.json` (its `training` record) and the card.
"""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path
from typing import Literal

from pydantic import Field, PositiveInt

from synth.core.errors import ConfigError, InputError, read_json_file
from synth.core.sink import sha256_file
from synth.core.stage import StageContext, StageInput
from synth.pipelines.stage_kinds.inputs import describe, require_count
from synth.pipelines.stage_kinds.training import Trained, TrainSettings
from synth.trainers.model_card import trained_on_files

READER = "trainer `lob`"
NEEDS = "an export stage with `format: lobster`"


class LobTraining(TrainSettings):
    """Field distributions by counts, the pointer by maximum likelihood, Santa Fe rates."""

    trainer: Literal["lob"]
    messages: str | None = Field(None, description="LOBSTER message file (no inputs); null = read a lobster export")
    orderbook: str | None = Field(None, description="its orderbook file; null = named after the message file")
    rollout: str | None = Field(None, description="the export's rollout folder to fit on; null = the first")
    train_fraction: float = Field(0.6, ge=0.01, le=1.0, description="fit on this first share of the messages")
    levels: int = Field(10, ge=1, le=50, description="levels the pointer may reference")
    tick: PositiveInt = Field(100, description="price tick in LOBSTER units (dollars x 10000)")
    pointer: Literal["logit", "attention"] = Field("logit", description="conditional logit, or key/query MLPs")

    def check_inputs(self, inputs: Sequence[StageInput]) -> None:
        if not inputs:
            if self.messages is None:
                msg = f"`messages`: {READER} with no inputs fits on LOBSTER files; set `messages` or read {NEEDS}"
                raise ConfigError(msg)
            if self.rollout is not None:
                msg = f"`rollout`: picks a rollout of {NEEDS}, and this stage reads `messages` instead"
                raise ConfigError(msg)
            for path, (name, what) in zip(
                self.files(), (("messages", "message"), ("orderbook", "orderbook")), strict=True
            ):
                if not path.is_file():
                    msg = f"`{name}`: {path}: LOBSTER {what} file not found"
                    raise ConfigError(msg)
            return
        require_count(inputs, 1, reader=READER, what=NEEDS)
        item = inputs[0]
        if item.kind != "export" or item.format != "lobster":
            msg = f"`inputs`: {READER} needs {NEEDS}, but {describe(item)} is not one"
            raise ConfigError(msg)
        if self.messages is not None or self.orderbook is not None:
            field = "messages" if self.messages is not None else "orderbook"
            msg = f"`{field}`: {READER} fits either its input `{item.name}` or explicit files, not both"
            raise ConfigError(msg)

    def files(self) -> tuple[Path, Path]:
        """The explicit message and orderbook files."""
        from synth.pipelines.lob import orderbook_for

        messages = Path(self.messages or "").expanduser()
        return messages, Path(self.orderbook).expanduser() if self.orderbook else orderbook_for(messages)

    def train(self, ctx: StageContext, model_dir: Path, *, seed: int) -> Trained:
        from synth.generators.lob.fit import fit_lob_model
        from synth.generators.lob.generator import read_day

        if ctx.inputs:
            item = ctx.only_input()
            messages, orderbook = exported_rollout(item.path, rollout=self.rollout)
            folder, manifest_sha256 = item.path, sha256_file(item.path / "manifest.json")
        else:
            messages, orderbook = self.files()
            folder, manifest_sha256 = None, None
        day, books = read_day(messages, orderbook)
        model = fit_lob_model(
            day,
            books,
            train_fraction=self.train_fraction,
            levels=self.levels,
            tick=self.tick,
            source=messages.name,
            pointer=self.pointer,
            seed=seed,
        )
        model.save(model_dir)
        data = trained_on_files(
            [messages, orderbook], domain="lob", rows=len(day), folder=folder, manifest_sha256=manifest_sha256
        )
        return Trained(dict(model.training), data)


def exported_rollout(export: Path, *, rollout: str | None) -> tuple[Path, Path]:
    """The message and orderbook files of one rollout of a lobster export, checked against its manifest's sha256."""
    from synth.pipelines.lob import orderbook_for

    manifest = read_json_file(export / "manifest.json")
    digests = {entry["path"]: entry["sha256"] for entry in manifest.get("files", [])}
    messages = sorted(path for path in digests if "_message_" in Path(path).name and path.endswith(".csv"))
    folders = sorted({Path(path).parent.as_posix() for path in messages})
    if not folders:
        msg = f"{export}: manifest.json lists no LOBSTER message files; is this an export with `format: lobster`?"
        raise InputError(msg)
    chosen = folders[0] if rollout is None else rollout
    if chosen not in folders:
        msg = f"`rollout`: {chosen!r} is not a rollout of {export} (it has {len(folders)}, e.g. {folders[0]!r})"
        raise InputError(msg)
    message = next(path for path in messages if Path(path).parent.as_posix() == chosen)
    pair = (message, orderbook_for(Path(message)).as_posix())
    for relative in pair:
        if relative not in digests or sha256_file(export / relative) != digests[relative]:
            msg = f"{export / relative}: missing or changed since the export (sha256 differs from its manifest.json)"
            raise InputError(msg)
    return export / pair[0], export / pair[1]
