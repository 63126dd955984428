"""The tolerance study as one call: generate the corpus, train and evaluate every task, search, tabulate.

`run_study` writes into OUT:

    dataset/          the Papyrus CER dataset (a normal synth dataset; a rerun resumes it)
    models/           one trained model per (task, model, train CER), reloadable with `synth train papyrus eval`
    study.json        every figure below
    tables.md         per task: metric and retention at each CER, clean-trained and retrained, thresholds
    plots/*.png       retention vs CER per task (clean-trained and retrained), and for keyword search
"""

from __future__ import annotations

import json
import os
import time
from collections.abc import Callable, Mapping
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any

import numpy as np
import polars as pl

from synth.core.config import PipelineConfig, parse_config
from synth.core.sink import write_text_atomic
from synth.generators.papyrus.degrade import DEFAULT_LEVELS
from synth.pipelines.execution import run_local
from synth.trainers.papyrus.bootstrap import (
    align,
    interval,
    resample_weights,
    retention_matrix,
    threshold_samples,
    weighted_metric,
)
from synth.trainers.papyrus.data import read_papyrus_dataset, select_clean_documents, select_texts_at_cer
from synth.trainers.papyrus.evaluate import RETENTION_THRESHOLD, PredictionLog, evaluate_model, train_and_evaluate
from synth.trainers.papyrus.models import load_model
from synth.trainers.papyrus.search import (
    SEARCH_METHODS,
    TUNING_GRIDS,
    SearchCollection,
    evaluate_search,
    relevant_documents,
    sample_queries,
    tune,
)
from synth.trainers.papyrus.tasks import TASKS, get_task, largest_cer_with_retention_ge, restrict_to_classes, retention

# "90 % of the metric retained up to" these CERs with clean-trained models (the paper's abstract).
PAPER_THRESHOLDS: dict[str, float] = {
    "literary": 0.20,
    "doctype": 0.075,
    "subtype": 0.05,
    "search": 0.05,
    "dating": 0.03,
}
LENGTH_BINS: tuple[tuple[str, int, int | None], ...] = (("short", 0, 400), ("medium", 400, 1200), ("long", 1200, None))

StepCallback = Callable[[str], None]

#: The paper's four model families; `bytes` is a small byte-level Transformer trained from scratch in place of
#: ByT5-small (no checkpoint can be downloaded here).
STUDY_MODELS: tuple[str, ...] = ("tfidf", "fasttext", "charcnn", "bytes")
#: The error shapes the study evaluates: uniform for every table, burst for the damage-shape study.
STUDY_VARIANTS: tuple[str, ...] = ("uniform", "burst")
#: Sizes that make every family learn and fit a whole study on 2 shared CPU cores, measured on the clean test
#: split (docs/study/tables.md): sequence caps, batching, and ONE torch thread per worker (on a loaded machine
#: two OpenMP threads made a char-CNN batch 17x slower: 1.40 s vs 0.08 s). The earlier sizes (8 CNN epochs,
#: 4 Transformer epochs over 128 bytes = 64 Greek letters, fastText 10 epochs in file order) left all three
#: at majority-class level (doctype macro-F1 0.05-0.08); fastText now uses its own defaults.
STUDY_PARAMS: dict[str, dict[str, Any]] = {
    "tfidf": {"ngram_max": 4, "max_features": 50_000},
    "fasttext": {},
    "charcnn": {
        "max_chars": 512,
        "max_windows": 2,
        "filters": 64,
        "embedding_dim": 32,
        "dropout": 0.2,
        "epochs": 30,
        "batch_size": 32,
        "learning_rate": 3e-3,
        "threads": 1,
    },
    "bytes": {
        "layers": 2,
        "d_model": 64,
        "heads": 4,
        "ff_dim": 128,
        "max_bytes": 512,
        "downsample": 4,
        "max_windows": 2,
        "epochs": 20,
        "batch_size": 32,
        "learning_rate": 2e-3,
        "threads": 1,
    },
}
#: The retraining effect is measured above this CER (where the paper sees clean-trained models collapse).
RETRAIN_EFFECT_ABOVE = 0.15


