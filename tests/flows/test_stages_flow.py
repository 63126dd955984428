"""The Prefect engine runs a multi-stage pipeline as subflows and writes the local engine's bytes."""

import json

import pytest
from stage_helpers import SumStage, three_stages

from synth.core.sink import sha256_file
from synth.pipelines.stage_engine import run_stages_local
from synth.pipelines.stage_kinds import STAGE_KINDS
from synth.pipelines.stages import parse_stages

pytestmark = pytest.mark.prefect


def hashes(root):
    files = [*root.rglob("data/*.parquet"), *root.rglob("rejected/*.parquet"), *root.glob("total/total.json")]
    return {p.relative_to(root).as_posix(): sha256_file(p) for p in sorted(files)}


def test_prefect_stages_match_the_local_engine_and_skip_complete_stages(tmp_path, prefect_server, monkeypatch):
    from synth.flows.stages import run_stages_prefect

    monkeypatch.setitem(STAGE_KINDS, "sum", SumStage())
    data = three_stages()
    local = run_stages_local(parse_stages(data), tmp_path / "local")
    flow = run_stages_prefect(parse_stages(data), data, tmp_path / "prefect")
    assert flow.executed == local.executed == ["evens", "more", "total"]
    assert hashes(tmp_path / "prefect") == hashes(tmp_path / "local") and len(hashes(tmp_path / "local")) == 9
    manifest = json.loads((tmp_path / "prefect" / "total" / "manifest.json").read_text())
    assert manifest["summary"] == json.loads((tmp_path / "local" / "total" / "manifest.json").read_text())["summary"]
    changed = three_stages(scale=3)
    again = run_stages_prefect(parse_stages(changed), changed, tmp_path / "prefect")
    assert again.executed == ["total"] and again.skipped == ["evens", "more"]
