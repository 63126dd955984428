"""Export ToolForge rows to the formats other trainers and benchmarks read.

- `openai`: JSONL `{"messages", "tools"}`; `arguments` as a dict or a JSON string (templates disagree,
  transformers#45419); reasoning dropped, kept as `reasoning_content`, or inlined as `<think>…</think>`;
- `hermes`: JSONL `{"id", "messages"}` with string contents only (ToolForge/Qwen style): tools in the system turn
  inside `<tools></tools>`, `<think>` + `<tool_call>` assistant turns, `<tool_response>` result turns, and the
  final answer inside `<answer></answer>`;
- `xlam`: JSONL `{"id", "query", "tools", "answers"}` (APIGen), `tools`/`answers` as JSON strings; only for
  dialogues whose gold calls form one round of the first user turn (others are skipped, with the reason);
- `bfcl`: a directory in bfcl-eval's v4 layout, `BFCL_v4_<category>.json` question files and
  `possible_answer/BFCL_v4_<category>.json` answer files for its AST categories (simple_python / multiple /
  parallel / parallel_multiple), for the first round when all its calls are gold (rows whose first round holds a
  failure step are skipped). Ids are `<category>_toolforge-<n>`: bfcl-eval reads the category as the id's part
  before its last `_`, and no official id (numeric suffixes) can collide with them. Ground truth lists each set
  argument's value and `""` for every optional parameter the gold call leaves out (BFCL: may be omitted).
  `source_ids.json` maps ids to rows. bfcl-eval reads only its own data folder: register the files by appending
  their lines to the same-named files of `bfcl_eval/data/` and `bfcl_eval/data/possible_answer/` (README).

Rows are dicts as read from a dataset (`TOOLFORGE_SCHEMA` columns; `id` when the sink wrote one). Every writer
writes to a temporary name and renames, sorts JSON keys, and returns counts by format and skip reason.

Example:
    >>> bfcl_category(2, 3)
    'parallel_multiple'
    >>> bfcl_file("simple_python")
    'BFCL_v4_simple_python.json'
"""

from __future__ import annotations

import json
import os
import re
import shutil
from collections import Counter
from collections.abc import Callable, Iterable, Mapping, Sequence
from pathlib import Path
from typing import Any, Literal

from synth.core.errors import OutputDirError

ExportFormat = Literal["openai", "hermes", "xlam", "bfcl"]
EXPORT_FORMATS: tuple[ExportFormat, ...] = ("openai", "hermes", "xlam", "bfcl")
ArgumentsStyle = Literal["dict", "string"]
ReasoningStyle = Literal["drop", "field", "inline"]
ToolRole = Literal["tool", "user"]

ROW_COLUMNS = ("seed_id", "question", "user_turns", "plan", "tools", "messages")
BFCL_CATEGORIES = ("simple_python", "multiple", "parallel", "parallel_multiple")
BFCL_PREFIX = "BFCL_v4"
BFCL_ID_NAMESPACE = "toolforge"
BFCL_ANSWER_DIR = "possible_answer"
BFCL_SOURCE_IDS = "source_ids.json"

HERMES_TOOLS_PROMPT = (
    "You may call one or more functions to assist with the user query.\n\n"
    "You are provided with function signatures within <tools></tools> XML tags:\n<tools>\n{tools}\n</tools>\n\n"
    "For each function call, return a json object with function name and arguments within <tool_call></tool_call> "
    'XML tags:\n<tool_call>\n{{"name": <function-name>, "arguments": <args-json-object>}}\n</tool_call>'
)

JSON_TYPES_TO_XLAM = {"string": "str", "integer": "int", "number": "float", "boolean": "bool", "object": "dict"}
JSON_TYPES_TO_BFCL = {"number": "float", "object": "dict"}


class SkipRow(Exception):  # noqa: N818 - a control-flow signal carrying the skip reason, not an error
    """A row the format cannot express; `reason` is counted."""

    def __init__(self, reason: str) -> None:
        super().__init__(reason)
        self.reason = reason


def dumps(value: Any) -> str:
    """Sorted-key JSON, UTF-8 kept (one export line or an embedded JSON string)."""
    return json.dumps(value, sort_keys=True, ensure_ascii=False)


# --- reading -------------------------------------------------------------------------------------------------


