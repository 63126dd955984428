"""`synth train papyrus fit|eval`: train a classifier on a Papyrus CER dataset and measure it per CER level.

    synth train papyrus fit DATASET --task literary --model tfidf --train-cer 0 \\
        --eval-cers 0,0.05,0.2 --variant uniform --seed 0 --out models/lit-tfidf
    synth train papyrus eval models/lit-tfidf DATASET          # same figures as the fit run

`fit` writes the model, `training.json`, `metrics.json` and a model card (`README.md`, naming the dataset) to
`--out`; `eval` reloads them and, with the same dataset, levels and variant (its defaults), reproduces
`metrics.json` exactly. `lob` writes `lob_model.json` and a card naming the LOBSTER files it was fit on.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any, Literal

import typer
from rich.table import Table

from synth.cli._common import cli_errors, console, err_console
from synth.core.errors import ConfigError, InputError, OutputDirError

TaskOption = Literal["literary", "doctype", "subtype", "dating"]
ModelOption = Literal["tfidf", "charcnn", "bytes", "fasttext"]
PointerOption = Literal["logit", "attention"]

DATASET_HELP = "Papyrus dataset directory written by `synth run` / `synth generate papyrus`."
TASK_HELP = "literary (macro-F1), doctype / subtype (macro-F1), dating (MAE in years)."
MODEL_HELP = "tfidf: char n-gram TF-IDF + logistic regression/Ridge; charcnn; bytes (byte Transformer); fasttext."
TRAIN_CER_HELP = "CER of the training texts; 0 trains on the clean texts."
EVAL_CERS_HELP = "Comma-separated test CER levels, e.g. 0,0.05,0.2 (each must exist in the dataset)."
VARIANT_HELP = "Error shape of the noisy texts (uniform, confusable, burst, word); default: every variant pooled."
PARAM_HELP = "Model hyper-parameter, e.g. --param epochs=5 (repeatable; value parsed as YAML)."
MIN_CLASS_HELP = "doctype/subtype: drop classes with fewer train documents than this (listed in the result)."
OUT_HELP = "Directory for the model, training.json and metrics.json (nothing is saved without it)."
OVERWRITE_HELP = "Write over a model directory that already holds a trained model."
JSON_HELP = "Print the figures as JSON on stdout instead of a table."

app = typer.Typer(help="Train downstream models on synth datasets and measure them.", no_args_is_help=True)
papyrus_app = typer.Typer(
    help="Papyrus CER tasks: fit a model at one CER and score it on the test split at every level.",
    no_args_is_help=True,
)
app.add_typer(papyrus_app, name="papyrus")


def parse_cers(text: str) -> list[float]:
    """`"0,0.05,0.2"` → `[0.0, 0.05, 0.2]`; a `ConfigError` naming the bad item otherwise."""
    values = []
    for item in (part.strip() for part in text.split(",")):
        if not item:
            continue
        try:
            values.append(float(item))
        except ValueError:
            msg = f"--eval-cers: {item!r} is not a number; expected e.g. 0,0.05,0.2"
            raise ConfigError(msg) from None
    if not values:
        msg = "--eval-cers: no levels given; expected e.g. 0,0.05,0.2"
        raise ConfigError(msg)
    return values


def parse_params(assignments: list[str] | None) -> dict[str, Any]:
    """`["epochs=5", "kernel_sizes=[3, 5]"]` → a mapping with YAML-parsed values."""
    import yaml

    params: dict[str, Any] = {}
    for assignment in assignments or []:
        key, sep, raw = assignment.partition("=")
        if not sep or not key.strip():
            msg = f"--param {assignment!r}: expected KEY=VALUE, e.g. --param epochs=5"
            raise ConfigError(msg)
        params[key.strip()] = yaml.safe_load(raw)
    return params


@papyrus_app.command("fit")
@cli_errors
def fit_command(
    dataset: Path = typer.Argument(..., help=DATASET_HELP),
    task: TaskOption = typer.Option(..., "--task", help=TASK_HELP),
    model: ModelOption = typer.Option("tfidf", "--model", help=MODEL_HELP),
    train_cer: float = typer.Option(0.0, "--train-cer", min=0.0, help=TRAIN_CER_HELP),
    eval_cers: str = typer.Option("0,0.05,0.2", "--eval-cers", help=EVAL_CERS_HELP),
    variant: str | None = typer.Option(None, "--variant", help=VARIANT_HELP),
    seed: int = typer.Option(0, "--seed", help="Seed of the model's initialisation, shuffling and crops."),
    param: list[str] | None = typer.Option(None, "--param", help=PARAM_HELP),
    min_class_count: int = typer.Option(3, "--min-class-count", min=1, help=MIN_CLASS_HELP),
    out: Path | None = typer.Option(None, "--out", "-o", help=OUT_HELP),
    overwrite: bool = typer.Option(False, "--overwrite", help=OVERWRITE_HELP),
    as_json: bool = typer.Option(False, "--json", help=JSON_HELP),
) -> None:
    """Train on the train split at --train-cer and score on the test split at every --eval-cers level."""
    from synth.core.dataset import open_dataset
    from synth.trainers.model_card import write_model_card
    from synth.trainers.papyrus.data import read_papyrus_dataset
    from synth.trainers.papyrus.evaluate import METRICS_FILE, train_and_evaluate

    levels, params = parse_cers(eval_cers), parse_params(param)
    if out is not None and (out / METRICS_FILE).exists() and not overwrite:
        msg = f"{out}: already holds a trained model ({METRICS_FILE}); pass --overwrite or choose another --out"
        raise OutputDirError(msg)
    frame = read_papyrus_dataset(dataset)
    result = train_and_evaluate(
        frame,
        task=task,
        model=model,
        train_cer=train_cer,
        eval_cers=levels,
        variant=variant,
        seed=seed,
        params=params,
        min_class_count=min_class_count,
        out=out,
    )
    if out is not None:
        settings = {
            "task": task,
            "model": model,
            "train_cer": train_cer,
            "eval_cers": levels,
            "variant": variant,
            "seed": seed,
            "params": params,
            "min_class_count": min_class_count,
        }
        write_model_card(out, trainer="papyrus", dataset=open_dataset(dataset), settings=settings, metrics=result)
    show(result, as_json=as_json, saved=out)


@papyrus_app.command("eval")
@cli_errors
def eval_command(
    model_dir: Path = typer.Argument(..., help="Model directory written by `synth train papyrus fit --out`."),
    dataset: Path = typer.Argument(..., help=DATASET_HELP),
    eval_cers: str | None = typer.Option(
        None, "--eval-cers", help=EVAL_CERS_HELP + " Default: the levels of the fit run's metrics.json."
    ),
    variant: str | None = typer.Option(
        None, "--variant", help="Error shape of the test texts; default: the one the model was trained with."
    ),
    as_json: bool = typer.Option(False, "--json", help=JSON_HELP),
) -> None:
    """Reload a trained model and score it on the test split again (identical figures on the same data)."""
    from synth.trainers.papyrus.data import read_papyrus_dataset
    from synth.trainers.papyrus.evaluate import evaluate_saved, read_training, saved_eval_cers

    training = read_training(model_dir)
    levels = parse_cers(eval_cers) if eval_cers is not None else saved_eval_cers(model_dir)
    frame = read_papyrus_dataset(dataset)
    result = evaluate_saved(
        model_dir, frame, eval_cers=levels, variant=variant if variant is not None else training.get("variant")
    )
    show(result, as_json=as_json, saved=None)


def show(result: dict[str, Any], *, as_json: bool, saved: Path | None) -> None:
    """Print the figures as JSON, or as a header, a rich table of metric and retention per CER, and a footer."""
    if as_json:
        console.print_json(json.dumps(result))
        return
    sizes = " ".join(f"{split} {n['labelled']}/{n['documents']}" for split, n in result["sizes"].items())
    variant = result["variant"] or "all variants"
    console.print(
        f"[bold]{result['task']}[/] with [cyan]{result['model']}[/], trained at CER {result['train_cer']:g} "
        f"({variant}); labelled/documents: {sizes}"
    )
    if result["dropped_classes"]:
        dropped = ", ".join(f"{label} ({n})" for label, n in result["dropped_classes"].items())
        console.print(f"dropped classes (< {result['min_class_count']} train documents): {dropped}", highlight=False)
    if not result["measurable"]:
        err_console.print(f"[bold yellow]not measurable:[/] {result['reason']}", highlight=False)
        return
    metric = result["metric"]
    secondary = next(key for key in result["clean"] if key not in {"cer", "texts", "documents", metric, "retention"})
    table = Table("CER", "texts", "documents", metric, secondary, "retention", title="test split", title_justify="left")
    for entry in result["results"]:
        table.add_row(
            f"{100 * entry['cer']:g} %",
            str(entry["texts"]),
            str(entry["documents"]),
            _number(entry.get(metric)),
            _number(entry.get(secondary)),
            _number(entry.get("retention")),
        )
    console.print(table)
    tolerance = result["tolerance"]
    largest = tolerance["largest_cer"]
    console.print(
        f"retention >= {tolerance['retention_threshold']:g} up to "
        + ("no evaluated level" if largest is None else f"{100 * largest:g} % CER")
    )
    if saved is not None:
        console.print(f"saved model and metrics.json -> {saved}")


def _number(value: float | None) -> str:
    return "-" if value is None else f"{value:.4f}"


@app.command("lob")
@cli_errors
def lob_command(
    messages: Path | None = typer.Option(
        None, "--messages", help="LOBSTER message file (default: the shipped AMZN day, level 1)."
    ),
    orderbook: Path | None = typer.Option(None, "--orderbook", help="Its orderbook file (default: by name)."),
    train_fraction: float = typer.Option(
        0.6, "--train-fraction", min=0.01, max=1.0, help="Fit on this first share of the day's messages."
    ),
    levels: int = typer.Option(10, "--levels", min=1, max=50, help="Levels the pointer may reference."),
    tick: int = typer.Option(100, "--tick", min=1, help="Price tick in LOBSTER units (dollars x 10000)."),
    pointer: PointerOption = typer.Option(
        "logit", "--pointer", help="logit: conditional logit over order features; attention: key/query MLPs (torch)."
    ),
    seed: int = typer.Option(0, "--seed", help="Seed of the attention pointer's initialisation and batches."),
    out: Path = typer.Option(..., "--out", "-o", help="Directory for lob_model.json."),
    overwrite: bool = typer.Option(False, "--overwrite", help=OVERWRITE_HELP),
    as_json: bool = typer.Option(False, "--json", help=JSON_HELP),
) -> None:
    """Fit the LOB model: field distributions by counts, the pointer by maximum likelihood, Santa Fe rates."""
    from synth.generators.lob import SAMPLE_DIR
    from synth.generators.lob.fit import fit_lob_model
    from synth.generators.lob.generator import read_day
    from synth.generators.lob.model import MODEL_FILE
    from synth.pipelines.lob import AMZN_MESSAGES, orderbook_for
    from synth.trainers.model_card import trained_on_files, write_model_card

    messages = messages or SAMPLE_DIR / AMZN_MESSAGES
    orderbook = orderbook or orderbook_for(messages)
    if (out / MODEL_FILE).exists() and not overwrite:
        msg = f"{out}: already holds {MODEL_FILE}; pass --overwrite or choose another --out"
        raise OutputDirError(msg)
    day, books = read_day(messages, orderbook)
    model = fit_lob_model(
        day,
        books,
        train_fraction=train_fraction,
        levels=levels,
        tick=tick,
        source=messages.name,
        pointer=pointer,
        seed=seed,
    )
    written = model.save(out)
    settings = {
        "messages": str(messages),
        "orderbook": str(orderbook),
        "train_fraction": train_fraction,
        "levels": levels,
        "tick": tick,
        "pointer": pointer,
        "seed": seed,
    }
    trained_on = trained_on_files([messages, orderbook], domain="lob", rows=len(day))
    write_model_card(written.parent, trainer="lob", dataset=trained_on, settings=settings, metrics=model.training)
    zero_intelligence = model.zero_intelligence
    summary = {
        "model": str(written),
        "train_messages": model.training["train_messages"],
        "pointer": model.training["pointer"]["fit"],
        "pointer_held_out": model.training["pointer"]["held_out"],
        "zero_intelligence": {
            "limit_rate_per_s": zero_intelligence.limit_rate,
            "market_rate_per_s": zero_intelligence.market_rate,
            "cancel_rate_per_order_s": zero_intelligence.cancel_rate,
            "window_ticks": zero_intelligence.window_ticks,
        },
    }
    if as_json:
        console.print_json(json.dumps(summary))
        return
    table = Table(title=f"LOB model fit on {messages.name}")
    for column in ("pointer", "choices", "mean log-lik", "uniform log-lik", "top-1"):
        table.add_column(column)
    for event, stats in summary["pointer"].items():
        name = {"2": "partial cancel", "3": "delete"}.get(event, event) + (" (pooled)" if stats.get("pooled") else "")
        table.add_row(
            name,
            f"{stats['choices']:.0f}",
            f"{stats['mean_loglik']:.3f}",
            f"{stats['uniform_loglik']:.3f}",
            f"{stats['top1_accuracy']:.3f}",
        )
    console.print(table)
    for kind, stats in summary["pointer_held_out"].items():
        console.print(
            f"held-out cancels, {kind} pointer: mean log-lik {stats['mean_loglik']:.3f} (uniform "
            f"{stats['uniform_loglik']:.3f}), top-1 {stats['top1_accuracy']:.3f} over {stats['choices']:.0f}"
        )
    console.print(f"Santa Fe rates: {json.dumps(summary['zero_intelligence'])}")
    console.print(f"wrote {written}")


@app.command("base-lm")
@cli_errors
def base_lm_command(
    out: Path = typer.Option(..., "--out", "-o", help="Directory for the tiny reference LM (reused if it matches)."),
    seed: int = typer.Option(0, "--seed", help="Seed of the weights and of the pre-training data."),
    hidden: int = typer.Option(96, "--hidden", min=8, help="Hidden size."),
    layers: int = typer.Option(2, "--layers", min=1, help="Decoder layers."),
    steps: int = typer.Option(2000, "--steps", min=1, help="Pre-training steps on the synthetic base task."),
) -> None:
    """Build a tiny Llama-style LM and byte tokenizer locally (no download), pre-trained briefly; the DASA reference."""
    from synth.generators.dasa.base_lm import build_base_lm

    try:
        path = build_base_lm(out, seed=seed, hidden=hidden, layers=layers, steps=steps)
    except ValueError as error:
        raise InputError(str(error)) from error
    console.print(f"reference LM in {path}")


@app.command("lora-embeds")
@cli_errors
def lora_embeds_command(
    dataset: Path = typer.Argument(..., help="DASA or GRADMM dataset directory."),
    model: Path = typer.Option(..., "--model", help="The reference LM the dataset was made with."),
    inputs: str = typer.Option("embeds", "--inputs", help="embeds (inputs_embeds) or ids (the token column)."),
    task: str | None = typer.Option(None, "--task", help="Task to evaluate on (default: the dataset's)."),
    test_rows: int = typer.Option(100, "--test-rows", min=1, help="Held-out prompts scored by exact match."),
    eval_seed: int = typer.Option(10_000, "--eval-seed", help="Seed of the held-out prompts."),
    steps: int = typer.Option(200, "--steps", min=1, help="LoRA steps."),
    rank: int = typer.Option(8, "--rank", min=1, help="LoRA rank."),
    seed: int = typer.Option(0, "--seed", help="Seed of the LoRA initialisation and batches."),
) -> None:
    """LoRA fine-tuning (peft) directly on an embedding dataset; prints the held-out exact match."""
    from synth.core.dataset import open_dataset
    from synth.generators.dasa.base_lm import load_reference
    from synth.generators.dasa.generator import META_SETTINGS
    from synth.generators.dasa.lora import train_and_evaluate
    from synth.generators.dasa.tasks import make_pairs
    from synth.trainers.dasa.data import ReferenceMismatchError, load_rows

    if inputs not in ("embeds", "ids"):
        msg = f"--inputs: unknown input kind {inputs!r}; choose embeds, ids"
        raise InputError(msg)
    reference = load_reference(model)
    try:
        rows = load_rows(dataset, reference, inputs=inputs)  # type: ignore[arg-type]
    except (ReferenceMismatchError, FileNotFoundError) as error:
        raise InputError(str(error)) from error
    if task is None:
        settings = json.loads(open_dataset(dataset, domain="dasa").metadata(META_SETTINGS.decode()) or "{}")
        task = str(settings["task"])
    test = make_pairs(task, test_rows, seed=eval_seed)
    score = train_and_evaluate(reference, rows, test, seed=seed, steps=steps, rank=rank)
    console.print_json(json.dumps({"dataset": str(dataset), "task": task, "exact_match": score}))


def register(root: typer.Typer) -> None:
    """Add the `train` group (papyrus, lob, base-lm, lora-embeds, sft, grpo) to the root app."""
    from synth.cli import grpo, sft

    sft.register(app)
    grpo.register(app)
    root.add_typer(app, name="train")