@dataclass(frozen=True, kw_only=True)
class StudySettings:
    """What the study generates, trains and measures."""

    seed: int = 0
    shards: int = 4
    input: str | None = None
    sources: tuple[str, ...] | None = None
    levels: tuple[float, ...] = DEFAULT_LEVELS
    variants: tuple[str, ...] = STUDY_VARIANTS
    lost_lines: float = 0.1
    tasks: tuple[str, ...] = TASKS
    models: tuple[str, ...] = STUDY_MODELS
    retrain_levels: tuple[float, ...] = (0.05, 0.20)
    eval_variant: str = "uniform"
    search_methods: tuple[str, ...] = SEARCH_METHODS
    queries: int = 50
    damage_levels: tuple[float, ...] = (0.10, 0.20, 0.30)
    damage_task: str = "doctype"
    resamples: int = 1000
    workers: int = 2
    params: Mapping[str, Any] = field(default_factory=lambda: dict(STUDY_PARAMS))

    def dataset_config(self) -> PipelineConfig:
        """The pipeline config of the study's corpus."""
        generator: dict[str, Any] = {
            "input": self.input,
            "levels": list(self.levels),
            "variants": list(self.variants),
            "lost_lines": self.lost_lines,
        }
        if self.sources is not None:
            generator["sources"] = list(self.sources)
        payload = {"domain": "papyrus", "seed": self.seed, "shards": self.shards, "generator": generator}
        return parse_config(payload, source="synth study papyrus")


def run_study(settings: StudySettings, out: str | Path, *, on_step: StepCallback | None = None) -> dict[str, Any]:
    """Run the whole study into `out` and return its figures (also written as study.json)."""
    out = Path(out)
    say = on_step or (lambda message: None)
    timing: dict[str, float] = {}
    cpu: dict[str, float] = {}
    load_at_start = round(os.getloadavg()[0], 2)
    clock = time.perf_counter()

    def lap(name: str) -> None:
        nonlocal clock
        timing[name] = round(time.perf_counter() - clock, 1)
        clock = time.perf_counter()

    say("generating the corpus")
    run_local(settings.dataset_config(), out / "dataset")
    frame = read_papyrus_dataset(out / "dataset")
    lap("corpus")
    say(f"training {', '.join(settings.models)} on {', '.join(settings.tasks)} ({settings.workers} worker(s))")
    families, search = train_families(frame, settings, out=out, run_search=lambda: search_study(frame, settings))
    tasks: dict[str, Any] = {}
    for model in settings.models:
        for task, result in families[model]["tasks"].items():
            tasks.setdefault(task, {})[model] = result
        timing[f"train+eval {model}"] = families[model]["seconds"]
        cpu[f"train+eval {model}"] = families[model]["cpu_seconds"]
    lap("families and search, in parallel")
    say("damage shape vs document length")
    damage = damage_study(frame, settings, model_dir=out / "models")
    lap("damage")
    timing["total"] = round(sum(v for k, v in timing.items() if k not in families_timing(families)), 1)
    cpu["total"] = round(_cpu_seconds(), 1)
    report = {
        "settings": {k: list(v) if isinstance(v, tuple) else v for k, v in asdict(settings).items()},
        "corpus": corpus_sizes(frame),
        "paper_thresholds": PAPER_THRESHOLDS,
        "retention_threshold": RETENTION_THRESHOLD,
        "tasks": {task: tasks[task] for task in settings.tasks if task in tasks},
        "search": search,
        "damage": damage,
        "timing": timing,
        "cpu_seconds": cpu,
        "workers": settings.workers,
        "load_average_1min_start": load_at_start,
        "load_average_1min": round(os.getloadavg()[0], 2),
    }
    report["summary"] = summarise(report)
    report["findings"] = findings(report)
    from synth.trainers.papyrus.study_report import write_plots, write_tables

    write_tables(report, out / "tables.md")
    write_plots(report, out / "plots")
    _write_json(out / "study.json", report)
    return report


