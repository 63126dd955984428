"""Read multi-hop QA seeds (HotpotQA, 2WikiMultihopQA, MuSiQue; JSON array or JSONL) into `QASeed`s.

The schema is detected per record: `context` + `supporting_facts` (HotpotQA / 2Wiki) or `paragraphs` +
`question_decomposition` (MuSiQue). A record that cannot become a seed (a missing field, a supporting fact
pointing to an absent sentence, an empty answer) is returned as a `SeedProblem` naming the file, the record and
the field, so the generator can put it in `rejected/` instead of dropping it.
"""

from __future__ import annotations

import json
import re
from collections.abc import Iterator, Mapping, Sequence
from dataclasses import dataclass
from importlib import resources
from pathlib import Path
from typing import Any

from synth.core.errors import InputError, read_text_file
from synth.validators.toolforge.model import Passage, QASeed, SubQuestion

SHIPPED_FILES: tuple[str, ...] = ("hotpotqa_dev_sample.json", "hotpotqa_train_sample.json", "musique_dev_sample.jsonl")
_ABBREVIATION_TEXT = (
    "Mr Ms Dr St Jr Sr No vs Mrs Mt Ft Bros Inc Co Corp Ltd Gen Col Lt Sgt Capt Gov Sen Rep Rev Prof "
    "Jan Feb Mar Apr Jun Jul Aug Sep Sept Oct Nov Dec"
)
_ABBREVIATIONS = _ABBREVIATION_TEXT.split()
_SENTENCE_END = re.compile(
    r"(?<=[.!?])(?<!\b[A-Z]\.)(?<!\b[A-Z]\.[A-Z]\.)"
    + "".join(rf"(?<!\b{word}\.)" for word in _ABBREVIATIONS)
    + r"\s+(?=[A-Z0-9\"'(])"
)


@dataclass(frozen=True, slots=True)
class SeedProblem:
    """A record that could not become a seed: a stable `code` (`missing_field`, …) and the `reason` naming the field."""

    path: str
    record: int
    record_id: str
    reason: str
    code: str


class _RecordError(ValueError):
    """A field problem inside one record, with its stable code."""

    def __init__(self, code: str, message: str) -> None:
        super().__init__(message)
        self.code = code


def shipped_seed_dir() -> Path:
    """The folder of the seeds shipped with synth."""
    return Path(str(resources.files("synth.generators.toolforge") / "data"))


def split_sentences(text: str) -> tuple[str, ...]:
    """Split a MuSiQue paragraph into sentences at `.`, `!` or `?` followed by a capital, digit or quote, except
    after initials (`Lemuel P. Grant`, `U.S. Navy`) and common abbreviations (`Dr.`, `St.`, `Bros.`)."""
    return tuple(part.strip() for part in _SENTENCE_END.split(text.strip()) if part.strip())


def _field(record: Mapping[str, Any], name: str, kind: type | tuple[type, ...]) -> Any:
    if name not in record:
        raise _RecordError("missing_field", f"field `{name}`: missing")
    value = record[name]
    if not isinstance(value, kind):
        expected = " or ".join(k.__name__ for k in (kind if isinstance(kind, tuple) else (kind,)))
        raise _RecordError("wrong_type", f"field `{name}`: expected {expected}, got {type(value).__name__}")
    return value


def _text(record: Mapping[str, Any], name: str) -> str:
    value = _field(record, name, str).strip()
    if not value:
        raise _RecordError("empty_field", f"field `{name}`: empty")
    return value


