"""Papyrus CER corpus: papyri.info EpiDoc editions stripped to letters, degraded to exact CER levels.

`iter_corpus` reads DDB texts (joined to HGV metadata) and DCLP texts into `PapyrusDocument`s;
`strip_edition` is the EpiDoc walker behind it; `degrade_levels` produces nested, exact-CER noisy
copies of a text in four error shapes (`VARIANTS`).
"""

from synth.generators.papyrus.corpus import (
    SAMPLE_ROOT,
    PapyrusDocument,
    corpus_files,
    iter_corpus,
    map_doctype,
    parse_year,
    read_document,
)
from synth.generators.papyrus.degrade import (
    DEFAULT_LEVELS,
    VARIANTS,
    Degradation,
    TooShort,
    Variant,
    degrade_levels,
)
from synth.generators.papyrus.epidoc import GREEK_LETTERS, EpiDocError, normalise_greek, strip_edition

__all__ = [
    "DEFAULT_LEVELS",
    "GREEK_LETTERS",
    "SAMPLE_ROOT",
    "VARIANTS",
    "Degradation",
    "EpiDocError",
    "PapyrusDocument",
    "TooShort",
    "Variant",
    "corpus_files",
    "degrade_levels",
    "iter_corpus",
    "map_doctype",
    "normalise_greek",
    "parse_year",
    "read_document",
    "strip_edition",
]