def train_families(
    frame: pl.DataFrame, settings: StudySettings, *, out: Path, run_search: Callable[[], dict[str, Any]]
) -> tuple[dict[str, dict[str, Any]], dict[str, Any]]:
    """Every model family on every task, one family per worker process, with the keyword search run here
    meanwhile. Each family is seeded on its own, so the figures do not depend on `workers`.

    Returns per family `{"tasks": {task: classify(...)}, "seconds", "cpu_seconds"}`, and the search figures.
    """
    # the slowest families first, so the pool's last task is a short one
    order = sorted(settings.models, key=lambda m: -FAMILY_COST.get(m, 0))
    if settings.workers <= 1 or len(order) <= 1:
        families = {m: train_family(frame, settings, model=m, out=out) for m in order}
        return families, run_search()
    import multiprocessing
    from concurrent.futures import ProcessPoolExecutor

    context = multiprocessing.get_context("spawn")  # torch and OpenMP do not survive a fork
    with ProcessPoolExecutor(max_workers=settings.workers, mp_context=context) as pool:
        futures = {m: pool.submit(train_family, frame, settings, model=m, out=out) for m in order}
        search = run_search()
        families = {m: future.result() for m, future in futures.items()}
    return families, search


#: Relative CPU cost of one family in the study (measured), to schedule the slow ones first.
FAMILY_COST: dict[str, int] = {"bytes": 4, "charcnn": 3, "fasttext": 2, "tfidf": 1}


def train_family(frame: pl.DataFrame, settings: StudySettings, *, model: str, out: Path) -> dict[str, Any]:
    """`classify` for every task with one model family, timed (wall and CPU seconds of this process)."""
    started, cpu_started = time.perf_counter(), time.process_time()
    results = {task: classify(frame, settings, task=task, model=model, out=out / "models") for task in settings.tasks}
    return {
        "tasks": results,
        "seconds": round(time.perf_counter() - started, 1),
        "cpu_seconds": round(time.process_time() - cpu_started, 1),
    }


def families_timing(families: Mapping[str, Any]) -> list[str]:
    """The per-family timing keys: they overlap the parallel lap, so the total leaves them out."""
    return [f"train+eval {model}" for model in families]


def _cpu_seconds() -> float:
    """CPU seconds of this process and its finished worker processes."""
    import resource

    own, children = resource.getrusage(resource.RUSAGE_SELF), resource.getrusage(resource.RUSAGE_CHILDREN)
    return own.ru_utime + own.ru_stime + children.ru_utime + children.ru_stime


def classify(frame: pl.DataFrame, settings: StudySettings, *, task: str, model: str, out: Path) -> dict[str, Any]:
    """A clean-trained model and one retrained model per level, each evaluated at every CER, with bootstrap
    intervals over the test documents (`add_intervals`)."""
    common = {
        "task": task,
        "model": model,
        "eval_cers": list(settings.levels),
        "variant": settings.eval_variant,
        "seed": settings.seed,
        "params": settings.params.get(model),
    }
    started = time.perf_counter()
    clean_log: PredictionLog = {}
    clean = train_and_evaluate(frame, train_cer=0.0, out=out / f"{task}-{model}-clean", predictions=clean_log, **common)
    retrained, logs = {}, {}
    for level in settings.retrain_levels:
        logs[f"{level:g}"] = log = {}
        result = train_and_evaluate(
            frame, train_cer=level, out=out / f"{task}-{model}-cer{level:g}", predictions=log, **common
        )
        retrained[f"{level:g}"] = _versus_clean_model(result, clean)
    if clean["measurable"]:
        add_intervals(clean, retrained, clean_log, logs, resamples=settings.resamples, seed=settings.seed)
    return {"clean": clean, "retrained": retrained, "seconds": round(time.perf_counter() - started, 1)}


def _metric_samples(
    log: PredictionLog, base: list[str], classes: list[str] | None, weights: np.ndarray
) -> dict[float, np.ndarray]:
    """Per CER, the metric of every resample of the base documents."""
    k = len(classes) if classes is not None else None
    return {cer: weighted_metric(align(base, *entry, classes), weights, classes=k) for cer, entry in log.items()}