def _hotpot(record: Mapping[str, Any], source: str) -> QASeed:
    context = _field(record, "context", list)
    passages: list[Passage] = []
    index: dict[str, int] = {}
    for k, entry in enumerate(context):
        if not (
            isinstance(entry, list) and len(entry) == 2 and isinstance(entry[0], str) and isinstance(entry[1], list)
        ):
            raise _RecordError("wrong_type", f"field `context[{k}]`: expected [title, [sentences]]")
        index.setdefault(entry[0], len(passages))
        passages.append(Passage(entry[0], tuple(str(s) for s in entry[1])))
    supporting: list[tuple[int, int]] = []
    for k, fact in enumerate(_field(record, "supporting_facts", list)):
        if not (isinstance(fact, list) and len(fact) == 2 and isinstance(fact[0], str) and isinstance(fact[1], int)):
            raise _RecordError("wrong_type", f"field `supporting_facts[{k}]`: expected [title, sentence index]")
        title, sentence = fact
        if title not in index:
            raise _RecordError(
                "dangling_reference", f"field `supporting_facts[{k}]`: title {title!r} is not in `context`"
            )
        passage = index[title]
        if not 0 <= sentence < len(passages[passage].sentences):
            size = len(passages[passage].sentences)
            raise _RecordError(
                "dangling_reference",
                f"field `supporting_facts[{k}]`: sentence {sentence} of {title!r} does not exist ({size} sentences)",
            )
        supporting.append((passage, sentence))
    if not supporting:
        raise _RecordError("empty_field", "field `supporting_facts`: empty")
    return QASeed(
        seed_id=str(_field(record, "_id", (str, int))),
        source=source,
        question=_text(record, "question"),
        answer=_text(record, "answer"),
        qtype=str(record.get("type", "bridge")),
        passages=tuple(passages),
        supporting=tuple(dict.fromkeys(supporting)),
        level=str(record.get("level", "")),
    )


def _norm(text: str) -> str:
    return re.sub(r"\W+", " ", text.lower()).strip()


def answer_sentences(passage: Passage, answer: str) -> tuple[int, ...]:
    """The gold sentence of a decomposition step: the first sentence naming its answer, else all of them."""
    hits = [i for i, sentence in enumerate(passage.sentences) if _norm(answer) and _norm(answer) in _norm(sentence)]
    return tuple(hits[:1]) or tuple(range(len(passage.sentences)))


def _musique(record: Mapping[str, Any]) -> QASeed:
    paragraphs = _field(record, "paragraphs", list)
    passages: list[Passage] = []
    positions: dict[int, int] = {}
    for k, paragraph in enumerate(paragraphs):
        if not isinstance(paragraph, Mapping):
            raise _RecordError("wrong_type", f"field `paragraphs[{k}]`: expected an object")
        positions[int(_field(paragraph, "idx", int))] = len(passages)
        passages.append(Passage(_text(paragraph, "title"), split_sentences(_text(paragraph, "paragraph_text"))))
    steps: list[SubQuestion] = []
    supporting: list[tuple[int, int]] = []
    for k, step in enumerate(_field(record, "question_decomposition", list)):
        if not isinstance(step, Mapping):
            raise _RecordError("wrong_type", f"field `question_decomposition[{k}]`: expected an object")
        support = _field(step, "paragraph_support_idx", int)
        if support not in positions:
            raise _RecordError(
                "dangling_reference",
                f"field `question_decomposition[{k}].paragraph_support_idx`: paragraph {support} does not exist",
            )
        passage = positions[support]
        if not paragraphs[passage].get("is_supporting", True):
            raise _RecordError(
                "dangling_reference",
                f"field `question_decomposition[{k}].paragraph_support_idx`: paragraph {support} is not supporting",
            )
        answer = _text(step, "answer")
        supporting.extend((passage, i) for i in answer_sentences(passages[passage], answer))
        steps.append(SubQuestion(_text(step, "question"), answer, passage))
    if not steps:
        raise _RecordError("empty_field", "field `question_decomposition`: empty")
    if record.get("answerable") is False:
        raise _RecordError("unanswerable", "field `answerable`: false (unanswerable records cannot seed a dialogue)")
    aliases = record.get("answer_aliases") or []
    if not isinstance(aliases, list):
        raise _RecordError("wrong_type", f"field `answer_aliases`: expected list, got {type(aliases).__name__}")
    return QASeed(
        seed_id=str(_field(record, "id", (str, int))),
        source="musique",
        question=_text(record, "question"),
        answer=_text(record, "answer"),
        qtype=f"{len(steps)}hop",
        passages=tuple(passages),
        supporting=tuple(dict.fromkeys(supporting)),
        aliases=tuple(str(a) for a in aliases if str(a).strip()),
        decomposition=tuple(steps),
    )


