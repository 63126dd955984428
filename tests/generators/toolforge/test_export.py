"""ToolForge exporters: openai / hermes / xlam / bfcl round trips, skip reasons, atomic deterministic writes."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pyarrow as pa
import pytest
from synth_datasets import write_synth_dataset

from synth.core.errors import InputError, OutputDirError
from synth.generators.toolforge.export import (
    BFCL_ANSWER_DIR,
    export_dataset,
    export_rows,
    first_gold_round_calls,
    read_toolforge_rows,
    to_bfcl,
    to_hermes,
    to_openai,
)
from synth.validators.toolforge.model import (
    ChatMessage,
    DialoguePlan,
    Evidence,
    Passage,
    PlannedCall,
    QASeed,
    ToolCall,
    ToolSpec,
    render_observation,
)
from synth.validators.toolforge.records import TOOLFORGE_SCHEMA, dialogue_row, messages_from_rows

SEARCH = ToolSpec(
    "wiki_search",
    "Search an encyclopedia.",
    {"type": "object", "properties": {"query": {"type": "string", "description": "terms"}}, "required": ["query"]},
    family="wiki_search",
)
PEOPLE = ToolSpec(
    "person_lookup",
    "Facts about a person.",
    {
        "type": "object",
        "properties": {
            "name": {"type": "string", "description": "full name"},
            "limit": {"type": "number", "description": "items", "default": 3},
        },
        "required": ["name"],
    },
    family="person_lookup",
)
SEED = QASeed(
    seed_id="s1",
    source="hotpotqa",
    question="Who directed Alien?",
    answer="Ridley Scott",
    qtype="bridge",
    passages=(Passage("Alien", ("Alien is a 1979 film.", "It was directed by Ridley Scott.")),),
    supporting=((0, 1),),
)
GOLD = Evidence(0, 1, "Alien", "It was directed by Ridley Scott.", True)
NOISE = Evidence(0, 0, "Alien", "Alien is a 1979 film.", False)


def make_row(paradigm: str, *, failure: bool = False) -> dict[str, Any]:
    """A dialogue following the message conventions: `single`, `parallel`, `multi_hop` (2 rounds), `multi_turn`."""

    def call(cid: str, rnd: int, tool: ToolSpec, args: dict[str, Any], kind: str = "gold", turn: int = 0):
        evidence = (NOISE,) if kind != "gold" else (GOLD, NOISE)
        gold_tool = SEARCH.name if kind == "wrong_tool" else tool.name
        return PlannedCall(cid, rnd, kind, tool.name, gold_tool, "q", args, evidence, "", turn)  # type: ignore[arg-type]

    if paradigm == "parallel":
        calls = [call("c0", 0, SEARCH, {"query": "Alien director"}), call("c1", 0, PEOPLE, {"name": "Ridley Scott"})]
    elif paradigm == "multi_hop":
        calls = [call("c0", 0, SEARCH, {"query": "Alien"}), call("c1", 1, PEOPLE, {"name": "Ridley Scott", "limit": 2})]
    elif paradigm == "multi_turn":
        calls = [call("c0", 0, SEARCH, {"query": "Alien"}), call("c1", 1, PEOPLE, {"name": "Scott"}, turn=1)]
    else:
        calls = [call("c0", 0, SEARCH, {"query": "Alien director"})]
    if failure:
        calls = [call("f0", 0, PEOPLE, {"name": "Alien"}, kind="wrong_tool")] + [
            PlannedCall(c.call_id, c.round + 1, c.kind, c.tool, c.gold_tool, c.query, c.arguments, c.evidence)
            for c in calls
        ]
    turns = ("Who directed Alien?", "And his birth year?") if paradigm == "multi_turn" else ("Who directed Alien?",)
    answers = ("Ridley Scott", "1937") if paradigm == "multi_turn" else ("Ridley Scott",)
    plan = DialoguePlan(paradigm, "test", "D1", (), tuple(calls), turns, answers, {"wiki_search": "wiki_search"})  # type: ignore[arg-type]
    messages = [ChatMessage("system", "You are a careful assistant.")]
    for turn, question in enumerate(turns):
        messages.append(ChatMessage("user", question))
        for rnd in sorted({c.round for c in calls if c.user_turn == turn}):
            here = [c for c in calls if c.round == rnd]
            names = ", ".join(c.tool for c in here)
            messages.append(
                ChatMessage(
                    "assistant",
                    reasoning=f"I call {names}.",
                    tool_calls=tuple(ToolCall(c.call_id, c.tool, c.arguments) for c in here),
                )
            )
            for c in here:
                messages.append(
                    ChatMessage("tool", render_observation(c.evidence), tool_call_id=c.call_id, name=c.tool)
                )
        messages.append(ChatMessage("assistant", answers[turn], reasoning="The evidence answers it."))
    return dialogue_row(SEED, plan, (SEARCH, PEOPLE), messages, backend="scripted", llm_calls=0)


ROWS = [
    make_row("single"),
    make_row("parallel"),
    make_row("multi_hop"),
    make_row("multi_turn"),
    make_row("single", failure=True),
]


def read_jsonl(path: Path) -> list[dict[str, Any]]:
    return [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines()]


@pytest.mark.parametrize("arguments", ["dict", "string"])
def test_openai_export_parses_back_to_the_same_calls(tmp_path: Path, arguments: str) -> None:
    report = export_rows(ROWS, tmp_path / "o.jsonl", fmt="openai", arguments=arguments)  # type: ignore[arg-type]
    assert report["written"] == len(ROWS) and report["skipped"] == {}
    for row, line in zip(ROWS, read_jsonl(tmp_path / "o.jsonl"), strict=True):
        assert set(line) == {"messages", "tools"}
        assert line["tools"] == [json.loads(t) for t in row["tools"]]
        got = []
        for message in line["messages"]:
            for call in message.get("tool_calls", ()):
                value = call["function"]["arguments"]
                assert isinstance(value, dict if arguments == "dict" else str)
                got.append((call["id"], call["function"]["name"], value if arguments == "dict" else json.loads(value)))
        want = [(c.id, c.name, dict(c.arguments)) for m in messages_from_rows(row["messages"]) for c in m.tool_calls]
        assert got == want
        roles = [m["role"] for m in line["messages"]]
        assert roles == [m["role"] for m in row["messages"]]


def test_openai_reasoning_options() -> None:
    row = ROWS[0]
    dropped = to_openai(row, reasoning="drop")["messages"]
    field = to_openai(row, reasoning="field")["messages"]
    inline = to_openai(row, reasoning="inline")["messages"]
    assert all("reasoning_content" not in m and "<think>" not in (m["content"] or "") for m in dropped)
    assert dropped[2]["content"] is None and dropped[-1]["content"] == "Ridley Scott"
    assert field[2]["reasoning_content"] == "I call wiki_search." and field[2]["content"] is None
    assert inline[2]["content"] == "<think>\nI call wiki_search.\n</think>\n\n"
    assert inline[-1]["content"] == "<think>\nThe evidence answers it.\n</think>\n\nRidley Scott"


def test_hermes_export_uses_tags_and_groups_results() -> None:
    messages = to_hermes(ROWS[1])["messages"]
    assert [m["role"] for m in messages] == ["system", "user", "assistant", "tool", "assistant"]
    assert all(isinstance(m["content"], str) for m in messages)
    assert "<tools>\n" in messages[0]["content"] and '"name": "person_lookup"' in messages[0]["content"]
    call_turn = messages[2]["content"]
    assert call_turn.startswith("<think>\nI call wiki_search, person_lookup.\n</think>\n\n<tool_call>\n")
    blocks = call_turn.split("<tool_call>\n")[1:]
    assert [json.loads(b.split("\n</tool_call>")[0]) for b in blocks] == [
        {"name": "wiki_search", "arguments": {"query": "Alien director"}},
        {"name": "person_lookup", "arguments": {"name": "Ridley Scott"}},
    ]
    assert messages[3]["content"].count("<tool_response>") == 2
    assert messages[4]["content"].endswith("<answer>\nRidley Scott\n</answer>")
    assert to_hermes(ROWS[1], tool_role="user")["messages"][3]["role"] == "user"


def test_xlam_answers_equal_the_gold_round_and_skips_are_counted(tmp_path: Path) -> None:
    report = export_rows(ROWS, tmp_path / "x.jsonl", fmt="xlam")
    assert report["written"] == 3
    assert report["skipped"] == {"gold_calls_after_first_turn": 1, "gold_calls_span_rounds": 1}
    lines = read_jsonl(tmp_path / "x.jsonl")
    kept = [ROWS[0], ROWS[1], ROWS[4]]
    for row, line in zip(kept, lines, strict=True):
        assert set(line) == {"id", "query", "tools", "answers"}
        assert isinstance(line["tools"], str) and isinstance(line["answers"], str)
        gold = [
            {"name": c["tool"], "arguments": json.loads(c["arguments"])} for c in row["plan"] if c["kind"] == "gold"
        ]
        assert json.loads(line["answers"]) == gold
        assert line["query"] == "Who directed Alien?"
    tools = json.loads(lines[0]["tools"])
    assert tools[1]["parameters"]["limit"] == {"default": 3, "description": "items", "type": "float, optional"}
    assert tools[0]["parameters"]["query"]["type"] == "str"
    # the failure row's wrong-tool call is not an answer
    assert [a["name"] for a in json.loads(lines[2]["answers"])] == ["wiki_search"]


def test_bfcl_files_pair_by_id_and_infer_categories(tmp_path: Path) -> None:
    report = export_rows(ROWS, tmp_path / "bfcl", fmt="bfcl")
    assert report["written"] == 4 and report["skipped"] == {"first_round_not_gold": 1}
    assert report["categories"] == {"multiple": 3, "parallel_multiple": 1}
    for category in report["categories"]:
        questions = read_jsonl(tmp_path / "bfcl" / f"BFCL_v4_{category}.json")
        answers = read_jsonl(tmp_path / "bfcl" / BFCL_ANSWER_DIR / f"BFCL_v4_{category}.json")
        assert [q["id"] for q in questions] == [a["id"] for a in answers]
        # bfcl-eval's category of an id is the part before its last "_"; the suffix is never an official number
        assert all(q["id"].rsplit("_", 1) == [category, f"toolforge-{i}"] for i, q in enumerate(questions))
        for question in questions:
            assert question["question"][0][0]["role"] == "user"
            assert all(f["parameters"]["type"] == "dict" for f in question["function"])
    parallel = read_jsonl(tmp_path / "bfcl" / BFCL_ANSWER_DIR / "BFCL_v4_parallel_multiple.json")
    questions = read_jsonl(tmp_path / "bfcl" / "BFCL_v4_parallel_multiple.json")
    schemas = {f["name"]: f["parameters"] for f in questions[0]["function"]}
    for truth in parallel[0]["ground_truth"]:
        ((name, answer),) = truth.items()
        optional = set(schemas[name]["properties"]) - set(schemas[name].get("required", ()))
        # every optional parameter the gold call leaves out may be omitted ("")
        assert {k for k, v in answer.items() if v == [""]} == optional - {"query", "name"}
    assert [
        {n: {k: v for k, v in a.items() if v != [""]}} for t in parallel[0]["ground_truth"] for n, a in t.items()
    ] == [
        {"wiki_search": {"query": ["Alien director"]}},
        {"person_lookup": {"name": ["Ridley Scott"]}},
    ]
    multiple = read_jsonl(tmp_path / "bfcl" / "BFCL_v4_multiple.json")
    limit = multiple[0]["function"][1]["parameters"]["properties"]["limit"]
    assert limit["type"] == "float"
    sources = json.loads((tmp_path / "bfcl" / "source_ids.json").read_text())
    assert sources == {
        "multiple_toolforge-0": "s1-0",
        "multiple_toolforge-1": "s1-2",
        "multiple_toolforge-2": "s1-3",
        "parallel_multiple_toolforge-0": "s1-1",
    }
    assert first_gold_round_calls(ROWS[2]) == [{"name": "wiki_search", "arguments": {"query": "Alien"}}]


def test_writes_are_deterministic_atomic_and_refuse_a_used_target(tmp_path: Path) -> None:
    first = export_rows(ROWS, tmp_path / "a.jsonl", fmt="hermes")
    export_rows(ROWS, tmp_path / "b.jsonl", fmt="hermes")
    assert (tmp_path / "a.jsonl").read_bytes() == (tmp_path / "b.jsonl").read_bytes()
    assert first["written"] == 5
    with pytest.raises(OutputDirError, match="already exists"):
        export_rows(ROWS, tmp_path / "a.jsonl", fmt="hermes")
    export_rows(ROWS[:1], tmp_path / "a.jsonl", fmt="hermes", overwrite=True)
    assert len(read_jsonl(tmp_path / "a.jsonl")) == 1
    assert sorted(p.name for p in tmp_path.iterdir()) == ["a.jsonl", "b.jsonl"]
    line = (tmp_path / "b.jsonl").read_text().splitlines()[0]
    assert line == json.dumps(json.loads(line), sort_keys=True, ensure_ascii=False)


def test_unparsable_arguments_are_skipped_with_a_reason(tmp_path: Path) -> None:
    row = make_row("single")
    row["messages"][2]["tool_calls"][0]["function"]["arguments"] = "{not json"
    report = export_rows([row, ROWS[0]], tmp_path / "o.jsonl", fmt="openai")
    assert report["written"] == 1 and report["skipped"] == {"unparsable_arguments": 1}


def test_export_dataset_reads_shards_and_names_a_missing_column(tmp_path: Path) -> None:
    table = pa.Table.from_pylist(ROWS, schema=TOOLFORGE_SCHEMA)
    table = table.add_column(0, "id", pa.array([f"r{i}" for i in range(len(ROWS))]))
    write_synth_dataset(tmp_path / "ds", table, domain="toolforge")
    assert [r["id"] for r in read_toolforge_rows(tmp_path / "ds")] == ["r0", "r1", "r2", "r3", "r4"]
    report = export_dataset(tmp_path / "ds", tmp_path / "x.jsonl", fmt="xlam")
    assert report["dataset"] == str(tmp_path / "ds") and report["written"] == 3
    assert [line["id"] for line in read_jsonl(tmp_path / "x.jsonl")] == ["r0", "r1", "r4"]
    write_synth_dataset(tmp_path / "no-plan", table.drop(["plan"]), domain="toolforge")
    with pytest.raises(InputError, match="`plan` is missing"):
        read_toolforge_rows(tmp_path / "no-plan")
    write_synth_dataset(tmp_path / "lob", table, domain="lob")
    with pytest.raises(InputError, match="a 'lob' dataset, but ToolForge export needs a 'toolforge' dataset"):
        read_toolforge_rows(tmp_path / "lob")
    with pytest.raises(InputError, match="dataset directory not found"):
        read_toolforge_rows(tmp_path / "nothing")


def test_xlam_keeps_enum_values_of_parameters_and_array_items() -> None:
    from synth.generators.toolforge.export import xlam_parameters

    schema = {
        "type": "object",
        "properties": {
            "detail": {"type": "string", "enum": ["basic", "full"]},
            "fields": {"type": "array", "items": {"type": "string", "enum": ["born", "died"]}},
        },
        "required": ["detail"],
    }
    out = xlam_parameters(schema)
    assert out["detail"] == {"description": "", "type": "str", "enum": ["basic", "full"]}
    assert out["fields"]["enum"] == ["born", "died"] and out["fields"]["type"] == "List[str], optional"


def test_bfcl_ast_match_follows_bfcl_rules() -> None:
    from synth.generators.toolforge.export import bfcl_ast_match

    possible = {"person_lookup": {"name": ["Ridley Scott"], "limit": ["", 3]}}
    assert bfcl_ast_match({"name": "person_lookup", "arguments": {"name": "ridley-scott"}}, possible)
    assert bfcl_ast_match({"name": "person_lookup", "arguments": {"name": "Ridley Scott", "limit": 3.0}}, possible)
    assert not bfcl_ast_match({"name": "person_lookup", "arguments": {"name": "Ridley Scott", "limit": 4}}, possible)
    assert not bfcl_ast_match({"name": "person_lookup", "arguments": {}}, possible)  # required name omitted
    assert not bfcl_ast_match({"name": "person_lookup", "arguments": {"name": "Ridley Scott", "x": 1}}, possible)
    assert not bfcl_ast_match({"name": "wiki_search", "arguments": {"name": "Ridley Scott"}}, possible)
    # an exported possible answer accepts its own gold call
    _, _, truth = to_bfcl(ROWS[0])
    gold = first_gold_round_calls(ROWS[0])[0]
    assert any(bfcl_ast_match(gold, entry) for entry in truth["ground_truth"])
