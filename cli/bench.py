"""`synth bench NAME`: benchmarks that write JSON with ratios against a baseline measured in the same run."""

from __future__ import annotations

import json
from pathlib import Path

import typer
from rich.table import Table

from synth.cli._common import cli_errors, console, err_console, exit_with_error, split_choices, write_report

app = typer.Typer(help="Benchmarks that write JSON (ratios against a baseline in the same run).", no_args_is_help=True)


@app.command("pipeline")
@cli_errors
def pipeline_command(
    out: Path = typer.Option(Path("bench-pipeline.json"), "--out", "-o", help="Where to write the JSON report."),
    min_seconds: float = typer.Option(
        20.0, "--min-seconds", min=0.1, help="Scale the run so the bare loop takes at least this long."
    ),
    shards: int = typer.Option(4, "--shards", min=1, help="Shards of the benchmarked run."),
    repeats: int = typer.Option(3, "--repeats", min=1, help="Interleaved rounds of every engine; the best counts."),
    engines: str = typer.Option(
        "local,prefect", "--engines", help="Comma-separated engines to compare with the bare loop."
    ),
) -> None:
    """Overhead of the local and Prefect engines versus a bare generate+verify+write loop."""
    from synth.flows.bench import bench_pipeline

    chosen = tuple(name.strip() for name in engines.split(",") if name.strip())
    unknown = sorted(set(chosen) - {"local", "prefect"})
    if unknown:
        err_console.print(f"[bold red]error:[/] --engines: unknown engine {unknown[0]!r}; choose local, prefect")
        raise typer.Exit(2)
    report = bench_pipeline(min_seconds=min_seconds, shards=shards, repeats=repeats, engines=chosen)
    write_report(out, report)
    console.print_json(json.dumps({"ratios": report["ratios"], "best_seconds": report["best_seconds"]}))
    console.print(f"wrote {out}")


@app.command("scale")
@cli_errors
def scale_command(
    out: Path = typer.Option(Path("bench-scale.json"), "--out", "-o", help="Where to write the JSON report."),
    shards: int = typer.Option(8, "--shards", min=2, help="Shards timed per engine and worker count."),
    shard_seconds: float = typer.Option(0.75, "--shard-seconds", min=0.01, help="CPU seconds per shard (calibrated)."),
    noops: int = typer.Option(200, "--noops", min=0, help="No-op tasks for the per-task overhead (0: skip)."),
    engines: str = typer.Option("local,dask,ray", "--engines", help="Comma-separated: local, dask, ray."),
) -> None:
    """Shards/s with 1 and 2 workers on the local process pool, Dask and Ray (same shards), per-task overhead."""
    from synth.flows.scale_bench import ENGINES, bench_scale

    chosen = tuple(name.strip() for name in engines.split(",") if name.strip())
    unknown = sorted(set(chosen) - set(ENGINES)) or ([] if chosen else [engines])
    if unknown:
        err_console.print(f"[bold red]error:[/] --engines: unknown engine {unknown[0]!r}; choose {', '.join(ENGINES)}")
        raise typer.Exit(2)
    report = bench_scale(shards=shards, shard_seconds=shard_seconds, noops=noops, engines=chosen)
    write_report(out, report)
    summary = {e: {"speedup": r["speedup"], "noop_task_ms": r["noop_task_ms"]} for e, r in report["engines"].items()}
    console.print_json(json.dumps({"engines": summary, "loadavg_before": report["machine"]["loadavg_before"]}))
    console.print(f"wrote {out}")


