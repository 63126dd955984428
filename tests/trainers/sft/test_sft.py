"""SFT on tool-use dialogues: the chat template, the assistant-only labels, a tiny training run and its reload."""

from __future__ import annotations

import json
import logging
from pathlib import Path
from typing import Any

import pyarrow as pa
import pytest
from synth_datasets import write_synth_dataset

from synth.core.errors import InputError
from synth.trainers.sft.chat_template import TOOL_CHAT_TEMPLATE, ensure_tool_template, supports_tools
from synth.trainers.sft.data import IGNORE, encode_dialogue, encode_prompt, split_examples, to_examples
from synth.trainers.sft.tiny import build_tiny_tokenizer
from synth.trainers.sft.train import METRICS_FILE, parse_first_tool_call, train_sft
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
from synth.validators.toolforge.records import TOOLFORGE_SCHEMA, dialogue_row


def _tool(name: str, argument: str) -> ToolSpec:
    schema = {"type": "object", "properties": {argument: {"type": "string"}}, "required": [argument]}
    return ToolSpec(name, f"Look up by {argument}.", schema, family=name)


TOOLS = (_tool("film_search", "title"), _tool("person_lookup", "name"), _tool("place_lookup", "city"))
SUBJECTS = (
    ("film_search", "title", "Who directed {}?", ("Alien", "Heat", "Brazil", "Fargo")),
    ("person_lookup", "name", "When was {} born?", ("Ada Lovelace", "Alan Turing", "Marie Curie", "Niels Bohr")),
    ("place_lookup", "city", "Which country is {} in?", ("Lyon", "Porto", "Graz", "Turku")),
)


def make_rows() -> list[dict[str, Any]]:
    """12 single-call dialogues over 3 tools; even rows also have a parallel second call."""
    rows = []
    for k in range(4):
        for tool, argument, question, subjects in SUBJECTS:
            subject = subjects[k]
            text = question.format(subject)
            evidence = (Evidence(0, 0, subject, f"{subject} fact.", True),)
            seed = QASeed(
                f"{tool}-{k}", "hotpotqa", text, "X", "bridge", (Passage(subject, (f"{subject} fact.",)),), ((0, 0),)
            )
            calls = [PlannedCall("c0", 0, "gold", tool, tool, text, {argument: subject}, evidence)]
            plan = DialoguePlan("single", "one hop", "D1", (), tuple(calls), (text,), ("X",))
            messages = [
                ChatMessage("system", "Answer with tools."),
                ChatMessage("user", text),
                ChatMessage(
                    "assistant", reasoning=f"I call {tool}.", tool_calls=(ToolCall("c0", tool, {argument: subject}),)
                ),
                ChatMessage("tool", render_observation(evidence), tool_call_id="c0", name=tool),
                ChatMessage("assistant", "X", reasoning="Found it."),
            ]
            rows.append(dialogue_row(seed, plan, TOOLS, messages, backend="scripted", llm_calls=0))
    return rows


def write_dataset(root: Path, rows: list[dict[str, Any]], *, drop: str | None = None) -> Path:
    table = pa.Table.from_pylist(rows, schema=TOOLFORGE_SCHEMA)
    table = table.add_column(0, "id", pa.array([f"r{i:02d}" for i in range(len(rows))]))
    if drop:
        table = table.drop([drop])
    return write_synth_dataset(root, table, domain="toolforge")


@pytest.fixture(scope="module")
def tokenizer() -> Any:
    return build_tiny_tokenizer(["hello tools"], vocab_size=300)


def test_template_renders_tools_calls_results_and_reasoning(tokenizer: Any) -> None:
    example = to_examples(make_rows()[:1])[0]
    text = tokenizer.apply_chat_template(list(example.messages), tools=list(example.tools), tokenize=False)
    assert text.startswith("<|im_start|>system\nAnswer with tools.\n\n# Tools")
    assert "<tools>\n" + json.dumps(example.tools[0]) in text
    assert (
        '<|im_start|>assistant\n<think>\nI call film_search.\n</think>\n\n<tool_call>\n{"name": "film_search", '
        '"arguments": {"title": "Alien"}}\n</tool_call><|im_end|>\n'
    ) in text
    assert (
        "<|im_start|>user\n<tool_response>\n**1**\ntitle: Alien\ncontent: Alien fact.\n</tool_response><|im_end|>"
        in text
    )
    assert text.endswith("<|im_start|>assistant\n<think>\nFound it.\n</think>\n\nX<|im_end|>\n")
    # string arguments (OpenAI wire form) render the same as dicts
    wire = [dict(m) for m in example.messages]
    wire[2] = {
        **wire[2],
        "tool_calls": [{"type": "function", "function": {"name": "film_search", "arguments": '{"title": "Alien"}'}}],
    }
    assert tokenizer.apply_chat_template(wire, tools=list(example.tools), tokenize=False) == text
    # the prompt is a prefix of the full dialogue
    prompt = tokenizer.decode(encode_prompt(tokenizer, example))
    assert text.startswith(prompt) and prompt.endswith("<|im_start|>assistant\n")


