"""OptiScribe rows as SFT chat: the scripted challenger's specs as compact JSON answers to the instructions."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from optiscribe_datasets import make_curriculum_dataset

pytest.importorskip("pyscipopt")

from synth.core.dataset import read_records
from synth.generators.optiscribe.llm import SYSTEM_PROMPT, read_challenger_answer
from synth.trainers.sft.data import read_examples
from synth.trainers.sft.optiscribe import compact_spec


@pytest.fixture(scope="module")
def optiscribe_dataset(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return make_curriculum_dataset(tmp_path_factory.mktemp("optiscribe") / "data")


def test_compact_spec_leaves_out_null_and_empty_fields() -> None:
    spec = '{"density": null, "difficulty": null, "family": "max_cut", "knobs": {}, "sizes": {"nodes": 12}}'
    assert compact_spec(spec) == '{"family":"max_cut","sizes":{"nodes":12}}'
    spec = '{"density": 0.3, "family": "max_cut", "knobs": {"weight_low": 2}, "sizes": {"nodes": 12}}'
    assert compact_spec(spec) == '{"family":"max_cut","sizes":{"nodes":12},"density":0.3,"knobs":{"weight_low":2}}'


def test_rows_become_challenger_chats_with_valid_compact_specs(optiscribe_dataset: Path) -> None:
    domain, examples = read_examples(optiscribe_dataset)
    rows = read_records(optiscribe_dataset, columns=("instruction", "spec", "instance_seed"))
    assert domain == "optiscribe" and len(examples) == len(rows) > 0
    for example, row in zip(examples, rows, strict=True):
        system, user, assistant = example.messages
        assert (system["role"], system["content"]) == ("system", SYSTEM_PROMPT)
        assert (user["role"], user["content"]) == ("user", row["instruction"])
        assert assistant["role"] == "assistant" and " " not in assistant["content"]
        assert "null" not in assistant["content"]
        answer = read_challenger_answer(assistant["content"], instruction=row["instruction"])
        assert answer.reason is None and answer.spec is not None
        assert answer.spec.to_dict() == json.loads(row["spec"])
        assert example.context == {"instruction": row["instruction"], "instance_seed": row["instance_seed"]}


def test_tiny_sft_run_scores_held_out_specs(optiscribe_dataset: Path, tmp_path: Path) -> None:
    import torch

    from synth.trainers.sft.train import train_sft

    threads = torch.get_num_threads()
    torch.set_num_threads(1)
    try:
        metrics = train_sft(
            optiscribe_dataset, out=tmp_path / "m", steps=2, eval_rows=1, batch_size=2, max_length=512,
            max_new_tokens=8, tiny_hidden=16, tiny_layers=1,
        )  # fmt: skip
    finally:
        torch.set_num_threads(threads)
    assert metrics["domain"] == "optiscribe" and metrics["rows"]["held_out"] == 1
    after = metrics["first_answer"]["after"]
    assert after["rows"] == 1 and set(after) >= {"parse_rate", "validity", "success_rate", "samples"}
    assert after["samples"][0]["refused"] is not None  # 2 steps of a random 16-wide LM write no spec
    from transformers import AutoTokenizer

    tokens = AutoTokenizer.from_pretrained(tmp_path / "m").tokenize("with 14 nodes")
    assert tokens[-3:-1] == ["1", "4"]  # digits one per token: the size is spelt the same in the answer


def test_a_dataset_of_another_domain_is_refused_in_one_line(tmp_path: Path) -> None:
    from synth_datasets import write_synth_dataset

    from synth.core.errors import InputError
    from synth.trainers.sft.train import train_sft

    other = write_synth_dataset(tmp_path / "lob", [{"x": 1}], domain="lob")
    with pytest.raises(InputError, match="SFT needs a 'toolforge' or 'marco' or 'optiscribe' dataset") as error:
        train_sft(other, out=tmp_path / "m", steps=1)
    assert "\n" not in str(error.value) and not (tmp_path / "m").exists()
