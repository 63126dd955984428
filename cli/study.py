"""`synth study papyrus`: generation → training → evaluation → tables, plots and JSON, in one command."""

from __future__ import annotations

import json
from pathlib import Path

import typer

from synth.cli._common import cli_errors, console, err_console
from synth.core.errors import ConfigError

app = typer.Typer(help="Studies that chain generation, training and evaluation.", no_args_is_help=True)


def _floats(text: str, *, option: str) -> tuple[float, ...]:
    """`"0.05,0.1"` → `(0.05, 0.1)`; a `ConfigError` naming the option and the bad item otherwise."""
    values = []
    for part in (item.strip() for item in text.split(",")):
        if not part:
            continue
        try:
            values.append(float(part))
        except ValueError:
            msg = f"{option}: {part!r} is not a number; expected CER levels such as 0.05,0.1,0.2"
            raise ConfigError(msg) from None
    return tuple(values)


def _names(text: str) -> tuple[str, ...]:
    return tuple(part.strip() for part in text.split(",") if part.strip())


@app.command("papyrus")
@cli_errors
def papyrus_command(
    out: Path = typer.Option(Path("out/study-papyrus"), "--out", "-o", help="Study folder (dataset, models, tables)."),
    seed: int = typer.Option(0, "--seed", help="Seed of the corpus, the models and the query sample."),
    shards: int = typer.Option(4, "--shards", min=1, help="Shards of the generated corpus."),
    input_path: Path | None = typer.Option(None, "--input", help="A papyri.info checkout (default: shipped sample)."),
    sources: str | None = typer.Option(None, "--sources", help="Corpus sources, e.g. epidoc,papygreek (default: all)."),
    tasks: str = typer.Option("literary,doctype,subtype,dating", "--tasks", help="Comma-separated tasks."),
    models: str = typer.Option(
        "tfidf,fasttext,charcnn,bytes",
        "--models",
        help="Comma-separated models: tfidf, fasttext, charcnn, bytes (a byte Transformer in place of ByT5-small).",
    ),
    retrain: str = typer.Option("0.05,0.2", "--retrain", help="CER levels to retrain at (comma-separated)."),
    resamples: int = typer.Option(1000, "--resamples", min=1, help="Bootstrap resamples of the test documents."),
    variant: str = typer.Option("uniform", "--variant", help="Error shape evaluated for the task tables."),
    queries: int = typer.Option(50, "--queries", min=1, help="Keyword-search queries sampled from clean text."),
    search: str = typer.Option(
        "exact,normalised,phonetic,ngram,fuzzy,regex,bm25,embedding", "--search", help="Search methods to compare."
    ),
    workers: int = typer.Option(2, "--workers", min=1, help="Processes training model families in parallel."),
    as_json: bool = typer.Option(False, "--json", help="Print the summary rows as JSON on stdout."),
) -> None:
    """Reproduce the Papyrus CER tolerance study: thresholds per task, clean-trained vs retrained."""
    from synth.pipelines.papyrus_study import StudySettings, run_study
    from synth.trainers.papyrus.search_methods import SEARCH_METHODS
    from synth.trainers.papyrus.study_report import summary_table

    unknown = [name for name in _names(search) if name not in SEARCH_METHODS]
    if unknown:
        msg = f"--search: unknown search method {unknown[0]!r}; choose from {', '.join(SEARCH_METHODS)}"
        raise ConfigError(msg)

    settings = StudySettings(
        seed=seed,
        shards=shards,
        input=str(input_path) if input_path else None,
        sources=_names(sources) if sources else None,
        tasks=_names(tasks),
        models=_names(models),
        retrain_levels=_floats(retrain, option="--retrain"),
        eval_variant=variant,
        queries=queries,
        search_methods=_names(search),
        resamples=resamples,
        workers=workers,
    )
    report = run_study(settings, out, on_step=lambda message: err_console.print(f"[dim]study:[/] {message}"))
    if as_json:
        console.print_json(json.dumps(report["summary"], default=str))
        return
    console.print(summary_table(report))
    console.print(f"wrote {out / 'study.json'}, {out / 'tables.md'} and {out / 'plots'}/")