def add_intervals(
    clean: dict[str, Any],
    retrained: Mapping[str, dict[str, Any]],
    clean_log: PredictionLog,
    logs: Mapping[str, PredictionLog],
    *,
    resamples: int,
    seed: int,
) -> None:
    """Bootstrap the test documents: 95 % intervals of the clean metric, of each CER's metric and of every
    "90 % kept up to" threshold, and the retraining effect above `RETRAIN_EFFECT_ABOVE` (in place)."""
    base = sorted(clean_log[0.0][0])
    higher = clean["higher_is_better"]
    weights = resample_weights(len(base), resamples=resamples, seed=seed, salt=clean["task"])
    clean_samples = _metric_samples(clean_log, base, clean["classes"], weights)
    reference = clean_samples[0.0]
    levels = [entry["cer"] for entry in clean["results"]]
    kept = {c: retention_matrix(clean_samples[c], reference, higher_is_better=higher) for c in levels}
    clean["intervals"] = {
        "resamples": resamples,
        "documents": len(base),
        "clean_metric": interval(reference),
        "metric": {f"{c:g}": interval(clean_samples[c]) for c in levels},
        "threshold": interval(threshold_samples(kept, RETENTION_THRESHOLD)),
    }
    high = [c for c in levels if c > RETRAIN_EFFECT_ABOVE]
    for level, result in retrained.items():
        if not result["measurable"]:
            continue
        samples = _metric_samples(logs[level], base, clean["classes"], weights)
        versus = {c: retention_matrix(samples[c], reference, higher_is_better=higher) for c in levels}
        gain = np.mean([versus[c] - kept[c] for c in high], axis=0) if high else np.full(resamples, np.nan)
        points = {e["cer"]: e for e in [result["clean"], *result["results"]]}
        clean_points = {e["cer"]: e for e in clean["results"]}
        point_gain = [
            points[c]["retention_vs_clean_model"] - clean_points[c]["retention"]
            for c in high
            if points[c].get("retention_vs_clean_model") is not None and clean_points[c].get("retention") is not None
        ]
        result["intervals"] = {
            "metric": {f"{c:g}": interval(samples[c]) for c in levels},
            "threshold_vs_clean_model": interval(threshold_samples(versus, RETENTION_THRESHOLD)),
        }
        result["retrain_effect"] = {
            "above_cer": RETRAIN_EFFECT_ABOVE,
            "cers": high,
            "mean_retention_gain": float(np.mean(point_gain)) if point_gain else None,
            "interval": interval(gain),
        }


def _versus_clean_model(result: dict[str, Any], clean: dict[str, Any]) -> dict[str, Any]:
    """Add retention against the clean-trained model's clean metric (the paper's reference point)."""
    if not (result["measurable"] and clean["measurable"]):
        return result
    reference = clean["clean"][clean["metric"]]
    by_cer = {}
    for entry in [result["clean"], *result["results"]]:
        value = entry.get(result["metric"])
        entry["retention_vs_clean_model"] = (
            None if value is None else retention(value, reference, higher_is_better=result["higher_is_better"])
        )
        by_cer[entry["cer"]] = entry["retention_vs_clean_model"]
    result["tolerance"]["largest_cer_vs_clean_model"] = largest_cer_with_retention_ge(by_cer, RETENTION_THRESHOLD)
    return result


def search_study(frame: pl.DataFrame, settings: StudySettings) -> dict[str, Any]:
    """Keyword search over every document: queries and truth from clean text, parameters tuned on clean dev."""
    clean_all = _texts(pl.concat([select_clean_documents(frame, split=s) for s in ("train", "validation", "test")]))
    dev = _texts(select_clean_documents(frame, split="validation"))
    queries = sample_queries(clean_all, seed=settings.seed, n=settings.queries)
    relevant = {query: relevant_documents(query, clean_all) for query in queries}
    dev_queries = [q for q in queries if relevant_documents(q, dev)] or queries
    collections = {
        cer: SearchCollection(_noisy_documents(frame, cer=cer, variant=settings.eval_variant))
        for cer in (0.0, *settings.levels)
    }
    methods: dict[str, Any] = {}
    weights = resample_weights(len(queries), resamples=settings.resamples, seed=settings.seed, salt="search")
    for method in settings.search_methods:
        tuned = tune(method, dev_queries, dev) if method in TUNING_GRIDS else None
        params = tuned.params if tuned is not None else {}
        scores = {cer: evaluate_search(method, queries, docs, relevant, **params) for cer, docs in collections.items()}
        by_cer = {cer: result.f1 for cer, result in scores.items()}
        clean_f1 = by_cer[0.0]
        retained = {c: retention(f1, clean_f1) if clean_f1 else None for c, f1 in by_cer.items()}
        # bootstrap over queries: macro-F1 of each resampled query multiset
        samples = {c: weights @ np.array([q.f1 for q in r.queries]) / len(queries) for c, r in scores.items()}
        kept = {c: retention_matrix(v, samples[0.0], higher_is_better=True) for c, v in samples.items() if c > 0}
        methods[method] = {
            "tuned": tuned.to_dict() if tuned is not None else None,
            "f1": {f"{c:g}": f1 for c, f1 in by_cer.items()},
            "retention": {f"{c:g}": r for c, r in retained.items()},
            "largest_cer": largest_cer_with_retention_ge(
                {c: r for c, r in retained.items() if c > 0}, RETENTION_THRESHOLD
            ),
            "intervals": {
                "resamples": settings.resamples,
                "over": "queries",
                "clean_f1": interval(samples[0.0]),
                "threshold": interval(threshold_samples(kept, RETENTION_THRESHOLD)),
            },
        }
    return {"queries": queries, "documents": len(clean_all), "methods": methods}


