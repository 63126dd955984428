"""The whole study on a small corpus: every artefact is written and the figures hang together."""

import json

import pytest

pytest.importorskip("sklearn")
pytest.importorskip("matplotlib")

from synth.pipelines.papyrus_study import StudySettings, run_study


def test_study_writes_tables_plots_and_json_with_thresholds(tmp_path):
    settings = StudySettings(
        shards=1,
        sources=("epidoc",),
        levels=(0.05, 0.2),
        variants=("uniform", "burst"),
        tasks=("doctype", "literary"),
        retrain_levels=(0.05,),
        search_methods=("exact", "fuzzy"),
        queries=10,
        damage_levels=(0.2,),
    )
    report = run_study(settings, tmp_path)
    saved = json.loads((tmp_path / "study.json").read_text())
    assert saved["summary"] == json.loads(json.dumps(report["summary"]))
    rows = {row["task"]: row for row in report["summary"]}
    assert rows["doctype"]["measurable"] and rows["doctype"]["paper_threshold"] == 0.075
    assert rows["literary"]["measurable"] is False and rows["literary"]["reason"]  # 5 literary texts, none in test
    doctype = report["tasks"]["doctype"]["tfidf"]
    assert [e["cer"] for e in doctype["clean"]["results"]] == [0.05, 0.2]
    assert "retention_vs_clean_model" in doctype["retrained"]["0.05"]["results"][0]
    fuzzy = report["search"]["methods"]["fuzzy"]
    assert fuzzy["tuned"]["parameter"] == "alpha" and report["search"]["methods"]["exact"]["tuned"] is None
    assert fuzzy["f1"]["0"] > 0 and set(fuzzy["f1"]) == {"0", "0.05", "0.2"}
    assert report["damage"]["measurable"] and {r["variant"] for r in report["damage"]["rows"] if "variant" in r} == {
        "uniform",
        "burst",
    }
    tables = (tmp_path / "tables.md").read_text()
    assert "| doctype | tfidf |" in tables and "not measurable" in tables
    assert (tmp_path / "plots" / "doctype-tfidf.png").stat().st_size > 1000
    assert (tmp_path / "plots" / "search.png").is_file()
    assert (tmp_path / "models" / "doctype-tfidf-clean" / "metrics.json").is_file()
