"""The Papyrus CER domain: its generator config, generator, verifiers and dataset-card defaults."""

from __future__ import annotations

from pathlib import Path
from typing import Literal

from pydantic import Field, PositiveInt, field_validator

from synth.generators.papyrus.corpus import SAMPLE_ROOT
from synth.generators.papyrus.degrade import DEFAULT_LEVELS
from synth.pipelines.config import StrictModel
from synth.pipelines.errors import InputError
from synth.pipelines.registry import DomainSpec
from synth.pipelines.steps import Generator, Verifier

VariantName = Literal["uniform", "confusable", "burst", "word"]


class PapyrusConfig(StrictModel):
    """Generator settings of the Papyrus CER corpus."""

    input: str | None = Field(None, description="papyri.info checkout (DDB_EpiDoc_XML/, HGV_meta_EpiDoc/, DCLP/)")
    levels: list[float] = Field(default_factory=lambda: list(DEFAULT_LEVELS), min_length=1)
    variants: list[VariantName] = Field(
        default_factory=lambda: ["uniform", "confusable", "burst", "word"], min_length=1
    )
    lost_lines: float = Field(0.1, ge=0.0, le=1.0, description="probability that a row loses whole lines")
    samples: PositiveInt = Field(1, description="independent noisy samples per document, level and variant")
    keep_deleted: bool = False
    scriptio_continua: bool = False
    docs_per_batch: PositiveInt = 8

    @field_validator("levels")
    @classmethod
    def _levels_in_range(cls, levels: list[float]) -> list[float]:
        bad = [level for level in levels if not 0.0 < level <= 1.0]
        if bad:
            msg = f"every CER level must lie in (0, 1], got {bad[0]}"
            raise ValueError(msg)
        if len(set(levels)) != len(levels):
            msg = "CER levels must be distinct"
            raise ValueError(msg)
        return levels

    @field_validator("variants")
    @classmethod
    def _variants_distinct(cls, variants: list[str]) -> list[str]:
        if len(set(variants)) != len(variants):
            msg = "variants must be distinct"
            raise ValueError(msg)
        return variants


def build_generator(config: PapyrusConfig) -> Generator:
    """The generator for a validated config; checks the input directory exists."""
    from synth.generators.papyrus.generator import PapyrusCERGenerator

    root = Path(config.input).expanduser() if config.input else SAMPLE_ROOT
    if not root.is_dir():
        msg = f"{root}: input directory not found (expected a papyri.info checkout with DDB_EpiDoc_XML/ or DCLP/)"
        raise InputError(msg)
    generator = PapyrusCERGenerator(
        name="papyrus-cer",
        version="1",
        input=root,
        levels=tuple(config.levels),
        variants=tuple(config.variants),
        lost_lines=config.lost_lines,
        samples=config.samples,
        keep_deleted=config.keep_deleted,
        scriptio_continua=config.scriptio_continua,
        docs_per_batch=config.docs_per_batch,
    )
    _ = generator.files  # list the corpus now, so a bad input fails before any shard starts
    return generator


def build_verifiers(config: PapyrusConfig) -> dict[str, Verifier]:
    """The domain's verifiers by name."""
    from synth.validators.papyrus import CERVerifier

    return {"cer": CERVerifier(name="cer", version="1")}


ATTRIBUTION = """\
Source texts and metadata come from papyri.info (Integrating Digital Papyrology), licensed under Creative
Commons Attribution 3.0 (CC BY 3.0) with copyright and attribution to the respective projects: the Duke
Databank of Documentary Papyri (DDbDP, texts), the Heidelberger Gesamtverzeichnis der griechischen
Papyrusurkunden Ägyptens (HGV, metadata) and the Digital Corpus of Literary Papyri (DCLP, texts and metadata).
The editorial layer was removed and the texts were degraded synthetically; the noisy texts are not editions.
"""

DOMAIN = DomainSpec(
    name="papyrus",
    summary=(
        "Letters-only Greek papyrus texts stripped from EpiDoc XML (a 'perfect HTR' reference), each degraded "
        "with a seeded algorithm to exact character error rates, with lost lines and four error shapes "
        "(uniform, confusable, burst, word), labelled with literary flag, document type and date range."
    ),
    config_model=PapyrusConfig,
    build_generator=build_generator,
    build_verifiers=build_verifiers,
    verifier_names=("cer",),
    card_defaults={
        "pretty_name": "Papyrus CER corpus",
        "license": "cc-by-3.0",
        "language": ["grc"],
        "tags": ["papyrology", "htr", "ocr-noise", "character-error-rate"],
    },
    attribution=ATTRIBUTION,
)