def read_toolforge_rows(dataset: str | Path) -> list[dict[str, Any]]:
    """The kept rows of a ToolForge dataset directory, in shard order (one-line `InputError` when unusable)."""
    from synth.core.dataset import read_records

    return read_records(
        dataset, columns=ROW_COLUMNS, optional=("id", "turn_answers"), domain="toolforge", needs="ToolForge export"
    )


def row_id(row: Mapping[str, Any], index: int) -> str:
    """The row's `id`, or `<seed_id>-<index>` for rows not written by the sink."""
    return str(row.get("id") or f"{row['seed_id']}-{index}")


def row_tools(row: Mapping[str, Any]) -> list[dict[str, Any]]:
    """The offered tools as OpenAI dicts (`{"type": "function", "function": {...}}`)."""
    return [json.loads(text) for text in row["tools"]]


def _function(tool: Mapping[str, Any]) -> dict[str, Any]:
    return dict(tool.get("function", tool))


def _arguments(text: str) -> dict[str, Any]:
    try:
        value = json.loads(text)
    except (TypeError, json.JSONDecodeError):
        raise SkipRow("unparsable_arguments") from None
    if not isinstance(value, dict):
        raise SkipRow("unparsable_arguments")
    return value


# --- gold rounds (from the trusted plan) ---------------------------------------------------------------------


def gold_round_calls(row: Mapping[str, Any]) -> list[dict[str, Any]]:
    """`[{"name", "arguments"}]` of the row's gold calls when they form one round of the first user turn.

    Raises `SkipRow` with `no_gold_calls`, `gold_calls_span_rounds` or `gold_calls_after_first_turn`.
    """
    gold = [call for call in row["plan"] if call["kind"] == "gold"]
    if not gold:
        raise SkipRow("no_gold_calls")
    if any(call.get("user_turn", 0) != 0 for call in gold):
        raise SkipRow("gold_calls_after_first_turn")
    if len({call["round"] for call in gold}) > 1:
        raise SkipRow("gold_calls_span_rounds")
    return [{"name": call["tool"], "arguments": _arguments(call["arguments"])} for call in gold]


def first_gold_round_calls(row: Mapping[str, Any]) -> list[dict[str, Any]]:
    """`[{"name", "arguments"}]` of the first round (round 0, first user turn) when all its calls are `gold`.

    Raises `SkipRow("no_calls")` without calls, `SkipRow("first_round_not_gold")` when a call of that round is a
    failure step (its repair comes later, so the round is not what a correct model would call first).
    """
    first = [call for call in row["plan"] if call["round"] == 0 and call.get("user_turn", 0) == 0]
    if not first:
        raise SkipRow("no_calls")
    if any(call["kind"] != "gold" for call in first):
        raise SkipRow("first_round_not_gold")
    return [{"name": call["tool"], "arguments": _arguments(call["arguments"])} for call in first]


def first_question(row: Mapping[str, Any]) -> str:
    """The first user turn (the seed question when the row has no `user_turns`)."""
    turns = row.get("user_turns") or ()
    return str(turns[0] if turns else row["question"])


# --- conversions ---------------------------------------------------------------------------------------------


def to_openai(
    row: Mapping[str, Any], *, arguments: ArgumentsStyle = "string", reasoning: ReasoningStyle = "drop"
) -> dict[str, Any]:
    """`{"messages", "tools"}` in OpenAI chat form; assistant tool turns have `content` None when empty."""
    messages: list[dict[str, Any]] = []
    for message in row["messages"]:
        role = message["role"]
        content = message.get("content") or ""
        if role == "assistant":
            think = message.get("reasoning") or ""
            out: dict[str, Any] = {"role": role}
            if reasoning == "inline" and think:
                content = f"<think>\n{think}\n</think>\n\n{content}"
            elif reasoning == "field" and think:
                out["reasoning_content"] = think
            calls = []
            for call in message.get("tool_calls") or ():
                parsed = _arguments(call["function"]["arguments"])
                calls.append(
                    {
                        "id": call["id"],
                        "type": "function",
                        "function": {
                            "name": call["function"]["name"],
                            "arguments": parsed if arguments == "dict" else dumps(parsed),
                        },
                    }
                )
            out["content"] = content if content or not calls else None
            if calls:
                out["tool_calls"] = calls
            messages.append(out)
        elif role == "tool":
            messages.append(
                {
                    "role": "tool",
                    "tool_call_id": message.get("tool_call_id") or "",
                    "name": message.get("name") or "",
                    "content": content,
                }
            )
        else:
            messages.append({"role": role, "content": content})
    return {"messages": messages, "tools": row_tools(row)}


