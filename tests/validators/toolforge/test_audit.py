"""The audit: before (ToolForge's checks) vs after (all layers), the negatives table, generated rows."""

from __future__ import annotations

import numpy as np
import pyarrow as pa
import pytest
from toolforge_rows import clean_row, fixture_rows, wrong_arguments_row

from synth.validators.toolforge.audit import NEGATIVES_SCHEMA, mine_all, negatives_table, run_audit
from synth.validators.toolforge.corruptions import apply_action
from synth.validators.toolforge.mcts import MinedNegative
from synth.validators.toolforge.records import TOOLFORGE_SCHEMA
from synth.validators.toolforge.verifiers import LAYERS, TOOLFORGE_BASELINE_LAYERS, build_verifiers, validate_row


def test_audit_before_and_after() -> None:
    rows = fixture_rows()
    before = run_audit(rows, layers=TOOLFORGE_BASELINE_LAYERS, iterations=15, seed=0, random_per_row=10)
    after = run_audit(rows, layers=LAYERS, iterations=15, seed=0, random_per_row=10)
    assert before["false_reject_rate"] == after["false_reject_rate"] == 0.0
    assert before["mined"]["recall"] < 1.0 and before["operators_missed"]
    assert {"reasoning_other_tool", "ungrounded_argument"} & set(before["operators_missed"])
    assert after["random"]["recall"] == after["mined"]["recall"] == 1.0
    assert after["operators_missed"] == []
    assert set(after["layer_detection"]) == set(LAYERS)
    assert before["random"]["negatives"] == after["random"]["negatives"] > 0


def test_negatives_table_is_a_preference_dataset() -> None:
    row = wrong_arguments_row()
    mined = mine_all([row], layers=TOOLFORGE_BASELINE_LAYERS, iterations=20, seed=0, top_k=5)
    table = negatives_table(mined)
    assert table.schema == NEGATIVES_SCHEMA and table.num_rows == len(mined) == 5
    for record, negative in zip(table.to_pylist(), mined, strict=True):
        assert record["prompt"][:2] == row["messages"][:2]
        assert record["prompt"] + record["chosen"] == row["messages"]
        assert record["prompt"] + record["rejected"] == list(negative.row["messages"])
        assert record["chosen"] != record["rejected"]
        assert record["operators"] == list(negative.operators)
        assert record["parent_id"].startswith("fx-1:")


def test_a_corrupted_user_turn_leaves_only_the_question_as_prompt() -> None:
    row = clean_row()
    action = ("swap_adjacent", (1,))
    corrupted = apply_action(row, action, np.random.default_rng(0))
    record = negatives_table([MinedNegative(row, corrupted, (action,), validate_row(corrupted))]).to_pylist()[0]
    assert [m["content"] for m in record["prompt"]] == [row["question"]]
    assert record["chosen"] == row["messages"] and record["rejected"] == corrupted["messages"]
    assert "structure" in record["layers_failed"]


def test_layer_verifiers_declare_reads_and_agree_with_validate_row() -> None:
    rows = [*fixture_rows(), clean_row()]
    rows[2]["messages"][-1]["content"] = "Mira Castellan"
    table = pa.Table.from_pylist(rows, schema=TOOLFORGE_SCHEMA)
    for layer, verifier in build_verifiers().items():
        assert set(verifier.reads) <= set(TOOLFORGE_SCHEMA.names)
        verdicts = verifier.verify(table)
        expected = [not validate_row(row, [layer])[layer] for row in rows]
        assert [v.passed for v in verdicts] == expected
        assert set(verdicts[0].scores) == set(verifier.scores)
    assert [v.passed for v in build_verifiers()["answer"].verify(table)] == [True, True, False]
    with pytest.raises(ValueError, match="layers"):
        validate_row(rows[0], ["nonsense"])


@pytest.mark.parametrize(("writer", "limit"), [("scripted", 8), ("llm", 3)])
def test_generated_dialogues_pass(writer: str, limit: int) -> None:
    generator = pytest.importorskip("synth.generators.toolforge.generator")
    from synth.core.steps import ShardContext

    step = generator.ToolForgeGenerator(name="toolforge", limit=limit, writer=writer)
    ctx = ShardContext(seed=0, shard_index=0, num_shards=1, config_hash="test")
    rows = [row for batch in step.generate(ctx) for row in batch.rows]
    assert rows
    rejected = {row["case"]: validate_row(row) for row in rows if any(validate_row(row).values())}
    assert len(rejected) <= 0.05 * len(rows), rejected
    table = pa.Table.from_pylist(rows, schema=TOOLFORGE_SCHEMA)
    judged = build_verifiers("scripted-llm")["judge"].verify(table)
    assert sum(not v.passed for v in judged) == sum(bool(r["judge"]) for r in map(validate_row, rows))
    if writer == "scripted":
        audit = run_audit(rows[:2], layers=LAYERS, iterations=10, seed=0, random_per_row=5)
        assert audit["random"]["recall"] == 1.0