def damage_study(frame: pl.DataFrame, settings: StudySettings, *, model_dir: Path) -> dict[str, Any]:
    """Burst vs uniform damage per document-length bin, with every clean-trained model of `damage_task`.

    Each row has a bootstrap interval of its retention (over that bin's test documents); `contrast` compares
    concentrated damage in long documents with spread errors in short ones (retention of long x burst minus
    short x uniform, with an interval from independent resamples of the two bins).
    """
    task = settings.damage_task
    variants = [v for v in ("uniform", "burst") if v in settings.variants]
    if len(variants) < 2:
        return {"measurable": False, "reason": "needs the uniform and burst variants"}
    spec = get_task(task)
    by_model = {}
    for model in settings.models:
        root = model_dir / f"{task}-{model}-clean"
        if (root / "model.json").is_file():
            by_model[model] = _damage_rows(frame, settings, spec, root, variants)
    if not by_model:
        return {"measurable": False, "reason": f"needs a clean-trained {task} model"}
    return {"measurable": True, "task": task, "metric": spec.metric, "models": by_model}


def _damage_rows(
    frame: pl.DataFrame, settings: StudySettings, spec: Any, root: Path, variants: list[str]
) -> dict[str, Any]:
    training = json.loads((root / "training.json").read_text(encoding="utf-8"))
    fitted = load_model(root)
    levels = [c for c in settings.damage_levels if c in settings.levels]
    rows, samples = [], {}
    for name, low, high in LENGTH_BINS:
        length = pl.col("text_clean").str.len_chars()
        in_bin = length >= low if high is None else length.is_between(low, high, closed="left")
        subset = frame.filter(in_bin)
        test_docs = restrict_to_classes(select_clean_documents(subset, split="test"), spec.name, training["classes"])
        if test_docs.height < 2:
            rows.append({"length": name, "documents": test_docs.height, "measurable": False})
            continue
        base = sorted(test_docs.get_column("doc_id").to_list())
        weights = resample_weights(len(base), resamples=settings.resamples, seed=settings.seed, salt=f"damage|{name}")
        for variant in variants:
            log: PredictionLog = {}
            entries = evaluate_model(
                fitted, subset, spec=spec, classes=training["classes"], cers=levels, variant=variant, log=log
            )
            metric = _metric_samples(log, base, training["classes"], weights)
            clean_metric = entries[0].get(spec.metric)
            for entry in entries[1:]:
                value = entry.get(spec.metric)
                kept = retention_matrix(metric[entry["cer"]], metric[0.0], higher_is_better=spec.higher_is_better)
                samples[(name, variant, entry["cer"])] = kept
                rows.append(
                    {
                        "length": name,
                        "variant": variant,
                        "cer": entry["cer"],
                        "documents": entry["documents"],
                        spec.metric: value,
                        "retention": None
                        if value is None or not clean_metric
                        else retention(value, clean_metric, higher_is_better=spec.higher_is_better),
                        "retention_interval": interval(kept),
                    }
                )
    point = {(r["length"], r.get("variant"), r.get("cer")): r.get("retention") for r in rows}
    contrast = []
    for cer in levels:
        long_burst, short_uniform = ("long", "burst", cer), ("short", "uniform", cer)
        if long_burst in samples and short_uniform in samples:
            a, b = point[long_burst], point[short_uniform]
            contrast.append(
                {
                    "cer": cer,
                    "long_burst_minus_short_uniform": None if a is None or b is None else a - b,
                    "interval": interval(samples[long_burst] - samples[short_uniform]),
                }
            )
    return {"rows": rows, "contrast": contrast}


