"""Seed reading: both schemas, the shipped files, and malformed records as named problems."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from toolforge_seed_records import HOTPOT, MUSIQUE

from synth.core.errors import InputError
from synth.generators.toolforge.seeds import SeedProblem, read_seed_file, seed_files, split_sentences


def _write(tmp_path: Path, name: str, records: list[dict]) -> Path:
    path = tmp_path / name
    if name.endswith(".jsonl"):
        path.write_text("\n".join(json.dumps(r) for r in records), encoding="utf-8")
    else:
        path.write_text(json.dumps(records), encoding="utf-8")
    return path


def test_shipped_seeds_all_parse_in_both_schemas() -> None:
    items = [item for path in seed_files(None) for item in read_seed_file(path)]
    problems = [item for item in items if isinstance(item, SeedProblem)]
    assert problems == []
    sources = {item.source for item in items}
    assert sources == {"hotpotqa", "musique"}
    assert len(items) == 253
    for seed in items:
        assert seed.supporting and all(seed.sentence(ref) for ref in seed.supporting)


def test_hotpot_and_musique_records_normalise(tmp_path: Path) -> None:
    (hot,) = read_seed_file(_write(tmp_path, "h.json", [HOTPOT]))
    assert hot.source == "hotpotqa" and hot.supporting == ((0, 0), (1, 1))
    assert hot.sentence((1, 1)) == " She was born in Springfield."
    (mus,) = read_seed_file(_write(tmp_path, "m.jsonl", [MUSIQUE]))
    assert mus.source == "musique" and mus.qtype == "2hop"
    assert [mus.sentence(ref) for ref in mus.supporting] == [
        "It was directed by Jane Doe.",
        "She was born in Springfield.",
    ]
    assert mus.aliases == ("Springfield, USA",)
    assert mus.decomposition[1].question == "where was #1 born"


@pytest.mark.parametrize(
    ("mutate", "code", "expected"),
    [
        (lambda r: r.pop("answer"), "missing_field", "field `answer`: missing"),
        (lambda r: r.update(answer="  "), "empty_field", "field `answer`: empty"),
        (
            lambda r: r.update(supporting_facts=[["Film X", 0], ["Jane Doe", 7]]),
            "dangling_reference",
            "field `supporting_facts[1]`: sentence 7 of 'Jane Doe' does not exist (2 sentences)",
        ),
        (
            lambda r: r.update(supporting_facts=[["Nowhere", 0]]),
            "dangling_reference",
            "field `supporting_facts[0]`: title 'Nowhere' is not in `context`",
        ),
        (lambda r: r.update(context="oops"), "wrong_type", "field `context`: expected list, got str"),
        (
            lambda r: r.update(supporting_facts=[[["Film X"], 0]]),
            "wrong_type",
            "field `supporting_facts[0]`: expected [title, sentence index]",
        ),
    ],
)
def test_malformed_hotpot_records_become_named_problems(tmp_path: Path, mutate, code: str, expected: str) -> None:
    bad = json.loads(json.dumps(HOTPOT))
    mutate(bad)
    items = list(read_seed_file(_write(tmp_path, "h.json", [HOTPOT, bad])))
    assert not isinstance(items[0], SeedProblem)
    problem = items[1]
    assert isinstance(problem, SeedProblem) and problem.record == 1
    assert (problem.code, problem.reason) == (code, expected)


def test_malformed_musique_support_pointer_is_a_problem(tmp_path: Path) -> None:
    bad = json.loads(json.dumps(MUSIQUE))
    bad["question_decomposition"][1]["paragraph_support_idx"] = 9
    (problem,) = read_seed_file(_write(tmp_path, "m.jsonl", [bad]))
    assert isinstance(problem, SeedProblem) and problem.record_id == "m1"
    assert problem.code == "dangling_reference"
    assert problem.reason == "field `question_decomposition[1].paragraph_support_idx`: paragraph 9 does not exist"


def test_unreadable_inputs_are_one_line_errors(tmp_path: Path) -> None:
    broken = tmp_path / "broken.jsonl"
    broken.write_text('{"id": 1}\n{not json\n', encoding="utf-8")
    with pytest.raises(InputError, match=r"broken.jsonl:2: not JSON"):
        list(read_seed_file(broken))
    with pytest.raises(InputError, match="does not exist"):
        seed_files([tmp_path / "missing.json"])


def test_split_sentences_keeps_abbreviation_free_text_whole() -> None:
    assert split_sentences("One sentence. Two here! 3 more? done.") == ("One sentence.", "Two here!", "3 more? done.")


def test_the_generator_rejects_seeds_with_a_code_and_the_values_as_detail(tmp_path: Path) -> None:
    from synth.core.steps import ShardContext
    from synth.generators.toolforge.generator import ToolForgeGenerator

    unsupported = json.loads(json.dumps(HOTPOT)) | {"_id": "h2", "answer": "Shelbyville"}
    missing = {k: v for k, v in HOTPOT.items() if k != "question"} | {"_id": "h3"}
    path = _write(tmp_path, "h.json", [unsupported, missing])
    generator = ToolForgeGenerator(name="t", seeds=(str(path),), variants_per_family=0)
    ctx = ShardContext(seed=0, shard_index=0, num_shards=1, config_hash="x")
    rejections = [r for batch in generator.generate(ctx) for r in batch.rejections]
    assert [(r.reason, r.detail) for r in rejections] == [
        ("seed:answer_unsupported", "answer 'Shelbyville' is stated in none of its 2 supporting sentences"),
        ("seed:missing_field", "h.json record 1 (h3): field `question`: missing"),
    ]