@app.command("levenshtein")
@cli_errors
def levenshtein_command(
    out: Path = typer.Option(Path("bench-levenshtein.json"), "--out", "-o", help="Where to write the JSON report."),
    pairs: int = typer.Option(2000, "--pairs", min=1, help="Pairs per backend (all backends get the same pairs)."),
    length: int = typer.Option(200, "--length", min=0, help="Letters per clean text; the noisy copy has ~10% edits."),
    seed: int = typer.Option(0, "--seed", help="Seed of the random pairs."),
    repeats: int = typer.Option(
        3, "--repeats", min=1, help="Timed runs per backend (fewer past 5 s); the best time counts."
    ),
    backends: str = typer.Option(
        "rapidfuzz,numpy,triton", "--backends", help="Comma-separated backends to compare with rapidfuzz."
    ),
) -> None:
    """Pairs/s of the Levenshtein backends (numpy reference, triton kernel) versus rapidfuzz on the same pairs.

    Without CUDA, triton runs only with TRITON_INTERPRET=1 set in the environment (its slow CPU interpreter).
    """
    from synth.kernels.levenshtein.bench import BENCH_BACKENDS, bench_levenshtein

    chosen = tuple(name.strip() for name in backends.split(",") if name.strip())
    unknown = sorted(set(chosen) - set(BENCH_BACKENDS))
    if unknown:
        err_console.print(
            f"[bold red]error:[/] --backends: unknown backend {unknown[0]!r}; choose {', '.join(BENCH_BACKENDS)}"
        )
        raise typer.Exit(2)
    report = bench_levenshtein(pairs=pairs, length=length, seed=seed, backends=chosen, repeats=repeats)
    write_report(out, report)
    summary = {key: report[key] for key in ("pairs_per_s", "ratios", "agrees_with_rapidfuzz", "triton_mode")}
    if report["skipped"]:
        summary["skipped"] = report["skipped"]
    console.print_json(json.dumps(summary, ensure_ascii=False))
    console.print(f"wrote {out}")


LOB_MESSAGES = typer.Option(None, "--messages", help="LOBSTER message file (default: shipped AMZN).")
LOB_ORDERBOOK = typer.Option(None, "--orderbook", help="Its orderbook file (default: by name).")
LOB_MODEL = typer.Option(None, "--model", help="Model from `synth train lob` (default: shipped).")
LOB_ROLLOUTS = typer.Option(100, "--rollouts", min=1, help="Rollouts per method, one per held-out window.")
LOB_HORIZON = typer.Option(500, "--horizon", min=1, help="Messages per rollout.")


def _lob_day(messages: Path | None, orderbook: Path | None) -> dict[str, Path]:
    """The message and orderbook files a LOB bench reads (the shipped AMZN day by default)."""
    from synth.generators.lob import SAMPLE_DIR
    from synth.pipelines.lob import AMZN_MESSAGES, orderbook_for

    messages = messages or SAMPLE_DIR / AMZN_MESSAGES
    return {"messages": messages, "orderbook": orderbook or orderbook_for(messages)}


@app.command("lob-speed")
@cli_errors
def lob_speed_command(
    out: Path = typer.Option(Path("bench-lob-speed.json"), "--out", "-o", help="Where to write the JSON report."),
    messages: Path | None = LOB_MESSAGES,
    orderbook: Path | None = LOB_ORDERBOOK,
    model: Path | None = LOB_MODEL,
    rollouts: int = LOB_ROLLOUTS,
    horizon: int = LOB_HORIZON,
    seed: int = typer.Option(0, "--seed", help="Seed of every rollout (the same for each method)."),
    repeats: int = typer.Option(3, "--repeats", min=1, help="Timed runs per method; the best time counts."),
) -> None:
    """Wall time per replayed message of ReLOBGen vs the rejection baseline (ratio), and replay messages/s."""
    from synth.generators.lob.bench import bench_lob_speed

    report = bench_lob_speed(
        **_lob_day(messages, orderbook),
        model_path=model,
        rollouts=rollouts,
        horizon=horizon,
        seed=seed,
        repeats=repeats,
    )
    write_report(out, report)
    summary = {
        "us_per_replayed_message": {k: v["us_per_replayed_message"] for k, v in report["methods"].items()},
        "ratios": report["ratios"],
        "rejection_raw_rejection_rate": report["methods"]["rejection"]["raw_rejection_rate"],
        "replay_messages_per_second": {
            k: round(v["messages_per_second"])
            for k, v in report["replay"].items()
            if isinstance(v, dict) and "messages_per_second" in v
        },
        "replay_numba_over_python": report["replay"].get("numba_over_python"),
    }
    console.print_json(json.dumps(summary))
    console.print(f"wrote {out}")