def test_probe_detects_templates_without_tools() -> None:
    tok = build_tiny_tokenizer(["x"], vocab_size=300)
    assert supports_tools(tok) and ensure_tool_template(tok) == "model"
    tok.chat_template = "{% for m in messages %}{{ m.content }}{% endfor %}"
    assert not supports_tools(tok)
    assert ensure_tool_template(tok) == "synth" and tok.chat_template == TOOL_CHAT_TEMPLATE
    tok.chat_template = None
    assert ensure_tool_template(tok) == "synth"


def test_labels_cover_exactly_the_assistant_turns(tokenizer: Any) -> None:
    example = to_examples(make_rows()[:1])[0]
    encoded = encode_dialogue(tokenizer, example, max_length=10_000)
    assert not encoded.truncated and len(encoded.labels) == len(encoded.input_ids)
    spans, current = [], []
    for token, label in zip(encoded.input_ids, encoded.labels, strict=True):
        if label != IGNORE:
            assert label == token
            current.append(token)
        elif current:
            spans.append(tokenizer.decode(current))
            current = []
    assert spans == [
        "<think>\nI call film_search.\n</think>\n\n"
        '<tool_call>\n{"name": "film_search", "arguments": {"title": "Alien"}}\n</tool_call><|im_end|>',
        "<think>\nFound it.\n</think>\n\nX<|im_end|>",
    ]
    cut = encode_dialogue(tokenizer, example, max_length=50)
    assert cut.truncated and len(cut.input_ids) == 50 and all(label == IGNORE for label in cut.labels)


def test_assistant_turns_cut_the_dialogue_after_the_first_answer(tokenizer: Any) -> None:
    example = to_examples(make_rows()[:1])[0]
    whole = encode_dialogue(tokenizer, example, max_length=10_000)
    first = encode_dialogue(tokenizer, example, max_length=10_000, assistant_turns=1)
    assert first.input_ids == whole.input_ids[: len(first.input_ids)] and not first.truncated
    assert tokenizer.decode(first.input_ids).endswith("</tool_call><|im_end|>")
    labelled = tokenizer.decode([t for t in first.labels if t != IGNORE])
    assert labelled.startswith("<think>\nI call film_search.") and labelled.endswith("</tool_call><|im_end|>")
    assert encode_dialogue(tokenizer, example, max_length=10_000, assistant_turns=5).input_ids == whole.input_ids


def test_smiles_are_spelt_one_character_per_token_wherever_they_appear() -> None:
    smiles = "CC(=O)Oc1ccccc1C(=O)O"
    texts = [f"Input : <SMILES> {smiles} </SMILES>\nThe modified molecule <SMILES> CCO </SMILES> is valid."] * 20
    tok = build_tiny_tokenizer(texts, vocab_size=400)
    for text in (f"Input : <SMILES> {smiles} </SMILES>", f"<SMILES> {smiles} </SMILES>"):
        pieces = tok.convert_ids_to_tokens(tok(text)["input_ids"])
        start = pieces.index("Ġ", pieces.index(">")) + 1
        assert pieces[start : start + len(smiles)] == list(smiles)
        assert tok.decode(tok(text)["input_ids"]) == text
    # prose still gets BPE words
    assert len(tok("The modified molecule")["input_ids"]) < len("The modified molecule") / 2


def test_split_is_seeded_and_keeps_a_training_row() -> None:
    examples = to_examples(make_rows())
    train, held = split_examples(examples, eval_rows=3, seed=1)
    assert len(train) == 9 and len(held) == 3
    assert [e.id for e in held] == [e.id for e in split_examples(examples, eval_rows=3, seed=1)[1]]
    assert len(split_examples(examples[:2], eval_rows=5, seed=0)[0]) == 1
    assert held[0].first_tool in {"film_search", "person_lookup", "place_lookup"}


