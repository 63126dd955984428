"""Render the study's figures: markdown tables and retention-vs-CER plots."""

from __future__ import annotations

import os
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any


def _fmt(value: Any, digits: int = 3) -> str:
    if value is None:
        return "–"
    if isinstance(value, float):
        return f"{value:.{digits}f}"
    return str(value)


def _pct(value: float | None) -> str:
    return "none" if value is None else f"{100 * value:g} %"


def _table(header: Sequence[str], rows: Sequence[Sequence[Any]]) -> str:
    lines = ["| " + " | ".join(header) + " |", "|" + "---|" * len(header)]
    lines += ["| " + " | ".join(_fmt(cell) for cell in row) + " |" for row in rows]
    return "\n".join(lines)


#: How each model family is named in the tables (`bytes` stands in for ByT5-small, whose weights cannot be had).
MODEL_LABELS = {
    "tfidf": "TF-IDF + LR",
    "fasttext": "fastText",
    "charcnn": "char-CNN",
    "bytes": "byte Transformer (from scratch, in place of ByT5-small)",
}


def _pct_interval(value: float | None, bounds: Sequence[float] | None) -> str:
    """`7.5 % [5–10]`: a threshold with its bootstrap interval (0 = below the lowest level)."""
    if bounds is None:
        return _pct(value)
    return f"{_pct(value)} [{100 * bounds[0]:g}–{100 * bounds[1]:g}]"


def _value_interval(value: float | None, bounds: Sequence[float] | None, digits: int = 3) -> str:
    if value is None:
        return "–"
    text = f"{value:.{digits}f}"
    return text if bounds is None else f"{text} [{bounds[0]:.{digits}f}–{bounds[1]:.{digits}f}]"


def _signed_interval(value: float | None, bounds: Sequence[float] | None) -> str:
    if value is None:
        return "–"
    text = f"{value:+.3f}"
    return text if bounds is None else f"{text} [{bounds[0]:+.3f}, {bounds[1]:+.3f}]"


def summary_table(report: Mapping[str, Any]) -> str:
    """Thresholds per task and model with 95 % bootstrap intervals, beside the paper's, with corpus sizes."""
    rows = []
    for row in report["summary"]:
        model = MODEL_LABELS.get(row["model"], row["model"])
        if not row["measurable"]:
            reason = "not measurable: " + (row["reason"] or "")
            rows.append((row["task"], model, row["test_documents"], reason, "", "", "", _pct(row["paper_threshold"])))
            continue
        retrained = "; ".join(
            f"@{level}: {_pct_interval(r['threshold'], r['interval'])}"
            for level, r in row["threshold_retrained"].items()
        )
        effect = "; ".join(
            f"@{level}: {_signed_interval(r['effect_above_15'], r['effect_interval'])}"
            for level, r in row["threshold_retrained"].items()
        )
        rows.append(
            (
                row["task"],
                model,
                row["test_documents"],
                f"{row['metric']} {_value_interval(row['clean_metric'], row.get('clean_metric_interval'))}",
                _pct_interval(row["threshold_clean_trained"], row.get("threshold_interval")),
                retrained or "–",
                effect or "–",
                _pct(row["paper_threshold"]),
            )
        )
    header = (
        "task",
        "model",
        "labelled test docs",
        "clean metric [95 % CI]",
        "90 % kept up to, clean-trained [95 % CI]",
        "retrained at c: 90 % of the clean-trained clean metric kept up to [95 % CI]",
        "retraining gain in retention above 15 % CER [95 % CI]",
        "paper (clean-trained)",
    )
    return _table(header, rows)


def findings_table(report: Mapping[str, Any]) -> str:
    """The paper's five findings and whether they hold on this run."""
    verdict = {True: "holds", False: "does not hold", None: "not measurable"}
    rows = [(f["finding"], verdict[f["holds"]], f["evidence"]) for f in report.get("findings", [])]
    return _table(("paper's finding", "here", "evidence"), rows)


def task_table(result: Mapping[str, Any]) -> str:
    """Metric and retention at every CER for the clean-trained and each retrained model."""
    clean = result["clean"]
    if not clean["measurable"]:
        return f"not measurable: {clean['reason']}"
    metric = clean["metric"]
    retrained = result["retrained"]
    header = ["CER", f"clean-trained {metric}", "retention"]
    for level in retrained:
        header += [f"retrained@{level} {metric}", "retention vs clean model"]
    rows = []
    columns = [clean, *retrained.values()]
    entries = [{e["cer"]: e for e in [r["clean"], *r["results"]]} if r["measurable"] else {} for r in columns]
    for cer in sorted(entries[0]):
        row: list[Any] = [_pct(cer)]
        first = entries[0][cer]
        row += [first.get(metric), first.get("retention")]
        for by_cer in entries[1:]:
            entry = by_cer.get(cer, {})
            row += [entry.get(metric), entry.get("retention_vs_clean_model")]
        rows.append(row)
    return _table(header, rows)


def search_table(search: Mapping[str, Any]) -> str:
    """Macro-F1 per method and CER, and the largest CER keeping 90 % of it."""
    methods = search["methods"]
    if not methods:
        return "no search methods ran"
    cers = list(next(iter(methods.values()))["f1"])
    header = ["method", *[f"F1 @{float(c) * 100:g} %" for c in cers], "90 % kept up to [95 % CI over queries]"]
    rows = [
        (m, *[v["f1"][c] for c in cers], _pct_interval(v["largest_cer"], v.get("intervals", {}).get("threshold")))
        for m, v in methods.items()
    ]
    return _table(header, rows)