def corpus_sizes(frame: pl.DataFrame) -> dict[str, Any]:
    """Documents per split, per source and literary flag."""
    docs = frame.unique("doc_id").with_columns(pl.col("doc_id").str.split(":").list.first().alias("source"))
    return {
        "documents": docs.height,
        "rows": frame.height,
        "by_split": dict(docs.group_by("split").len().sort("split").iter_rows()),
        "by_source": dict(docs.group_by("source").len().sort("source").iter_rows()),
        "literary": int(docs.get_column("literary").sum()),
    }


def summarise(report: Mapping[str, Any]) -> list[dict[str, Any]]:
    """One row per task x model (and search): thresholds clean-trained and retrained, each with its bootstrap
    interval, and the retraining effect above 15 % CER, beside the paper's threshold."""
    rows = []
    for task, by_model in report["tasks"].items():
        for model, result in by_model.items():
            clean = result["clean"]
            intervals = clean.get("intervals", {})
            retrained = {
                level: {
                    "threshold": r["tolerance"].get("largest_cer_vs_clean_model"),
                    "interval": r.get("intervals", {}).get("threshold_vs_clean_model"),
                    "effect_above_15": r.get("retrain_effect", {}).get("mean_retention_gain"),
                    "effect_interval": r.get("retrain_effect", {}).get("interval"),
                }
                for level, r in result["retrained"].items()
            }
            rows.append(
                {
                    "task": task,
                    "model": model,
                    "measurable": clean["measurable"],
                    "reason": clean["reason"],
                    "metric": clean["metric"],
                    "clean_metric": clean["clean"][clean["metric"]] if clean["measurable"] else None,
                    "clean_metric_interval": intervals.get("clean_metric"),
                    "threshold_clean_trained": clean["tolerance"]["largest_cer"],
                    "threshold_interval": intervals.get("threshold"),
                    "threshold_retrained": retrained,
                    "paper_threshold": PAPER_THRESHOLDS.get(task),
                    "test_documents": clean["sizes"].get("test", {}).get("labelled"),
                    "seconds": result.get("seconds"),
                }
            )
    methods = report["search"]["methods"]
    usable = [m for m in methods if methods[m]["f1"]["0"] >= 0.9]
    picks = {"search (exact)": "exact"} if "exact" in methods else {}
    if usable:
        picks["search (most tolerant, clean F1 >= 0.9)"] = max(
            usable, key=lambda m: (methods[m]["largest_cer"] or 0.0, methods[m]["f1"]["0"])
        )
    for label, method in picks.items():
        intervals = methods[method].get("intervals", {})
        rows.append(
            {
                "task": label,
                "model": method,
                "measurable": True,
                "reason": None,
                "metric": "macro_f1",
                "clean_metric": methods[method]["f1"]["0"],
                "clean_metric_interval": intervals.get("clean_f1"),
                "threshold_clean_trained": methods[method]["largest_cer"],
                "threshold_interval": intervals.get("threshold"),
                "threshold_retrained": {},
                "paper_threshold": PAPER_THRESHOLDS["search"],
                "test_documents": report["search"]["documents"],
                "seconds": None,
            }
        )
    return rows


def _covers(row: Mapping[str, Any]) -> bool | None:
    """Whether the paper's threshold lies inside the row's bootstrap interval (None when either is missing)."""
    bounds, paper = row.get("threshold_interval"), row.get("paper_threshold")
    if not row["measurable"] or bounds is None or paper is None:
        return None
    return bounds[0] - 1e-9 <= paper <= bounds[1] + 1e-9