def hermes_system(content: str, tools: Sequence[Mapping[str, Any]]) -> str:
    """A system turn with the Hermes tools block (one sorted-key JSON tool per line) after the role prompt."""
    block = HERMES_TOOLS_PROMPT.format(tools="\n".join(dumps(tool) for tool in tools))
    return f"{content}\n\n{block}" if content else block


def hermes_tool_call(name: str, arguments: Mapping[str, Any]) -> str:
    """`<tool_call>\\n{"name": …, "arguments": {…}}\\n</tool_call>` (name first, arguments sorted)."""
    body = json.dumps({"name": name, "arguments": dict(sorted(arguments.items()))}, ensure_ascii=False)
    return f"<tool_call>\n{body}\n</tool_call>"


def to_hermes(row: Mapping[str, Any], *, tool_role: ToolRole = "tool") -> dict[str, Any]:
    """`{"id", "messages"}` with string contents in the ToolForge/Qwen tag format.

    Consecutive tool results become one `tool_role` turn of `<tool_response>` blocks; an assistant turn without
    calls is the answer turn, its content wrapped in `<answer>`.
    """
    tools = row_tools(row)
    messages: list[dict[str, str]] = []
    if not row["messages"] or row["messages"][0]["role"] != "system":
        messages.append({"role": "system", "content": hermes_system("", tools)})
    after_tool = False
    for message in row["messages"]:
        role, content = message["role"], message.get("content") or ""
        if role == "tool":
            block = f"<tool_response>\n{content}\n</tool_response>"
            if after_tool:
                messages[-1]["content"] += "\n" + block
            else:
                messages.append({"role": tool_role, "content": block})
            after_tool = True
            continue
        after_tool = False
        if role == "system":
            messages.append({"role": "system", "content": hermes_system(content, tools)})
        elif role == "assistant":
            think = message.get("reasoning") or ""
            parts = [f"<think>\n{think}\n</think>"] if think else []
            calls = message.get("tool_calls") or ()
            if calls:
                if content:
                    parts.append(content)
                parts.append(
                    "\n".join(
                        hermes_tool_call(call["function"]["name"], _arguments(call["function"]["arguments"]))
                        for call in calls
                    )
                )
            else:
                parts.append(f"<answer>\n{content}\n</answer>")
            messages.append({"role": "assistant", "content": "\n\n".join(parts)})
        else:
            messages.append({"role": role, "content": content})
    return {"messages": messages}


def xlam_parameters(schema: Mapping[str, Any]) -> dict[str, Any]:
    """JSON-schema parameters as xLAM's flat `{name: {type, description[, enum][, default]}}` (", optional" suffix);
    allowed values (`enum`, also of array items) are kept."""
    required = set(schema.get("required", ()))
    out: dict[str, Any] = {}
    for name, spec in (schema.get("properties") or {}).items():
        kind = spec.get("type", "str")
        if kind == "array":
            item = (spec.get("items") or {}).get("type", "string")
            text = f"List[{JSON_TYPES_TO_XLAM.get(item, item)}]"
        else:
            text = JSON_TYPES_TO_XLAM.get(kind, str(kind))
        entry: dict[str, Any] = {"description": spec.get("description", ""), "type": text}
        allowed = spec.get("enum") or (spec.get("items") or {}).get("enum")
        if allowed:
            entry["enum"] = list(allowed)
        if name not in required:
            entry["type"] = f"{text}, optional"
            if "default" in spec:
                entry["default"] = spec["default"]
        out[name] = entry
    return out


def _functions(row: Mapping[str, Any], parameters: Callable[[Mapping[str, Any]], Any]) -> list[dict[str, Any]]:
    """The row's offered tools as `{name, description, parameters}` with the target format's parameter schema."""
    return [
        {
            "name": function["name"],
            "description": function.get("description", ""),
            "parameters": parameters(function.get("parameters") or {"properties": {}}),
        }
        for function in map(_function, row_tools(row))
    ]


def to_xlam(row: Mapping[str, Any]) -> dict[str, Any]:
    """`{"query", "tools", "answers"}` (APIGen), `tools` and `answers` as JSON strings; `SkipRow` if not one round."""
    answers = gold_round_calls(row)
    tools = _functions(row, xlam_parameters)
    return {"query": first_question(row), "tools": dumps(tools), "answers": dumps(answers)}


