"""Render the study's figures: markdown tables and retention-vs-CER plots."""

from __future__ import annotations

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


def summary_table(report: Mapping[str, Any]) -> str:
    """Thresholds per task beside the paper's, honestly labelled with corpus sizes."""
    rows = []
    for row in report["summary"]:
        retrained = ", ".join(f"@{level}: {_pct(value)}" for level, value in row["threshold_retrained"].items())
        if not row["measurable"]:
            reason = "not measurable: " + (row["reason"] or "")
            rows.append((row["task"], row["model"], row["test_documents"], reason, "", "", ""))
            continue
        rows.append(
            (
                row["task"],
                row["model"],
                row["test_documents"],
                f"{row['metric']} {_fmt(row['clean_metric'])}",
                _pct(row["threshold_clean_trained"]),
                retrained or "–",
                _pct(row["paper_threshold"]),
            )
        )
    header = (
        "task",
        "model",
        "labelled test docs",
        "clean metric",
        "90 % kept up to (clean-trained)",
        "retrained at c (vs clean-trained clean metric)",
        "paper",
    )
    return _table(header, rows)


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
    header = ["method", *[f"F1 @{float(c) * 100:g} %" for c in cers], "90 % kept up to"]
    rows = [(m, *[v["f1"][c] for c in cers], _pct(v["largest_cer"])) for m, v in methods.items()]
    return _table(header, rows)


def damage_table(damage: Mapping[str, Any]) -> str:
    """Burst vs uniform per document-length bin."""
    if not damage.get("measurable"):
        return f"not measurable: {damage.get('reason')}"
    metric = damage["metric"]
    rows = [
        (r["length"], r.get("variant", "–"), _pct(r.get("cer")), r["documents"], r.get(metric), r.get("retention"))
        for r in damage["rows"]
    ]
    return _table(("length", "variant", "CER", "test docs", metric, "retention"), rows)


def write_tables(report: Mapping[str, Any], path: Path) -> None:
    """Write tables.md."""
    corpus = report["corpus"]
    parts = [
        "# Papyrus CER tolerance study\n",
        f"Corpus: {corpus['documents']} documents ({corpus['literary']} literary), splits {corpus['by_split']}, "
        f"sources {corpus['by_source']}. Evaluation variant: {report['settings']['eval_variant']}.\n",
        "## Summary\n",
        summary_table(report) + "\n",
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
