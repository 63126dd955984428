"""ToolForge end to end: `synth generate toolforge` on real seeds plus malformed records, validated, carded,
loadable, verifiable and byte-identical on rerun."""

from __future__ import annotations

import hashlib
import json
from pathlib import Path

import pyarrow.parquet as pq
import pytest
from typer.testing import CliRunner

from synth.cli.app import app
from synth.generators.toolforge.seeds import shipped_seed_dir

runner = CliRunner()


def invoke(*args: object):
    return runner.invoke(app, [str(a) for a in args])


def _seed_folder(root: Path) -> Path:
    folder = root / "seeds"
    folder.mkdir()
    hotpot = json.loads((shipped_seed_dir() / "hotpotqa_dev_sample.json").read_text(encoding="utf-8"))[:14]
    broken = json.loads(json.dumps(hotpot[0]))
    broken["supporting_facts"][0][1] = 99
    missing = {k: v for k, v in hotpot[1].items() if k != "answer"}
    (folder / "hotpot.json").write_text(json.dumps([*hotpot, broken, missing]), encoding="utf-8")
    lines = (shipped_seed_dir() / "musique_dev_sample.jsonl").read_text(encoding="utf-8").splitlines()[:12]
    (folder / "musique.jsonl").write_text("\n".join(lines) + "\n", encoding="utf-8")
    return folder


def _generate(seeds: Path, out: Path):
    return invoke(
        "generate",
        "toolforge",
        "--input",
        seeds,
        "--out",
        out,
        "--seed",
        5,
        "--shards",
        2,
        "--set",
        "generator.dialogues_per_seed=3",
        "--no-progress",
    )


@pytest.fixture(scope="module")
def dataset(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, Path]:
    root = tmp_path_factory.mktemp("toolforge")
    seeds = _seed_folder(root)
    result = _generate(seeds, root / "out")
    assert result.exit_code == 0, result.output
    return seeds, root / "out"


def test_dialogues_cover_paradigms_modes_and_reflection_cases(dataset: tuple[Path, Path]) -> None:
    _, out = dataset
    manifest = json.loads((out / "manifest.json").read_text())
    categories = manifest["totals"]["categories"]
    assert set(categories["paradigm"]) == {"single", "parallel", "multi_hop", "multi_turn"}
    assert set(categories["retrieval_modes"]) == {"successful", "misleading"}
    assert {"clean", "wrong_tool", "wrong_arguments", "misleading"} <= set(categories["case_kind"])
    card = (out / "README.md").read_text()
    assert "## Counts by category (kept rows)" in card and "| multi_turn |" in card
    rows = pq.read_table(out / "data").to_pylist()
    assert len(rows) == sum(categories["paradigm"].values())
    for row in rows:
        assert row["messages"][0]["role"] == "system" and row["messages"][-1]["content"] == row["answer"]
        assert row["provenance"]["parent_ids"] == [f"{row['seed_source']}:{row['seed_id']}"]


def test_valid_dialogues_are_accepted_and_malformed_seeds_rejected_with_reasons(dataset: tuple[Path, Path]) -> None:
    _, out = dataset
    totals = json.loads((out / "manifest.json").read_text())["totals"]
    generated = totals["generated"]
    assert totals["rows"] >= 0.98 * generated
    assert totals["rejected"]["seed:dangling_reference"] == 1 and totals["rejected"]["seed:missing_field"] == 1
    assert all(" " not in code and "record" not in code for code in totals["rejected"])  # codes, not row values
    rejected = pq.read_table(out / "rejected").to_pylist()
    details = {r["filter_reason"]: r["filter_detail"] for r in rejected if r["filter_reason"].startswith("seed:")}
    assert details["seed:dangling_reference"] == (
        "hotpot.json record 14 (5a8b57f25542995d1e6f1371): field `supporting_facts[0]`: "
        "sentence 99 of 'Scott Derrickson' does not exist (3 sentences)"
    )
    assert details["seed:missing_field"].endswith("field `answer`: missing")
    assert "hotpot.json record 15 (" in details["seed:missing_field"]


def test_loads_with_datasets_and_verifies(dataset: tuple[Path, Path]) -> None:
    datasets = pytest.importorskip("datasets")
    _, out = dataset
    kept = datasets.load_dataset(str(out))["train"]
    assert kept.num_rows == pq.read_table(out / "data").num_rows
    calls = [c for m in kept[0]["messages"] for c in m["tool_calls"]]
    assert calls and all(json.loads(c["function"]["arguments"]) for c in calls)
    verified = invoke("verify", out, "--json")
    assert verified.exit_code == 0, verified.output