def damage_table(damage: Mapping[str, Any]) -> str:
    """Burst vs uniform per document-length bin and model, then the long-burst vs short-uniform contrast."""
    if not damage.get("measurable"):
        return f"not measurable: {damage.get('reason')}"
    metric = damage["metric"]
    rows, contrasts = [], []
    for model, result in damage["models"].items():
        label = MODEL_LABELS.get(model, model)
        for r in result["rows"]:
            retention = _value_interval(r.get("retention"), r.get("retention_interval"))
            rows.append(
                (
                    label,
                    r["length"],
                    r.get("variant", "–"),
                    _pct(r.get("cer")),
                    r["documents"],
                    r.get(metric),
                    retention,
                )
            )
        for c in result["contrast"]:
            contrasts.append(
                (label, _pct(c["cer"]), _signed_interval(c["long_burst_minus_short_uniform"], c["interval"]))
            )
    table = _table(("model", "length", "variant", "CER", "test docs", metric, "retention [95 % CI]"), rows)
    contrast = _table(("model", "CER", "retention: long x burst minus short x uniform [95 % CI]"), contrasts)
    return f"{table}\n\n{contrast}"


def _timing_line(report: Mapping[str, Any]) -> str:
    timing = report.get("timing")
    if not timing:
        return ""
    wall = ", ".join(f"{name} {seconds:.0f} s" for name, seconds in timing.items())
    line = f"Wall time of this run: {wall}"
    cpu = report.get("cpu_seconds")
    if cpu:
        line += "; CPU time: " + ", ".join(f"{name} {seconds:.0f} s" for name, seconds in cpu.items())
    extras = []
    if report.get("workers"):
        extras.append(f"{report['workers']} worker processes (one model family each, search in the parent)")
    if report.get("load_average_1min") is not None:
        start = report.get("load_average_1min_start")
        at = f"{start} at the start, " if start is not None else ""
        extras.append(f"1-minute load average {at}{report['load_average_1min']} at the end, on {os.cpu_count()} cores")
    if extras:
        line += " (" + "; ".join(extras) + ")"
    return line + ".\n"


def write_tables(report: Mapping[str, Any], path: Path) -> None:
    """Write tables.md."""
    corpus = report["corpus"]
    parts = [
        "# Papyrus CER tolerance study\n",
        f"Corpus: {corpus['documents']} documents ({corpus['literary']} literary), splits {corpus['by_split']}, "
        f"sources {corpus['by_source']}. Evaluation variant: {report['settings']['eval_variant']}.\n",
        "## Summary\n",
        "Every threshold is the largest CER up to which the metric keeps 90 % of the clean-trained model's clean "
        "metric; brackets are 95 % percentile intervals from "
        f"{report['settings'].get('resamples', '?')} bootstrap resamples of the test documents (of the queries for "
        "search); 0 means below the lowest level (1 %). The byte Transformer is trained from scratch in place of "
        "ByT5-small: no checkpoint can be downloaded here.\n",
        summary_table(report) + "\n",
        "## The paper's findings here\n",
        findings_table(report) + "\n",
        _timing_line(report),
    ]
    for task, by_model in report["tasks"].items():
        for model, result in by_model.items():
            parts += [f"## {task} ({model})\n", task_table(result) + "\n"]
    parts += ["## Keyword search\n", search_table(report["search"]) + "\n"]
    parts += ["## Damage shape vs document length\n", damage_table(report["damage"]) + "\n"]
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text("\n".join(parts), encoding="utf-8")


def write_plots(report: Mapping[str, Any], folder: Path) -> list[Path]:
    """Retention vs CER per task (clean-trained and retrained) and for search; returns the PNG paths."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    folder.mkdir(parents=True, exist_ok=True)
    written = []
    for task, by_model in report["tasks"].items():
        for model, result in by_model.items():
            if not result["clean"]["measurable"]:
                continue
            fig, ax = plt.subplots(figsize=(6, 4))
            series = [("clean-trained", result["clean"], "retention")]
            series += [(f"retrained@{lvl}", r, "retention_vs_clean_model") for lvl, r in result["retrained"].items()]
            for label, res, key in series:
                if not res["measurable"]:
                    continue
                entries = [res["clean"], *res["results"]]
                ax.plot([100 * e["cer"] for e in entries], [e.get(key) for e in entries], marker="o", label=label)
            _finish(ax, f"{task} ({model}): retention vs CER", report["retention_threshold"])
            written.append(_save(fig, folder / f"{task}-{model}.png"))
    methods = report["search"]["methods"]
    if methods:
        fig, ax = plt.subplots(figsize=(6, 4))
        for method, values in methods.items():
            cers = [float(c) for c in values["retention"]]
            ax.plot([100 * c for c in cers], list(values["retention"].values()), marker=".", label=method)
        _finish(ax, "keyword search: retention of macro-F1 vs CER", report["retention_threshold"])
        written.append(_save(fig, folder / "search.png"))
    return written


def _finish(ax: Any, title: str, threshold: float) -> None:
    ax.axhline(threshold, color="grey", linestyle="--", linewidth=1)
    ax.set_xlabel("CER (%)")
    ax.set_ylabel("retention")
    ax.set_title(title)
    ax.legend(fontsize=7)
    ax.grid(alpha=0.3)


def _save(fig: Any, path: Path) -> Path:
    import matplotlib.pyplot as plt

    fig.tight_layout()
    fig.savefig(path, dpi=110)
    plt.close(fig)
    return path