@app.command("lob-realism")
@cli_errors
def lob_realism_command(
    out: Path = typer.Option(Path("bench-lob-realism.json"), "--out", "-o", help="Where to write the JSON report."),
    plot: Path | None = typer.Option(None, "--plot", help="PNG of the histograms (default: next to --out)."),
    messages: Path | None = LOB_MESSAGES,
    orderbook: Path | None = LOB_ORDERBOOK,
    model: Path | None = LOB_MODEL,
    rollouts: int = LOB_ROLLOUTS,
    horizon: int = LOB_HORIZON,
    seed: int = typer.Option(0, "--seed", help="Seed of the rollouts and of the bootstrap."),
    bootstrap: int = typer.Option(100, "--bootstrap", min=0, help="Bootstrap resamples for the 99% intervals."),
) -> None:
    """LOB-Bench-style distances (L1 on FD bins, z-scored W1, bootstrap CIs) of each method to real windows."""
    from synth.generators.lob.bench import bench_lob_realism

    report = bench_lob_realism(
        **_lob_day(messages, orderbook),
        model_path=model,
        rollouts=rollouts,
        horizon=horizon,
        seed=seed,
        bootstrap=bootstrap,
        plot=plot or out.with_suffix(".png"),
    )
    write_report(out, report)
    table = Table(title=f"L1 distance to real ({rollouts} windows x {horizon} messages; lower is better)")
    table.add_column("score")
    methods = list(report["methods"])
    for method in methods:
        table.add_column(method)
    for score in report["methods"][methods[0]]["scores"]:
        table.add_row(score, *(f"{report['methods'][m]['scores'][score]['l1']:.3f}" for m in methods))
    table.add_row("mean L1", *(f"{report['methods'][m]['summary']['mean_l1']:.3f}" for m in methods))
    table.add_row("mean W1", *(f"{report['methods'][m]['summary']['mean_w1']:.3f}" for m in methods))
    table.add_row("replayable", *(f"{report['replayable_share'][m]:.0%}" for m in methods))
    console.print(table)
    console.print(f"wrote {out} and {report['plot']}")


@app.command("optiscribe")
@cli_errors
def optiscribe_command(
    out: Path = typer.Option(Path("bench-optiscribe.json"), "--out", "-o", help="Where to write the JSON report."),
    challenger: str = typer.Option("cem", "--challenger", help="Scripted challenger's learner: cem, bandit or gp."),
    rounds: int = typer.Option(3, "--rounds", min=1, help="Self-play rounds before the evaluation."),
    candidates: int = typer.Option(6, "--candidates", min=1, help="Proposals per self-play round."),
    eval_instances: int = typer.Option(4, "--eval-instances", min=1, help="Instances solved per group."),
    seed: int = typer.Option(0, "--seed", help="Seed of self-play and of the evaluated instances."),
    crosscheck: bool = typer.Option(True, "--crosscheck/--no-crosscheck", help="Cross-check with OR-Tools."),
    total_nodes: int = typer.Option(500, "--total-nodes", min=1, help="SCIP node cap of the self-play solves."),
    eval_total_nodes: int = typer.Option(1000, "--eval-total-nodes", min=1, help="SCIP node cap at evaluation."),
    time_limit: float = typer.Option(900.0, "--time-limit", min=1, help="SCIP wall-clock safety cap per solve (s)."),
    workers: int = typer.Option(1, "--workers", min=1, help="Solver processes (results do not depend on it)."),
    scale: str = typer.Option("real", "--scale", help="real (CFL 100×100, max-cut 200 nodes) or small (tests)."),
    families: str = typer.Option("facility_location,max_cut", "--families", help="Comma-separated families."),
    selfplay_size: str = typer.Option(
        "proxy",
        "--selfplay-size",
        help="Where the challenger self-plays: proxy (the bench curricula: CFL at 50×50) or real (the evaluated size).",
    ),
    instance_seeds: int = typer.Option(
        1, "--instance-seeds", min=1, help="Instances solved per proposed spec in self-play (scored by their mean)."
    ),
    capped_nodes: str = typer.Option(
        "estimate",
        "--capped-nodes",
        help="What a node-capped self-play solve is paid for: estimate (SCIP's tree-size estimate) or count.",
    ),
    state_dir: Path | None = typer.Option(
        None,
        "--state-dir",
        help="Save each family's self-play state there after every round; a rerun resumes from it (to more "
        "--rounds, too), and refuses other self-play settings.",
    ),
) -> None:
    """Self-played vs default-generator MILPs (CFL 100×100, max-cut 200 nodes): SCIP node and post-cut gap ratios."""
    from synth.generators.optiscribe.bench import (
        BENCH_INSTRUCTIONS,
        SMALL_BENCH_INSTRUCTIONS,
        bench_optiscribe,
    )

    if scale not in ("real", "small"):
        err_console.print(f"[bold red]error:[/] --scale: unknown scale {scale!r}; choose real, small")
        raise typer.Exit(2)
    standard = SMALL_BENCH_INSTRUCTIONS if scale == "small" else BENCH_INSTRUCTIONS
    names = split_choices(families, standard, option="--families", noun="family")

    from synth.generators.optiscribe.selfplay import LEARNERS

    if challenger not in LEARNERS:
        err_console.print(
            f"[bold red]error:[/] --challenger: unknown learner {challenger!r}; choose {', '.join(LEARNERS)}"
        )
        raise typer.Exit(2)
    if selfplay_size not in ("proxy", "real"):
        err_console.print(f"[bold red]error:[/] --selfplay-size: unknown size {selfplay_size!r}; choose proxy, real")
        raise typer.Exit(2)
    from synth.validators.optiscribe.reward import CAPPED_PAYS, RewardSettings

    if capped_nodes not in CAPPED_PAYS:
        choices = ", ".join(CAPPED_PAYS)
        err_console.print(f"[bold red]error:[/] --capped-nodes: unknown choice {capped_nodes!r}; choose {choices}")
        raise typer.Exit(2)

    chosen = {name: standard[name] for name in names}
    report = bench_optiscribe(
        seed=seed,
        rounds=rounds,
        candidates=candidates,
        eval_instances=eval_instances,
        challenger=challenger,  # type: ignore[arg-type]
        crosscheck=crosscheck,
        total_nodes=total_nodes,
        eval_total_nodes=eval_total_nodes,
        time_limit=time_limit,
        workers=workers,
        instructions=chosen,
        curricula={name: (text,) for name, text in chosen.items()} if selfplay_size == "real" else None,
        instance_seeds=instance_seeds,
        reward=RewardSettings(capped_nodes=capped_nodes),  # type: ignore[arg-type]
        state_dir=state_dir,
    )
    write_report(out, report, sort_keys=True)
    summary = {
        family: {key: result.get(key) for key in ("median_nodes_ratio", "median_nodes_ratio_90ci", "postcut_gap_ratio")}
        for family, result in report["families"].items()
    }
    console.print_json(json.dumps(summary))
    console.print(f"wrote {out}")


