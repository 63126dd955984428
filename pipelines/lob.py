"""The LOB domain (ReLOBGen): rollouts of LOBSTER messages continuing real windows, verified by strict replay."""

from __future__ import annotations

from pathlib import Path

from pydantic import Field, PositiveInt, field_validator

from synth.core.config import StrictModel
from synth.core.errors import InputError
from synth.core.registry import DomainSpec
from synth.core.steps import Generator, Verifier

AMZN_MESSAGES = "AMZN_2012-06-21_34200000_57600000_message_1.csv"


def orderbook_for(messages: Path) -> Path:
    """The orderbook file LOBSTER names after a message file (`..._message_L.csv` → `..._orderbook_L.csv`)."""
    return messages.with_name(messages.name.replace("_message_", "_orderbook_"))


class LobConfig(StrictModel):
    """Generator settings of the LOB rollouts."""

    method: str = Field("relobgen", description="relobgen; rejection or correction (LOBS5-style); zero-intelligence")
    messages: str | None = Field(None, description="LOBSTER message file; null = the shipped AMZN day (level 1)")
    orderbook: str | None = Field(None, description="its orderbook file; null = named after the message file")
    model: str | None = Field(None, description="model from `synth train lob`; null = the shipped AMZN model")
    train_fraction: float = Field(0.6, gt=0.0, lt=1.0, description="windows start after this share of the day")
    windows: PositiveInt = Field(100, description="held-out windows, evenly spaced")
    replicates: PositiveInt = Field(1, description="rollouts per window (independent draws)")
    horizon: PositiveInt = Field(500, description="generated messages per rollout")
    levels: PositiveInt = Field(10, le=50, description="book levels stored after each message")
    max_attempts: PositiveInt = Field(1000, description="rejection baseline: refusals in a row before giving up")

    @field_validator("method")
    @classmethod
    def _known_method(cls, method: str) -> str:
        from synth.generators.lob.rollout import METHODS

        if method not in METHODS:
            msg = f"unknown method {method!r}; choose from {list(METHODS)}"
            raise ValueError(msg)
        return method


def build_generator(config: LobConfig) -> Generator:
    """The generator for a validated config; checks the input files and the model before any shard starts."""
    from synth.generators.lob import SAMPLE_DIR
    from synth.generators.lob.generator import LobRolloutGenerator

    messages = Path(config.messages).expanduser() if config.messages else SAMPLE_DIR / AMZN_MESSAGES
    orderbook = Path(config.orderbook).expanduser() if config.orderbook else orderbook_for(messages)
    for path, what in ((messages, "message"), (orderbook, "orderbook")):
        if not path.is_file():
            msg = f"{path}: LOBSTER {what} file not found"
            raise InputError(msg)
    generator = LobRolloutGenerator(
        name=config.method,
        version="2",
        method=config.method,  # type: ignore[arg-type]
        messages_path=messages,
        orderbook_path=orderbook,
        model_path=Path(config.model).expanduser() if config.model else None,
        train_fraction=config.train_fraction,
        windows=config.windows,
        replicates=config.replicates,
        horizon=config.horizon,
        levels=config.levels,
        max_attempts=config.max_attempts,
    )
    _ = generator.model, generator.starts  # a bad model or a too-short day fails here, not in a shard
    return generator


def build_verifiers(config: LobConfig) -> dict[str, Verifier]:
    """The domain's verifiers by name."""
    from synth.validators.lob import LobReplayVerifier

    return {"replay": LobReplayVerifier(name="replay", version="1")}


ATTRIBUTION = """\
The conditioning windows and the shipped model come from the public LOBSTER sample files (https://lobsterdata.com,
free demo samples of NASDAQ data for 2012-06-21; LOBSTER's terms apply): by default AMZN level 1 (full day,
re-saved with a header and CRLF by VSandwar74/LowLevelOrderbook). The generated messages are synthetic.
"""

DOMAIN = DomainSpec(
    name="lob",
    summary=(
        "Limit-order-book message rollouts (LOBSTER format) continuing real held-out windows: ReLOBGen "
        "(replayable by construction: masked event head, a learned pointer over resting orders, masked fields), "
        "a LOBS5-style rejection baseline and a Santa Fe zero-intelligence baseline, each rollout strictly "
        "replayed from its own initial book."
    ),
    config_model=LobConfig,
    build_generator=build_generator,
    build_verifiers=build_verifiers,
    verifier_names=("replay",),
    card_defaults={
        "pretty_name": "ReLOBGen LOB rollouts",
        "license": "other",
        "tags": ["limit-order-book", "lobster", "market-simulation", "synthetic"],
    },
    attribution=ATTRIBUTION,
)