def bfcl_schema(schema: Mapping[str, Any], *, top: bool = False) -> dict[str, Any]:
    """A JSON schema with BFCL's type names (`dict` for objects, `float` for numbers), recursively."""
    out = dict(schema)
    if "type" in out:
        out["type"] = JSON_TYPES_TO_BFCL.get(out["type"], out["type"])
    if top:
        out["type"] = "dict"
    if "properties" in out:
        out["properties"] = {name: bfcl_schema(spec) for name, spec in out["properties"].items()}
    if isinstance(out.get("items"), Mapping):
        out["items"] = bfcl_schema(out["items"])
    return out


def bfcl_category(calls: int, offered: int) -> str:
    """BFCL's category from the number of expected calls and of offered functions."""
    if calls > 1:
        return "parallel_multiple" if offered > 1 else "parallel"
    return "multiple" if offered > 1 else "simple_python"


def bfcl_file(category: str) -> str:
    """The file name bfcl-eval reads for `category`."""
    return f"{BFCL_PREFIX}_{category}.json"


def bfcl_id(category: str, index: int) -> str:
    """A namespaced entry id whose category (the part before the last `_`) is `category`."""
    return f"{category}_{BFCL_ID_NAMESPACE}-{index}"


def to_bfcl(row: Mapping[str, Any]) -> tuple[str, dict[str, Any], dict[str, Any]]:
    """(category, question line without id, answer line without id) for the first round, when all gold.

    Ground truth lists each given argument with its one allowed value, and `[""]` (may be omitted) for each
    optional parameter of the called function that the gold call leaves out.
    """
    calls = first_gold_round_calls(row)
    functions = _functions(row, lambda parameters: bfcl_schema(parameters, top=True))
    category = bfcl_category(len(calls), len(functions))
    question = {"question": [[{"role": "user", "content": first_question(row)}]], "function": functions}
    schemas = {f["name"]: f["parameters"] for f in functions}
    truth = {"ground_truth": [{c["name"]: _possible_answer(c, schemas.get(c["name"]) or {})} for c in calls]}
    return category, question, truth


def _possible_answer(call: Mapping[str, Any], schema: Mapping[str, Any]) -> dict[str, list[Any]]:
    required = set(schema.get("required") or ())
    answer: dict[str, list[Any]] = {k: [v] for k, v in call["arguments"].items()}
    for name in schema.get("properties") or {}:
        if name not in answer and name not in required:
            answer[name] = [""]
    return answer


def _bfcl_standard(value: Any) -> Any:
    """BFCL's string comparison form: lowercase, without spaces and `,./-_*^` (other values as they are)."""
    if isinstance(value, str):
        return re.sub(r"[ ,./\-_*^]", "", value.lower())
    if isinstance(value, list):
        return [_bfcl_standard(v) for v in value]
    return value


def bfcl_ast_match(call: Mapping[str, Any], possible: Mapping[str, Mapping[str, Sequence[Any]]]) -> bool:
    """Whether `call` (`{"name", "arguments"}`) matches one possible-answer entry as BFCL's AST checker does.

    The name must equal the entry's function; every argument given must be a parameter of the entry with its value
    among the allowed ones (strings compared in BFCL's standard form, ints accepted for floats); a parameter not
    given must allow `""` (may be omitted).

    >>> bfcl_ast_match({"name": "f", "arguments": {"q": "New York"}}, {"f": {"q": ["new york"], "n": [""]}})
    True
    """
    ((name, allowed),) = possible.items()
    arguments = call.get("arguments")
    if call.get("name") != name or not isinstance(arguments, Mapping):
        return False
    if any(key not in allowed for key in arguments):
        return False
    for key, options in allowed.items():
        if key not in arguments:
            if "" not in options:
                return False
            continue
        value = arguments[key]
        wanted = [_bfcl_standard(o) for o in options if o != ""]
        if isinstance(value, bool) or not isinstance(value, int | float):
            if _bfcl_standard(value) not in wanted:
                return False
        elif not any(isinstance(o, int | float) and not isinstance(o, bool) and float(o) == value for o in wanted):
            return False
    return True


# --- writers -------------------------------------------------------------------------------------------------


def _check_target(path: Path, *, overwrite: bool) -> None:
    if path.exists() and not overwrite and (path.is_file() or any(path.iterdir())):
        msg = f"{path}: already exists; pass `overwrite` or choose another target"
        raise OutputDirError(msg)


