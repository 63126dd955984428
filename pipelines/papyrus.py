"""The Papyrus CER domain: its generator config, generator, verifiers and dataset-card defaults."""

from __future__ import annotations

from pathlib import Path
from typing import Any, Literal

from pydantic import (
    Field,
    PositiveInt,
    SerializerFunctionWrapHandler,
    field_validator,
    model_serializer,
    model_validator,
)

from synth.core.config import StrictModel
from synth.core.errors import InputError
from synth.core.registry import DomainSpec
from synth.core.steps import Generator, Verifier
from synth.generators.papyrus.corpus import SAMPLE_ROOT
from synth.generators.papyrus.degrade import DEFAULT_LEVELS
from synth.generators.papyrus.epidoc import MAX_DOCUMENT_BYTES
from synth.generators.papyrus.sources import SourceName

DEFAULT_SOURCES: tuple[SourceName, ...] = ("epidoc", "papygreek", "duke")
VariantName = Literal["uniform", "confusable", "burst", "word"]


class PapyrusConfig(StrictModel):
    """Generator settings of the Papyrus CER corpus."""

    input: str | None = Field(
        None, description="EpiDoc root of the `epidoc` source: a papyri.info checkout (DDB_EpiDoc_XML/, DCLP/, …)"
    )
    sources: list[SourceName] = Field(
        default_factory=lambda: list(DEFAULT_SOURCES),
        min_length=1,
        description="corpora to read; a TM id found in several is read once, from the first of "
        "epidoc > papygreek > duke > padoc. padoc is opt-in: its texts are papyri.info reading texts that keep "
        "editorial restorations (about 22 % CER from the stripped editions), good for dating only",
    )
    levels: list[float] = Field(default_factory=lambda: list(DEFAULT_LEVELS), min_length=1)
    variants: list[VariantName] = Field(
        default_factory=lambda: ["uniform", "confusable", "burst", "word"], min_length=1
    )
    lost_lines: float = Field(0.1, ge=0.0, le=1.0, description="probability that a row loses whole lines")
    samples: PositiveInt = Field(1, description="independent noisy samples per document, level and variant")
    keep_deleted: bool = False
    scriptio_continua: bool = False
    docs_per_batch: PositiveInt = 8
    max_document_bytes: PositiveInt = Field(
        MAX_DOCUMENT_BYTES,
        description="largest source file read, in bytes (checked before parsing; a file holding several documents "
        "counts as one); a larger file becomes a rejected row `document_too_large` naming the file and both sizes",
    )
    kernel: Literal["rapidfuzz", "triton"] = Field(
        "rapidfuzz", description="how the `cer` verifier computes distances: rapidfuzz (CPU) or the triton kernel (GPU)"
    )

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

    @field_validator("sources")
    @classmethod
    def _sources_distinct(cls, sources: list[str]) -> list[str]:
        if len(set(sources)) != len(sources):
            msg = "sources must be distinct"
            raise ValueError(msg)
        return sources

    @model_serializer(mode="wrap")
    def _omit_default_limit(self, handler: SerializerFunctionWrapHandler) -> dict[str, Any]:
        # At its default the limit is left out of the dump, so configs that do not set it keep the config hash
        # (and the provenance) of datasets written before the field existed, and those can still resume.
        data = handler(self)
        if self.max_document_bytes == MAX_DOCUMENT_BYTES:
            data.pop("max_document_bytes", None)
        return data

    @model_validator(mode="after")
    def _input_needs_epidoc(self) -> PapyrusConfig:
        if self.input is not None and "epidoc" not in self.sources:
            msg = "`input` is the EpiDoc root, but `sources` has no `epidoc`; add it or drop `input`"
            raise ValueError(msg)
        return self


def build_generator(config: PapyrusConfig) -> Generator:
    """The generator for a validated config; checks the input directory exists and resolves it once."""
    from synth.generators.papyrus.generator import PapyrusCERGenerator

    root = (Path(config.input).expanduser() if config.input else SAMPLE_ROOT).resolve()
    if "epidoc" in config.sources and not root.is_dir():
        msg = f"{root}: input directory not found (expected a papyri.info checkout with DDB_EpiDoc_XML/ or DCLP/)"
        raise InputError(msg)
    generator = PapyrusCERGenerator(
        name="papyrus-cer",
        version="1",
        input=root,
        sources=tuple(config.sources),
        levels=tuple(config.levels),
        variants=tuple(config.variants),
        lost_lines=config.lost_lines,
        samples=config.samples,
        keep_deleted=config.keep_deleted,
        scriptio_continua=config.scriptio_continua,
        docs_per_batch=config.docs_per_batch,
        max_document_bytes=config.max_document_bytes,
    )
    _ = generator.listing  # list the corpora now, so a bad input fails before any shard starts
    return generator


def build_verifiers(config: PapyrusConfig) -> dict[str, Verifier]:
    """The domain's verifiers by name."""
    from synth.validators.papyrus import CERVerifier

    return {"cer": CERVerifier(name="cer", version="1", kernel=config.kernel)}


ATTRIBUTION = """\
Source texts and metadata come from papyri.info (Integrating Digital Papyrology), licensed under Creative
Commons Attribution 3.0 (CC BY 3.0) with copyright and attribution to the respective projects: the Duke
Databank of Documentary Papyri (DDbDP, texts), the Heidelberger Gesamtverzeichnis der griechischen
Papyrusurkunden Ägyptens (HGV, metadata) and the Digital Corpus of Literary Papyri (DCLP, texts and metadata).
Depending on `generator.sources`, texts and labels also come from three corpora derived from that data:
the PapyGreek Treebanks v3.0 (PapyGreek project, University of Helsinki; CC BY-SA 4.0), the Trismegistos
Words treebanks of Keersmaekers & Depauw (duke-nlp, paraliterary texts; CC BY-SA 4.0), and PaDoc
(Pavlopoulos et al., ACL 2023, doi:10.18653/v1/2023.acl-long.556; CC BY 4.0 dataset, Apache-2.0 repository).
A dataset that includes the CC BY-SA 4.0 sources must be shared under CC BY-SA 4.0.
The editorial layer was removed and the texts were degraded synthetically; the noisy texts are not editions.
"""

DOMAIN = DomainSpec(
    name="papyrus",
    summary=(
        "Letters-only Greek papyrus texts stripped from EpiDoc XML and from the PapyGreek, Trismegistos Words "
        "and PaDoc corpora (a 'perfect HTR' reference), each degraded with a seeded algorithm to exact character "
        "error rates, with lost lines and four error shapes (uniform, confusable, burst, word), labelled with "
        "literary flag, document type and date range."
    ),
    config_model=PapyrusConfig,
    build_generator=build_generator,
    build_verifiers=build_verifiers,
    verifier_names=("cer",),
    card_defaults={
        "pretty_name": "Papyrus CER corpus",
        "license": "cc-by-sa-4.0",
        "language": ["grc"],
        "tags": ["papyrology", "htr", "ocr-noise", "character-error-rate"],
    },
    attribution=ATTRIBUTION,
)
