"""Which text a curation operation reads, and how it is normalised before hashing.

A text is built from declared columns (strings, lists of strings joined by a space) or a domain preset; then
normalisation steps run in order, and whitespace is always collapsed last (tokens are space-separated words).

    >>> import polars as pl
    >>> frame = pl.DataFrame({"q": ["Ｗｅｒｅ  Ed Wood, and Scott...?"]})
    >>> frame.select(normalized(text_expr(columns=["q"]), ["nfkc", "lower", "strip_punctuation"])).item()
    'were ed wood and scott'
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Literal

import polars as pl

Normalization = Literal["nfkc", "lower", "strip_punctuation", "canonical_smiles", "milp_canonical"]
Preset = Literal["toolforge_dialogue", "toolforge_question", "milp_canonical", "canonical_smiles", "papyrus_text"]
DEFAULT_NORMALIZATION: tuple[Normalization, ...] = ("nfkc", "lower", "strip_punctuation")

PRESETS: Mapping[str, tuple[tuple[str, ...], tuple[Normalization, ...]]] = {
    "toolforge_dialogue": (("messages",), DEFAULT_NORMALIZATION),
    "toolforge_question": (("question",), DEFAULT_NORMALIZATION),
    "milp_canonical": (("model_text", "model_format"), ("milp_canonical",)),
    "canonical_smiles": (("source_smiles",), ("canonical_smiles",)),
    "papyrus_text": (("text_clean",), ("nfkc", "lower")),
}
"""Per preset: the columns it reads and its normalisation."""


def column_text(name: str, dtype: pl.DataType) -> pl.Expr | None:
    """A string expression for one column (strings; lists of strings or of messages joined), None if unusable."""
    column = pl.col(name)
    if dtype == pl.String:
        return column.fill_null("")
    if isinstance(dtype, pl.List):
        inner = dtype.inner
        if inner == pl.String:
            return column.list.eval(pl.element().fill_null("")).list.join(" ").fill_null("")
        if isinstance(inner, pl.Struct) and "content" in {field.name for field in inner.fields}:
            contents = pl.element().struct.field("content").fill_null("")
            return column.list.eval(contents).list.join(" ").fill_null("")
    return None


def is_ascii(series: pl.Series) -> bool:
    """Whether every string of `series` is ASCII."""
    return not bool(series.str.contains(r"[^\x00-\x7F]").any())


def text_expr(
    *, columns: Sequence[str], preset: str | None = None, schema: Mapping[str, pl.DataType] | None = None
) -> pl.Expr:
    """The raw text of a row: its columns' strings joined by a space (a MILP preset: text and format)."""
    if preset == "milp_canonical":
        return pl.struct(pl.col("model_text").fill_null(""), pl.col("model_format").fill_null("lp"))
    schema = schema or {}
    parts = [column_text(name, schema.get(name, pl.String)) for name in columns]
    usable = [part for part in parts if part is not None]
    return usable[0] if len(usable) == 1 else pl.concat_str(usable, separator=" ")


def normalized(expr: pl.Expr, steps: Sequence[Normalization], *, ascii_only: bool = False) -> pl.Expr:
    """Apply normalisation `steps` in order, then collapse whitespace (`ascii_only`: the texts are known to be
    ASCII, for which NFKC is the identity and is skipped)."""
    for step in steps:
        if step == "nfkc":
            expr = expr if ascii_only else expr.str.normalize("NFKC")
        elif step == "lower":
            expr = expr.str.to_lowercase()
        elif step == "strip_punctuation":
            expr = expr.str.replace_all(r"[^\p{L}\p{N}\s]+", " ")
        elif step == "canonical_smiles":
            expr = expr.map_elements(canonical_smiles, return_dtype=pl.String)
        elif step == "milp_canonical":
            expr = expr.map_elements(
                lambda row: milp_canonical(row["model_text"], row["model_format"]), return_dtype=pl.String
            )
    # `\s+` -> " " in two cheap steps: other whitespace becomes a space, then runs of spaces one space
    return expr.str.replace_all(r"[^\S ]", " ").str.replace_all(r" {2,}", " ").str.strip_chars()


def canonical_smiles(text: str) -> str:
    """RDKit's canonical SMILES of `text`, or `text` itself when it does not parse."""
    from synth.validators.marco.molecules import parse_smiles

    parsed = parse_smiles(text, fragments="largest")
    return parsed.canonical or text


def milp_canonical(text: str, fmt: str) -> str:
    """The model re-written as LP by SCIP under one problem name (so formatting, comments and names of the
    source do not count), or the text itself when SCIP cannot read it."""
    from synth.validators.optiscribe.reading import ModelTextError, read_model_text, write_model_text

    try:
        model = read_model_text(text, fmt="mps" if fmt == "mps" else "lp")
        model.setProbName("model")
        return write_model_text(model, fmt="lp")
    except (ModelTextError, OSError, ValueError):
        return text