def findings(report: Mapping[str, Any]) -> list[dict[str, Any]]:
    """The paper's five findings, each judged on this run's figures: holds (True), fails (False) or open (None).

    1. Tolerance differs by task in the order literary > doctype > subtype >= dating (median clean-trained
       threshold over the model families).
    2. The clean-trained thresholds match the paper's (its figure inside our interval), counted per row.
    3. Retraining on noisy text removes the degradation above 15 % CER (the retraining gain above 15 %, at the
       highest retrain level, has an interval above 0 for most task x model rows).
    4. Concentrated damage in long documents is tolerated better than spread errors in short ones (long x
       burst minus short x uniform retention > 0, interval above 0, at most CERs for most models).
    5. Models trained on noisy text make imperfect recognition useful: a model retrained at c keeps >= 90 % of
       the clean-trained clean metric at CER c, for most rows.
    """
    rows = [r for r in report["summary"] if r["measurable"] and r["task"] in PAPER_THRESHOLDS]
    medians = {}
    for task in ("literary", "doctype", "subtype", "dating"):
        values = [r["threshold_clean_trained"] or 0.0 for r in rows if r["task"] == task]
        if values:
            medians[task] = float(np.median(values))
    order = [medians.get(t) for t in ("literary", "doctype", "subtype", "dating")]
    ordered = None if None in order else order[0] >= order[1] >= order[2] >= order[3] and order[0] > order[3]
    covered = [c for c in (_covers(r) for r in report["summary"]) if c is not None]
    gains, useful = [], []
    for by_model in report["tasks"].values():
        for result in by_model.values():
            if not result["retrained"]:
                continue
            _, top = max(result["retrained"].items(), key=lambda item: float(item[0]))
            bounds = top.get("retrain_effect", {}).get("interval")
            if bounds is not None:
                gains.append(bounds[0] > 0)
            for lvl, r in result["retrained"].items():
                entry = next((e for e in r.get("results", []) if abs(e["cer"] - float(lvl)) < 1e-9), None)
                if entry is not None and entry.get("retention_vs_clean_model") is not None:
                    useful.append(entry["retention_vs_clean_model"] >= RETENTION_THRESHOLD)
    damage = report.get("damage", {})
    contrasts = [
        c["interval"][0] > 0
        for model in damage.get("models", {}).values()
        for c in model["contrast"]
        if c.get("interval") is not None
    ]

    def majority(flags: list[bool]) -> bool | None:
        return None if not flags else sum(flags) > len(flags) / 2

    return [
        {
            "finding": "tolerance differs by task: literary > doctype > subtype >= dating",
            "holds": ordered,
            "evidence": {"median_threshold": medians},
        },
        {
            "finding": "thresholds 20 / 7.5 / 5 / 5 / 3 % (literary, doctype, subtype, search, dating)",
            "holds": majority(covered),
            "evidence": {"rows_with_paper_inside_interval": sum(covered), "rows": len(covered)},
        },
        {
            "finding": "retraining on noisy text removes the sharp degradation above 15 % CER",
            "holds": majority(gains),
            "evidence": {"rows_with_gain_interval_above_0": sum(gains), "rows": len(gains)},
        },
        {
            "finding": "concentrated damage in long documents is tolerated better than spread errors in short texts",
            "holds": majority(contrasts),
            "evidence": {"contrasts_with_interval_above_0": sum(contrasts), "contrasts": len(contrasts)},
        },
        {
            "finding": "a model retrained at CER c keeps >= 90 % of the clean metric at c (noisy training helps)",
            "holds": majority(useful),
            "evidence": {"rows_at_or_above_90_percent": sum(useful), "rows": len(useful)},
        },
    ]


def _texts(docs: pl.DataFrame) -> dict[str, str]:
    return dict(zip(docs.get_column("doc_id").to_list(), docs.get_column("text").to_list(), strict=True))


def _noisy_documents(frame: pl.DataFrame, *, cer: float, variant: str) -> dict[str, str]:
    """One text per document at `cer` (sample 0), over every split."""
    parts = [select_texts_at_cer(frame, split=s, cer=cer, variant=variant) for s in ("train", "validation", "test")]
    rows = pl.concat(parts, how="vertical_relaxed").unique("doc_id", keep="first", maintain_order=True)
    return _texts(rows)


def _write_json(path: Path, value: Any) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    write_text_atomic(path, json.dumps(value, indent=2, ensure_ascii=False, default=str) + "\n")