@app.command("marco")
@cli_errors
def marco_command(
    out: Path = typer.Option(Path("bench-marco.json"), "--out", "-o", help="Where to write the JSON report."),
    plot: Path | None = typer.Option(None, "--plot", help="PNG of SR×Sim per budget (default: next to --out)."),
    tasks: str = typer.Option("BPQ", "--tasks", help="Comma-separated tasks (BDP, BDQ, BPQ, PQS)."),
    settings: str = typer.Option("seen,unseen", "--settings", help="Instruction splits: seen, unseen."),
    sources: int = typer.Option(500, "--sources", min=1, help="Sources per task and split."),
    budget: int = typer.Option(5, "--budget", min=1, help="Graded responses per source."),
    seed: int = typer.Option(0, "--seed", help="Seed of every trajectory."),
    workers: int = typer.Option(1, "--workers", min=1, help="Processes (results do not depend on it)."),
) -> None:
    """Same-1, feedback-guided Same-B and best-of-B on the same sources: SR, similarity, SR×Sim and more."""
    from synth.generators.marco.bench import bench_marco

    chosen = [name.strip() for name in settings.split(",") if name.strip()]
    unknown = sorted(set(chosen) - {"seen", "unseen"})
    if unknown:
        err_console.print(f"[bold red]error:[/] --settings: unknown split {unknown[0]!r}; choose seen, unseen")
        raise typer.Exit(2)
    report = bench_marco(
        tasks=tuple(name.strip() for name in tasks.split(",") if name.strip()),
        settings=tuple(chosen),  # type: ignore[arg-type]
        sources=sources,
        budget=budget,
        seed=seed,
        workers=workers,
        plot=plot or out.with_suffix(".png"),
    )
    write_report(out, report)
    summary = {
        group: {
            key: value["sr_x_sim"] for key, value in result.items() if isinstance(value, dict) and "sr_x_sim" in value
        }
        for group, result in report["groups"].items()
    }
    console.print_json(json.dumps(summary))
    console.print(f"wrote {out}")