def test_datasets_cache_follows_the_data_not_the_folder_name(dataset: tuple[Path, Path], tmp_path: Path) -> None:
    datasets = pytest.importorskip("datasets")
    seeds, out = dataset
    other = tmp_path / "out"  # same folder name as the fixture's dataset, other seed: other rows
    result = invoke("generate", "toolforge", "--input", seeds, "--out", other, "--seed", 6, "--no-progress")
    assert result.exit_code == 0, result.output
    first = set(datasets.load_dataset(str(out))["train"]["id"])
    second = set(datasets.load_dataset(str(other))["train"]["id"])
    assert second == set(pq.read_table(other / "data").column("id").to_pylist()) and first != second


def test_same_seed_gives_byte_identical_shards(dataset: tuple[Path, Path], tmp_path: Path) -> None:
    seeds, out = dataset
    again = tmp_path / "again"
    assert _generate(seeds, again).exit_code == 0

    def digests(root: Path) -> dict[str, str]:
        return {p.name: hashlib.sha256(p.read_bytes()).hexdigest() for p in sorted((root / "data").glob("*.parquet"))}

    assert digests(out) == digests(again)


def test_bad_config_value_is_a_one_line_error(tmp_path: Path) -> None:
    result = invoke("generate", "toolforge", "--out", tmp_path / "x", "--set", "generator.case_weights={oops: 1}")
    assert result.exit_code == 2
    assert "unknown case(s) ['oops']" in result.output


def test_user_tools_join_the_space_and_are_called(tmp_path: Path) -> None:
    tools = tmp_path / "tools.yaml"
    tools.write_text(
        """
music_information:
  keywords: [song, album, band, singer, single, rapper, musician, records, recorded, released, chart,
             billboard, label, studio, track, singles]
  tools:
    - name: music_catalogue_search
      description: Search a music catalogue for songs, albums, bands and singers, with release years and labels.
      parameters:
        type: object
        properties:
          query: {type: string, description: What to look up.}
          artist: {type: string, description: The band or singer.}
        required: [query]
""",
        encoding="utf-8",
    )
    out = tmp_path / "out"
    result = invoke(
        "generate",
        "toolforge",
        "--out",
        out,
        "--set",
        f"generator.user_tools={tools}",
        "--set",
        "generator.limit=40",
        "--no-progress",
    )
    assert result.exit_code == 0, result.output
    rows = pq.read_table(out / "data").to_pylist()
    called = [row for row in rows if any(c["family"] == "music_information" for c in row["gold_tools"])]
    assert called, "no passage routed to the user family"
    for row in called:
        names = {json.loads(t)["function"]["name"] for t in row["tools"]}
        assert "music_catalogue_search" in names or any(g["name"] in names for g in row["gold_tools"])


def test_a_malformed_user_tool_file_is_a_one_line_error(tmp_path: Path) -> None:
    tools = tmp_path / "tools.json"
    tools.write_text(json.dumps({"music_information": {"keywords": ["song"], "tools": [{"name": "x"}]}}))
    out = tmp_path / "out"
    result = invoke("generate", "toolforge", "--out", out, "--set", f"generator.user_tools={tools}", "--no-progress")
    assert result.exit_code == 2
    (line,) = result.output.strip().splitlines()
    assert str(tools) in line and "`description`" in line
    assert not out.exists()  # refused before anything is written


def test_audit_writes_a_loadable_preference_dataset_of_mined_negatives(
    dataset: tuple[Path, Path], tmp_path: Path
) -> None:
    datasets = pytest.importorskip("datasets")
    _, out = dataset
    negatives = tmp_path / "negatives"
    result = invoke("toolforge", "audit", out, "--out", negatives, "--rows", 3, "--iterations", 8, "--seed", 1)
    assert result.exit_code == 0, result.output
    report = json.loads((negatives / "audit.json").read_text())
    assert report["rows"] == 3 and report["mined"]["iterations_per_row"] == 8
    table = datasets.load_dataset(str(negatives))["train"]
    assert table.num_rows == report["mined"]["negatives"] > 0
    for row in table:
        assert row["operators"] and row["chosen"] != row["rejected"]
        assert row["accepted"] or row["layers_failed"]  # every negative is either caught (with layers) or a miss
    again = invoke("toolforge", "audit", out, "--out", negatives, "--rows", 3)
    assert again.exit_code == 3 and "holds a dataset made with another config" in again.output


def test_tools_lists_the_gated_space() -> None:
    result = invoke("toolforge", "tools", "--variants", 1, "--json")
    assert result.exit_code == 0, result.output
    report = json.loads(result.stdout)
    names = [tool["function"]["name"] for tool in report["tools"]]
    assert len(names) == len(set(names)) >= 19 and "person_information_search" in names
    assert set(report["gate"]) >= {"person_information", "general_information"}
