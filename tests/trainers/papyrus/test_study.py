"""The whole study on a small corpus: every model family, every artefact, and figures that hang together."""

import json

import numpy as np
import pytest

pytest.importorskip("sklearn")
pytest.importorskip("matplotlib")

from synth.pipelines.papyrus_study import StudySettings, run_study
from synth.trainers.papyrus.bootstrap import (
    Predictions,
    align,
    interval,
    resample_weights,
    threshold_samples,
    weighted_metric,
)

TOY = {
    "tfidf": {"ngram_max": 3, "max_features": 5000},
    "fasttext": {"epoch": 2, "dim": 10},
    "charcnn": {"epochs": 1, "filters": 8, "embedding_dim": 8, "max_chars": 64, "threads": 1},
    "bytes": {"epochs": 1, "layers": 1, "d_model": 16, "heads": 2, "ff_dim": 16, "max_bytes": 64, "threads": 1},
}


def available_models() -> tuple[str, ...]:
    import importlib.util

    needs = {"tfidf": "sklearn", "fasttext": "fasttext", "charcnn": "torch", "bytes": "torch"}
    return tuple(model for model, module in needs.items() if importlib.util.find_spec(module) is not None)


@pytest.fixture(scope="module")
def quick_study(tmp_path_factory):
    """The default suite's version: one task, one level, every family at toy sizes, exact search only."""
    out = tmp_path_factory.mktemp("quick-study")
    settings = StudySettings(
        shards=1,
        sources=("epidoc",),
        levels=(0.2,),
        tasks=("literary",),
        models=available_models(),
        retrain_levels=(0.2,),
        search_methods=("exact",),
        queries=5,
        damage_task="literary",
        damage_levels=(0.2,),
        resamples=100,
        workers=1,
        params=TOY,
    )
    return out, run_study(settings, out)


@pytest.fixture(scope="module")
def study(tmp_path_factory):
    out = tmp_path_factory.mktemp("study")
    settings = StudySettings(
        shards=1,
        sources=("epidoc",),
        levels=(0.05, 0.2),
        tasks=("doctype", "literary"),
        models=available_models(),
        retrain_levels=(0.2,),
        search_methods=("exact", "fuzzy"),
        queries=10,
        damage_levels=(0.2,),
        resamples=200,
        workers=2,
        params=TOY,
    )
    return out, run_study(settings, out)


def test_quick_study_runs_every_family_with_intervals(quick_study):
    out, report = quick_study
    rows = {row["model"]: row for row in report["summary"] if row["task"] == "literary"}
    assert set(rows) == set(available_models()) and rows["tfidf"]["measurable"]
    for row in rows.values():
        assert row["threshold_interval"] is not None and row["threshold_retrained"]["0.2"]["interval"] is not None
    assert json.loads((out / "study.json").read_text())["findings"] == json.loads(json.dumps(report["findings"]))
    assert "| literary | TF-IDF + LR |" in (out / "tables.md").read_text()


@pytest.mark.slow
def test_study_writes_tables_plots_and_json_with_thresholds(study):
    out, report = study
    saved = json.loads((out / "study.json").read_text())
    assert saved["summary"] == json.loads(json.dumps(report["summary"]))
    rows = {(row["task"], row["model"]): row for row in report["summary"]}
    assert rows[("doctype", "tfidf")]["measurable"] and rows[("doctype", "tfidf")]["paper_threshold"] == 0.075
    assert rows[("literary", "tfidf")]["measurable"]  # the enlarged DCLP sample puts literary texts in test
    doctype = report["tasks"]["doctype"]["tfidf"]
    assert [e["cer"] for e in doctype["clean"]["results"]] == [0.05, 0.2]
    assert "retention_vs_clean_model" in doctype["retrained"]["0.2"]["results"][0]
    fuzzy = report["search"]["methods"]["fuzzy"]
    assert fuzzy["tuned"]["parameter"] == "alpha" and report["search"]["methods"]["exact"]["tuned"] is None
    assert fuzzy["f1"]["0"] > 0 and set(fuzzy["f1"]) == {"0", "0.05", "0.2"}
    damage = report["damage"]["models"]["tfidf"]
    assert report["damage"]["measurable"] and {r["variant"] for r in damage["rows"] if "variant" in r} == {
        "uniform",
        "burst",
    }
    tables = (out / "tables.md").read_text()
    assert "| doctype | TF-IDF + LR |" in tables and "in place of ByT5-small" in tables
    assert "The paper's findings here" in tables and len(report["findings"]) == 5
    assert (out / "plots" / "doctype-tfidf.png").stat().st_size > 1000
    assert (out / "plots" / "search.png").is_file()
    assert (out / "models" / "doctype-tfidf-clean" / "metrics.json").is_file()


