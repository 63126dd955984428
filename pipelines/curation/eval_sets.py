"""Read evaluation sets for decontamination: their items' text and ids, with one-line errors naming the file."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import polars as pl

from synth.core.errors import InputError, read_json_file, read_text_file
from synth.pipelines.curation.config import EvalSet

SUFFIXES = {".jsonl": "jsonl", ".ndjson": "jsonl", ".json": "json", ".parquet": "parquet", ".csv": "csv"}


def read_eval_set(spec: EvalSet, *, field: str) -> tuple[list[str], list[str]]:
    """(texts, ids) of the items of `spec`; `field` is where the set sits in the config (for messages)."""
    path = spec.path
    if not path.exists():
        msg = f"{path}: evaluation set not found (field `{field}.path`)"
        raise InputError(msg)
    fmt = spec.format if spec.format != "auto" else _detect(path, field)
    records = _records(path, fmt, spec, field)
    if spec.rows is not None:
        start, _, stop = spec.rows.partition(":")
        records = records[slice(int(start) if start else None, int(stop) if stop else None)]
    texts, ids = [], []
    for index, record in enumerate(records):
        if not isinstance(record, dict):
            kind = type(record).__name__
            msg = f"{path}: item {index} is a {kind}, not an object with `{spec.columns[0]}` (field `{field}`)"
            raise InputError(msg)
        for column in spec.columns:
            if column not in record:
                has = sorted(record)[:8]
                msg = f"{path}: item {index} has no column `{column}` (field `{field}.columns`; it has {has})"
                raise InputError(msg)
        texts.append(" ".join(_as_text(record[column]) for column in spec.columns))
        ids.append(
            str(record[spec.id_column]) if spec.id_column and record.get(spec.id_column) is not None else str(index)
        )
    return texts, ids


def _detect(path: Path, field: str) -> str:
    if path.is_dir():
        if (path / "manifest.json").is_file():
            return "synth"
        return "hf"
    fmt = SUFFIXES.get(path.suffix.lower())
    if fmt is None:
        msg = (
            f"{path}: cannot tell the format of this evaluation set; "
            f"set `{field}.format` (jsonl, json, parquet, csv, synth, hf)"
        )
        raise InputError(msg)
    return fmt


def _records(path: Path, fmt: str, spec: EvalSet, field: str) -> list[Any]:
    needed = [*spec.columns, *([spec.id_column] if spec.id_column else [])]
    if fmt == "jsonl":
        return _jsonl(path)
    if fmt == "json":
        value = read_json_file(path)
        if isinstance(value, dict) and isinstance(value.get("data"), list):
            value = value["data"]
        if not isinstance(value, list):
            msg = f"{path}: expected a JSON array of items (field `{field}.path`), got {type(value).__name__}"
            raise InputError(msg)
        return value
    if fmt in ("parquet", "csv"):
        try:
            frame = pl.read_parquet(path) if fmt == "parquet" else pl.read_csv(path, infer_schema=False)
        except (pl.exceptions.PolarsError, OSError) as error:
            msg = f"{path}: not a readable {fmt} file ({_first_line(error)}) (field `{field}.path`)"
            raise InputError(msg) from None
        _check_columns(path, frame.columns, needed, field)
        return frame.select(needed).to_dicts()
    if fmt == "synth":
        from synth.core.dataset import read_records

        return read_records(path, columns=needed, needs=f"evaluation set `{spec.name}`")
    return _hf(path, spec, needed, field)


def _jsonl(path: Path) -> list[Any]:
    text = read_text_file(path, hint="an evaluation set in JSONL has one JSON object per line")
    records = []
    for number, line in enumerate(text.splitlines(), start=1):
        if not line.strip():
            continue
        try:
            records.append(json.loads(line))
        except json.JSONDecodeError as error:
            msg = f"{path}:{number}: not valid JSON ({error.msg} at column {error.colno})"
            raise InputError(msg) from None
    return records


def _hf(path: Path, spec: EvalSet, needed: list[str], field: str) -> list[Any]:
    import datasets

    try:
        if (path / "dataset_info.json").is_file() or (path / "dataset_dict.json").is_file():
            loaded: Any = datasets.load_from_disk(str(path))
        else:
            loaded = datasets.load_dataset(str(path), cache_dir=str(path / ".synth-hf-cache"))
    except (ValueError, FileNotFoundError, OSError, datasets.exceptions.DatasetGenerationError) as error:
        msg = f"{path}: not a readable Hugging Face dataset folder ({_first_line(error)}) (field `{field}.path`)"
        raise InputError(msg) from None
    if isinstance(loaded, datasets.DatasetDict):
        names = list(loaded)
        split = spec.split or (names[0] if len(names) == 1 else "test")
        if split not in loaded:
            msg = f"{path}: no split {split!r} (field `{field}.split`; splits: {names})"
            raise InputError(msg)
        loaded = loaded[split]
    _check_columns(path, loaded.column_names, needed, field)
    return loaded.select_columns(needed).to_list()


def _check_columns(path: Path, present: list[str], needed: list[str], field: str) -> None:
    missing = [column for column in needed if column not in present]
    if missing:
        msg = f"{path}: no column `{missing[0]}` (field `{field}.columns`; columns: {present[:12]})"
        raise InputError(msg)


def _as_text(value: Any) -> str:
    if value is None:
        return ""
    if isinstance(value, str):
        return value
    if isinstance(value, list):
        return " ".join(_as_text(item) for item in value)
    return json.dumps(value, ensure_ascii=False, sort_keys=True) if isinstance(value, dict) else str(value)


def _first_line(error: BaseException) -> str:
    return (str(error).strip().splitlines() or [type(error).__name__])[0][:200]