@app.command("dasa")
@cli_errors
def dasa_command(
    out: Path = typer.Option(Path("bench-dasa.json"), "--out", "-o", help="Where to write the JSON report."),
    model: Path | None = typer.Option(None, "--model", help="Reference LM directory (default: the tiny base LM)."),
    cache: Path = typer.Option(Path("out/bench-dasa"), "--cache", help="Where the tiny base LM is built and kept."),
    tasks: str = typer.Option("shift,increment,cipher", "--tasks", help="Comma-separated source adaptation tasks."),
    source_rows: int = typer.Option(256, "--source-rows", min=1, help="Source text rows."),
    test_rows: int = typer.Option(64, "--test-rows", min=1, help="Held-out prompts scored by exact match."),
    m: int = typer.Option(32, "--m", min=1, help="Synthetic rows for DASA, GRADMM, random, and the source subset."),
    seeds: str = typer.Option("0,1,2", "--seeds", help="Comma-separated seeds (mean ± sd over them)."),
    lora_steps: int = typer.Option(200, "--lora-steps", min=1, help="LoRA steps for every training set."),
    base_steps: int = typer.Option(2000, "--base-steps", min=1, help="Pre-training steps of the tiny base LM."),
    base_hidden: int = typer.Option(96, "--base-hidden", min=8, help="Hidden size of the tiny base LM."),
    threads: int = typer.Option(1, "--threads", min=1, help="torch threads (1 suits a shared CPU)."),
    dasa: str = typer.Option("{}", "--dasa", help='DASA settings overrides as JSON, e.g. \'{"target": "one-step"}\'.'),
    quality_task: str = typer.Option(
        "shift", "--quality-task", help="Task given time-to-quality snapshots ('none': skip them)."
    ),
) -> None:
    """Exact match after matched LoRA on source text, a subset, DASA, GRADMM and random rows; synthesis cost."""
    from dataclasses import fields

    from synth.generators.dasa.bench import BENCH_DASA, run_dasa_bench
    from synth.generators.dasa.synthesize import DasaSettings
    from synth.generators.dasa.tasks import TASKS

    try:
        override = json.loads(dasa)
    except ValueError as exc:
        exit_with_error(f"--dasa: not JSON: {exc}", 2)
    if not isinstance(override, dict):
        exit_with_error(f"--dasa: not a JSON object (got {dasa!r})", 2)
    if unknown := sorted(set(override) - {f.name for f in fields(DasaSettings)}):
        exit_with_error(f"--dasa: unknown DASA setting {unknown[0]!r}", 2)
    settings = DasaSettings(
        **{**BENCH_DASA, **{k: tuple(v) if isinstance(v, list) else v for k, v in override.items()}}
    )

    try:
        chosen = tuple(int(seed) for seed in seeds.split(",") if seed.strip())
    except ValueError:
        exit_with_error(f"--seeds: not a comma-separated list of integers: {seeds!r}", 2)
    task_names = tuple(t.strip() for t in tasks.split(",") if t.strip())
    unknown = [t for t in task_names if t not in TASKS] or ([] if task_names else [tasks])
    if unknown:
        exit_with_error(f"--tasks: unknown task {unknown[0]!r}; choose from {list(TASKS)}", 2)
    report = run_dasa_bench(
        model_dir=model,
        cache=cache,
        tasks=task_names,
        source_rows=source_rows,
        test_rows=test_rows,
        m=m,
        seeds=chosen,
        lora_steps=lora_steps,
        base_steps=base_steps,
        base_hidden=base_hidden,
        threads=threads,
        dasa=settings,
        quality_task=None if quality_task == "none" else quality_task,
        on_progress=lambda partial: write_report(out, partial),
    )
    write_report(out, report)
    keys = ("per_task", "synthesis", "time_to_quality")
    console.print_json(json.dumps({key: report[key] for key in report if key in keys}))
    console.print(f"wrote {out}")


