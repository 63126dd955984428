"""An incomplete OUT never loads as a dataset: `load_dataset` refuses it until the run completes."""

import os

import datasets
import pytest

from synth.core.config import parse_config
from synth.core.sink import INCOMPLETE_CARD, INCOMPLETE_PATH, DatasetDir
from synth.pipelines.execution import execute_shard, finalize_run, open_run, run_local


def load(out, *args, cache):
    return datasets.load_dataset(str(out), *args, cache_dir=str(cache))


def assert_refused(out, cache):
    for args in ((), ("rejected",)):
        with pytest.raises(FileNotFoundError, match=INCOMPLETE_PATH):
            load(out, *args, cache=cache)


def interrupted_run(payload, out, *, shards_done):
    """What a run killed after `shards_done` shards leaves behind (no finalize)."""
    with open_run(parse_config(payload), out) as plan:
        for index in plan.pending[:shards_done]:
            plan.records[index] = execute_shard(plan.config_payload, str(out), index, pipeline=plan.pipeline)
            plan.write_manifest()


def test_before_the_first_shard_and_mid_run_load_dataset_says_incomplete(tmp_path, toy_payload):
    out, cache = tmp_path / "out", tmp_path / "cache"
    with open_run(parse_config(toy_payload), out):
        assert (out / "manifest.json").is_file()
        assert_refused(out, cache)  # was: manifest.json loaded as a one-row dataset
    interrupted_run(toy_payload, out, shards_done=2)
    assert len(list((out / "data").glob("*.parquet"))) == 2
    assert_refused(out, cache)  # was: two shards of three loaded as if whole


def test_a_finished_rerun_loads_every_row_with_the_same_card_as_an_uninterrupted_run(tmp_path, toy_payload):
    reference = tmp_path / "reference"
    run_local(parse_config(toy_payload), reference)
    out = tmp_path / "out"
    interrupted_run(toy_payload, out, shards_done=1)
    summary = run_local(parse_config(toy_payload), out)
    assert summary.executed == [1, 2]
    loaded = load(out, cache=tmp_path / "cache")["train"]
    assert loaded.num_rows == summary.manifest["totals"]["rows"]
    rejected = load(out, "rejected", cache=tmp_path / "cache")["train"]
    assert rejected.num_rows == summary.manifest["totals"]["rejected_rows"]
    card = (out / "README.md").read_text(encoding="utf-8")
    assert "INCOMPLETE" not in card
    assert card == (reference / "README.md").read_text(encoding="utf-8")  # the card holds no timings
    with open_run(parse_config(toy_payload), out) as plan:  # a rerun with nothing to do
        finalize_run(plan)
    assert (out / "README.md").read_text(encoding="utf-8") == card


def test_an_interrupted_overwrite_is_refused_then_finishes(tmp_path, toy_payload):
    out, cache = tmp_path / "out", tmp_path / "cache"
    run_local(parse_config(toy_payload), out)
    assert load(out, cache=cache)["train"].num_rows > 0
    other = {**toy_payload, "seed": 8}
    with open_run(parse_config(other), out, overwrite=True):
        assert_refused(out, cache)  # the old rows are not served from the cache either
    replaced = run_local(parse_config(other), out)
    assert load(out, cache=cache)["train"].num_rows == replaced.manifest["totals"]["rows"]


@pytest.mark.parametrize("scenario", ["fresh", "resume", "overwrite"])
def test_at_every_rename_a_manifest_has_a_card_and_a_real_card_has_every_shard(
    tmp_path, toy_payload, monkeypatch, scenario
):
    out = tmp_path / "out"
    if scenario != "fresh":
        run_local(parse_config(toy_payload), out)
    if scenario == "resume":
        (out / "data" / "train-00001-of-00003.parquet").unlink()
    states = []
    real_replace = os.replace

    def replace(src, dst):
        real_replace(src, dst)
        dataset = DatasetDir(out)
        card = dataset.card_path.read_text(encoding="utf-8") if dataset.card_path.is_file() else None
        manifest = dataset.read_manifest()
        states.append((os.path.basename(dst), card is not None, card == INCOMPLETE_CARD))
        if manifest is not None:
            assert card is not None, f"manifest.json without README.md after writing {dst}"
        if card is not None and card != INCOMPLETE_CARD:
            assert manifest is not None and manifest["status"] == "complete", f"a real card too early ({dst})"
            assert len(list(dataset.data_dir.glob("*.parquet"))) == 3

    monkeypatch.setattr(os, "replace", replace)
    run_local(parse_config(toy_payload), out, overwrite=scenario == "overwrite")
    assert states[0] == ("README.md", True, True)  # the placeholder is the first file written
    assert states[-1] == ("README.md", True, False)  # the real card is the last