def test_parse_first_tool_call() -> None:
    text = (
        "<think>\n<tool_call>no</tool_call>\n</think>\n\n"
        '<tool_call>\n{"name": "f", "arguments": "{\\"a\\": 1}"}\n</tool_call>'
    )
    assert parse_first_tool_call(text) == {"name": "f", "arguments": {"a": 1}}
    assert parse_first_tool_call("<tool_call>\n{broken\n</tool_call>") is None
    assert parse_first_tool_call('<tool_call>\n{"name": "f"') is None


def test_missing_column_is_a_one_line_config_error(tmp_path: Path) -> None:
    dataset = write_dataset(tmp_path / "ds", make_rows(), drop="tools")
    with pytest.raises(InputError, match=r"ds: column `tools` is missing"):
        train_sft(dataset, out=tmp_path / "m", steps=1)


def test_tiny_training_run_lowers_the_loss_and_reloads(
    tmp_path: Path, one_thread: None, caplog: pytest.LogCaptureFixture
) -> None:
    import torch

    caplog.set_level(logging.INFO, logger="synth.trainers.sft.train")
    from transformers import AutoModelForCausalLM, AutoTokenizer

    dataset = write_dataset(tmp_path / "ds", make_rows())
    metrics = train_sft(
        dataset, out=tmp_path / "m", steps=16, seed=0, max_length=512, eval_rows=2, batch_size=2, max_new_tokens=16
    )
    loss = metrics["loss"]
    assert loss["train_after"] < 0.8 * loss["train_before"]
    assert loss["held_out_after"] < loss["held_out_before"]
    assert "sft step 16/16: loss" in caplog.text
    assert metrics["rows"] == {"train": 10, "held_out": 2, "truncated": 0, "dropped_without_assistant_tokens": 0}
    assert metrics["chat_template"] == "synth" and metrics["tool_call"]["after"]["rows"] == 2
    saved = json.loads((tmp_path / "m" / METRICS_FILE).read_text())
    assert saved["loss"] == loss
    model = AutoModelForCausalLM.from_pretrained(tmp_path / "m")
    tok = AutoTokenizer.from_pretrained(tmp_path / "m")
    assert supports_tools(tok) and "{% generation %}" in tok.chat_template
    example = to_examples(make_rows()[:1])[0]
    encoded = encode_dialogue(tok, example, max_length=512)
    with torch.no_grad():
        logits = model(input_ids=torch.tensor([encoded.input_ids])).logits
    assert logits.shape[-1] == len(tok)
    with pytest.raises(Exception, match="already holds a trained model"):
        train_sft(dataset, out=tmp_path / "m", steps=1)
    warmed = train_sft(
        dataset, out=tmp_path / "w", steps=2, copy_warmup=4, assistant_turns=1, max_length=512, eval_rows=2,
        batch_size=2, max_new_tokens=4,
    )  # fmt: skip
    assert len(warmed["loss"]["copy_warmup_logged"]) == 4 and warmed["settings"]["copy_warmup"] == 4
    assert warmed["settings"]["assistant_turns"] == 1


def test_lora_on_a_local_model_without_tool_template(tmp_path: Path, one_thread: None) -> None:
    from synth.trainers.sft.tiny import build_tiny_model

    base = tmp_path / "base"
    tok = build_tiny_tokenizer(["hello tools"], vocab_size=300)
    tok.chat_template = "{% for m in messages %}<|im_start|>{{ m.role }}\n{{ m.content }}<|im_end|>\n{% endfor %}"
    build_tiny_model(tok, seed=0, hidden=32, max_positions=2048).save_pretrained(base)
    tok.save_pretrained(base)
    dataset = write_dataset(tmp_path / "ds", make_rows())
    metrics = train_sft(
        dataset,
        model=base,
        out=tmp_path / "m",
        steps=2,
        lora_rank=4,
        seed=0,
        max_length=2048,
        eval_rows=1,
        batch_size=2,
        max_new_tokens=4,
    )
    assert metrics["chat_template"] == "synth" and metrics["model"] == str(base)
    assert metrics["settings"]["lora_rank"] == 4 and metrics["settings"]["lr"] == 2e-4
    assert (tmp_path / "m" / "config.json").is_file() and not (tmp_path / "m" / "adapter_config.json").exists()