@app.command("dasa-search")
@cli_errors
def dasa_search_command(
    configs: str = typer.Argument(..., help="JSON list of DASA settings overrides, e.g. '[{}, {\"lr\": 3e-3}]'."),
    out: Path = typer.Option(Path("dasa-search.jsonl"), "--out", "-o", help="JSON lines, one per seed and config."),
    model: Path = typer.Option(
        Path("out/bench-dasa/base-lm-seed0-steps2000-hidden96"), "--model", help="Reference LM."
    ),
    task: str = typer.Option("shift", "--task", help="Source adaptation task."),
    m: int = typer.Option(16, "--m", min=1, help="Synthetic rows."),
    seeds: str = typer.Option("10,11", "--seeds", help="Comma-separated seeds (keep them apart from the bench's)."),
) -> None:
    """DASA settings search: exact match of DASA rows vs the source rows they start from, per seed and config."""
    import torch

    from synth.generators.dasa.base_lm import load_reference
    from synth.generators.dasa.bench import search_dasa

    try:
        overrides = json.loads(configs)
        chosen = tuple(int(seed) for seed in seeds.split(",") if seed.strip())
    except ValueError as exc:
        exit_with_error(f"CONFIGS / --seeds: {exc}", 2)
    if not isinstance(overrides, list) or not all(isinstance(c, dict) for c in overrides):
        exit_with_error("CONFIGS: not a JSON list of objects", 2)
    from dataclasses import fields

    from synth.generators.dasa.synthesize import DasaSettings

    known = {f.name for f in fields(DasaSettings)}
    for i, override in enumerate(overrides):
        if unknown := sorted(set(override) - known):
            exit_with_error(f"CONFIGS[{i}]: unknown DASA setting {unknown[0]!r}; known: {sorted(known)}", 2)
    torch.set_num_threads(1)
    reference = load_reference(model)
    with out.open("a", encoding="utf-8") as handle:
        for row in search_dasa(reference, task=task, m=m, seeds=chosen, configs=overrides):
            handle.write(json.dumps(row) + "\n")
            handle.flush()
            console.print_json(json.dumps(row))


@app.command("toolforge")
@cli_errors
def toolforge_command(
    out: Path = typer.Option(Path("bench-toolforge.json"), "--out", "-o", help="Where to write the JSON report."),
    seeds: list[Path] | None = typer.Option(None, "--seeds", help="Seed files/folders (default: the shipped seeds)."),
    limit: int | None = typer.Option(None, "--limit", min=1, help="Use only the first N seed records."),
    seed: int = typer.Option(0, "--seed", help="Run seed of generation, corruption and search."),
    audit_rows: int = typer.Option(40, "--audit-rows", min=1, help="Valid dialogues audited (spread over the set)."),
    iterations: int = typer.Option(60, "--iterations", min=1, help="MCTS iterations per audited dialogue."),
    random_per_row: int = typer.Option(20, "--random-per-row", min=1, help="Random corruptions per audited dialogue."),
) -> None:
    """Generation cost, acceptance of valid dialogues, and the MCTS audit of ToolForge's checks vs synth's layers."""
    from synth.generators.toolforge.bench import bench_toolforge

    report = bench_toolforge(
        seeds=tuple(str(path) for path in seeds or ()),
        limit=limit,
        seed=seed,
        audit_rows=audit_rows,
        iterations=iterations,
        random_per_row=random_per_row,
    )
    write_report(out, report)
    audit = report["audit"]
    summary = {
        "acceptance": report["validation"]["acceptance"],
        "seconds_per_accepted": report["generation"]["scripted"]["seconds_per_accepted"],
        **{
            name: {
                "false_reject_rate": result["false_reject_rate"],
                "random_recall": result["random"]["recall"],
                "mined_recall": result["mined"]["recall"],
                "operators_missed": result["operators_missed"],
            }
            for name, result in audit.items()
        },
    }
    console.print_json(json.dumps(summary))
    console.print(f"wrote {out}")


@app.command("curate")
@cli_errors
def curate_command(
    out: Path = typer.Option(Path("docs/bench/curate.json"), "--out", "-o", help="Where to write the JSON report."),
    sizes: str = typer.Option("1000000,5000000", "--sizes", help="Comma-separated row counts, each curated fresh."),
    near_docs: int = typer.Option(20_000, "--near-docs", min=100, help="Documents of the near-dup library comparison."),
    words: int = typer.Option(24, "--words", min=5, help="Words per generated document of the size runs."),
    work: Path = typer.Option(Path("bench-curate-work"), "--work", help="Scratch folder for the generated datasets."),
) -> None:
    """Curate rows/s and peak RSS per size (fresh subprocesses), near-dup docs/s vs datasketch and rensa."""
    import shutil

    from synth.pipelines.curation.bench import bench_curate

    chosen = tuple(int(size) for size in sizes.split(",") if size.strip())
    report = bench_curate(sizes=chosen, work=work, near_docs=near_docs, words=words)
    shutil.rmtree(work, ignore_errors=True)
    out.parent.mkdir(parents=True, exist_ok=True)
    write_report(out, report)
    summary = {key: report[key] for key in ("near_dup", "sizes") if key in report}
    console.print_json(json.dumps(summary))
    console.print(f"wrote {out}")


from synth.cli import bench_learning  # noqa: E402 - its commands join this group

bench_learning.register(app)