def _write_lines(path: Path, lines: Iterable[str]) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    tmp = path.with_name(f".{path.name}.tmp")
    with tmp.open("w", encoding="utf-8") as handle:
        for line in lines:
            handle.write(line + "\n")
    os.replace(tmp, path)


def _report(fmt: str, out: Path, rows: int, written: int, skipped: Counter[str]) -> dict[str, Any]:
    return {"format": fmt, "out": str(out), "rows": rows, "written": written, "skipped": dict(sorted(skipped.items()))}


def export_rows(
    rows: Sequence[Mapping[str, Any]],
    out: str | Path,
    *,
    fmt: ExportFormat,
    arguments: ArgumentsStyle = "string",
    reasoning: ReasoningStyle = "drop",
    tool_role: ToolRole = "tool",
    overwrite: bool = False,
) -> dict[str, Any]:
    """Write `rows` in `fmt` to `out` (a JSONL file; a directory for `bfcl`); returns the counts.

    `arguments` and `reasoning` apply to `openai`; `tool_role` to `hermes`. Rows a format cannot express are
    skipped and counted under `skipped` by reason.
    """
    if fmt not in EXPORT_FORMATS:
        msg = f"`fmt`: unknown export format {fmt!r}; choose {', '.join(EXPORT_FORMATS)}"
        raise ValueError(msg)
    target = Path(out)
    _check_target(target, overwrite=overwrite)
    if fmt == "bfcl":
        return _write_bfcl(rows, target)
    skipped: Counter[str] = Counter()
    lines = []
    for index, row in enumerate(rows):
        try:
            if fmt == "openai":
                record = to_openai(row, arguments=arguments, reasoning=reasoning)
            elif fmt == "hermes":
                record = {"id": row_id(row, index), **to_hermes(row, tool_role=tool_role)}
            else:
                record = {"id": row_id(row, index), **to_xlam(row)}
        except SkipRow as skip:
            skipped[skip.reason] += 1
            continue
        lines.append(dumps(record))
    _write_lines(target, lines)
    return _report(fmt, target, len(rows), len(lines), skipped)


def _write_bfcl(rows: Sequence[Mapping[str, Any]], target: Path) -> dict[str, Any]:
    skipped: Counter[str] = Counter()
    questions: dict[str, list[str]] = {c: [] for c in BFCL_CATEGORIES}
    answers: dict[str, list[str]] = {c: [] for c in BFCL_CATEGORIES}
    sources: dict[str, str] = {}
    for index, row in enumerate(rows):
        try:
            category, question, truth = to_bfcl(row)
        except SkipRow as skip:
            skipped[skip.reason] += 1
            continue
        entry = bfcl_id(category, len(questions[category]))
        questions[category].append(dumps({"id": entry, **question}))
        answers[category].append(dumps({"id": entry, **truth}))
        sources[entry] = row_id(row, index)
    tmp = target.with_name(f".{target.name}.tmp")
    shutil.rmtree(tmp, ignore_errors=True)
    for category in BFCL_CATEGORIES:
        if questions[category]:
            _write_lines(tmp / bfcl_file(category), questions[category])
            _write_lines(tmp / BFCL_ANSWER_DIR / bfcl_file(category), answers[category])
    _write_lines(tmp / BFCL_SOURCE_IDS, [dumps(sources)])
    if target.exists():
        shutil.rmtree(target) if target.is_dir() else target.unlink()
    os.replace(tmp, target)
    report = _report("bfcl", target, len(rows), len(sources), skipped)
    report["categories"] = {c: len(questions[c]) for c in BFCL_CATEGORIES if questions[c]}
    return report


def export_dataset(
    dataset: str | Path,
    out: str | Path,
    *,
    fmt: ExportFormat,
    arguments: ArgumentsStyle = "string",
    reasoning: ReasoningStyle = "drop",
    tool_role: ToolRole = "tool",
    overwrite: bool = False,
) -> dict[str, Any]:
    """Read a ToolForge dataset directory and `export_rows` its kept rows; the report names the dataset."""
    rows = read_toolforge_rows(dataset)
    report = export_rows(
        rows, out, fmt=fmt, arguments=arguments, reasoning=reasoning, tool_role=tool_role, overwrite=overwrite
    )
    return {"dataset": str(dataset), **report}