@pytest.mark.slow
def test_every_model_family_runs_and_every_threshold_has_an_interval(study):
    _, report = study
    for row in report["summary"]:
        if row["task"] in ("doctype", "literary") and row["measurable"]:
            low, high = row["threshold_interval"]
            assert 0 <= low <= high <= 0.2
            assert row["clean_metric_interval"][0] <= row["clean_metric"] <= row["clean_metric_interval"][1]
            assert row["threshold_retrained"]["0.2"]["interval"] is not None
            assert row["threshold_retrained"]["0.2"]["effect_interval"] is not None
    assert {model for (_, model) in [(r["task"], r["model"]) for r in report["summary"]]} >= set(available_models())
    assert report["search"]["methods"]["exact"]["intervals"]["threshold"] is not None


@pytest.mark.slow
def test_families_trained_in_worker_processes_match_an_in_process_run(study, tmp_path):
    from synth.pipelines.papyrus_study import classify
    from synth.trainers.papyrus.data import read_papyrus_dataset

    out, report = study
    settings = StudySettings(**{**report["settings"], "workers": 1})
    frame = read_papyrus_dataset(out / "dataset")
    for model in ("tfidf", "charcnn"):
        here = classify(frame, settings, task="doctype", model=model, out=tmp_path)
        assert here["clean"]["results"] == report["tasks"]["doctype"][model]["clean"]["results"]


def test_weighted_macro_f1_matches_scikit_learn_on_resamples():
    from sklearn.metrics import f1_score

    rng = np.random.default_rng(0)
    true, pred = rng.integers(0, 4, 40), rng.integers(0, 4, 40)
    present = rng.random(40) > 0.2
    weights = resample_weights(40, resamples=5, seed=1)
    values = weighted_metric(Predictions(present, true, pred), weights, classes=4)
    for row, value in zip(weights, values, strict=True):
        expanded = np.repeat(np.arange(40), row.astype(int))
        expanded = expanded[present[expanded]]
        assert value == pytest.approx(f1_score(true[expanded], pred[expanded], average="macro", zero_division=0))
    assert np.array_equal(resample_weights(40, resamples=5, seed=1), weights)
    assert not np.array_equal(resample_weights(40, resamples=5, seed=1, salt="other"), weights)


def test_mae_alignment_thresholds_and_intervals():
    aligned = align(["a", "b", "c"], ["c", "a"], [100, -50], [110, -40], None)
    assert aligned.present.tolist() == [True, False, True]
    mae = weighted_metric(aligned, np.array([[1.0, 1.0, 1.0], [0.0, 3.0, 0.0]]), classes=None)
    assert mae[0] == pytest.approx(10.0) and np.isnan(mae[1])
    retention = {0.05: np.array([0.95, 0.8, np.nan]), 0.1: np.array([0.91, 0.99, 1.0])}
    assert threshold_samples(retention, 0.9).tolist() == [0.1, 0.0, 0.0]
    assert interval(np.array([0.0, 0.05, 0.05, 0.1, np.nan])) == [0.0, 0.1]