def parse_record(record: Any) -> QASeed:
    """One record in any supported schema; raises `ValueError` naming the field on a malformed record."""
    if not isinstance(record, Mapping):
        raise _RecordError("wrong_type", f"expected an object, got {type(record).__name__}")
    if "paragraphs" in record or "question_decomposition" in record:
        return _musique(record)
    if "context" in record or "supporting_facts" in record:
        return _hotpot(record, "2wiki" if "evidences" in record else "hotpotqa")
    raise _RecordError(
        "unknown_schema", "expected `context` + `supporting_facts` (HotpotQA/2Wiki) or `paragraphs` (MuSiQue)"
    )


def _records(path: Path) -> list[Any]:
    text = read_text_file(path, hint="a seed file is JSON or JSONL")
    try:
        return _parse_records(path, text)
    except RecursionError:
        msg = f"{path}: JSON nested too deeply to read"
        raise InputError(msg) from None


def _parse_records(path: Path, text: str) -> list[Any]:
    if path.suffix == ".jsonl":
        records = []
        for line_number, line in enumerate(text.splitlines(), 1):
            if line.strip():
                try:
                    records.append(json.loads(line))
                except json.JSONDecodeError as error:
                    msg = f"{path}:{line_number}: not JSON: {error.msg}"
                    raise InputError(msg) from error
        return records
    try:
        value = json.loads(text)
    except json.JSONDecodeError as error:
        msg = f"{path}:{error.lineno}: not JSON: {error.msg}"
        raise InputError(msg) from error
    if not isinstance(value, list):
        msg = f"{path}: expected a JSON array of records (or a .jsonl file)"
        raise InputError(msg)
    return value


def read_seed_file(path: Path) -> Iterator[QASeed | SeedProblem]:
    """Seeds of one file in record order; malformed records come back as `SeedProblem`s."""
    for number, record in enumerate(_records(path)):
        record_id = str(record.get("_id", record.get("id", ""))) if isinstance(record, Mapping) else ""
        try:
            yield parse_record(record)
        except _RecordError as error:
            yield SeedProblem(str(path), number, record_id, str(error), error.code)


def seed_files(paths: Sequence[str | Path] | None) -> tuple[Path, ...]:
    """The seed files to read: the given files or folders (their *.json / *.jsonl), or the shipped seeds."""
    if not paths:
        base = shipped_seed_dir()
        return tuple(base / name for name in SHIPPED_FILES)
    files: list[Path] = []
    for entry in map(Path, paths):
        if entry.is_dir():
            files.extend(sorted(p for p in entry.iterdir() if p.suffix in {".json", ".jsonl"}))
        elif entry.is_file():
            files.append(entry)
        else:
            msg = f"{printable(entry)}: seed file or folder does not exist"
            raise InputError(msg)
    if not files:
        msg = f"{', '.join(printable(p) for p in paths)}: no .json or .jsonl seed files found"
        raise InputError(msg)
    for path in files:
        if printable(path) != str(path):
            msg = (
                f"{printable(path)}: the file name is not valid UTF-8; rename the file (its name goes in the manifest)"
            )
            raise InputError(msg)
    return tuple(files)


def printable(path: str | Path) -> str:
    """`path` as text that prints and encodes everywhere: bytes that are not UTF-8 shown as `\\udcXX` escapes."""
    return str(path).encode("utf-8", "backslashreplace").decode("utf-8")
