"""`synth optiscribe ...`: export the kept MILPs, tune SCIP on a generated family, measure difficulty following.

synth optiscribe export out/optiscribe                      # -> out/optiscribe/instances/<id>.lp, <id>.mps
synth optiscribe tune max_cut facility_location -o docs/bench/optiscribe-tune.json
synth optiscribe bands -o docs/bench/optiscribe-bands.json  # share of instances inside the asked node band
"""

from __future__ import annotations

import json
from pathlib import Path

import typer

from synth.cli._common import cli_errors, console, err_console, exit_with_error, split_choices, write_report

app = typer.Typer(
    help="OptiScribe: export instances as solver files, tune SCIP on a generated family, measure difficulty bands.",
    no_args_is_help=True,
)


@app.command("export")
@cli_errors
def export_command(
    dataset: Path = typer.Argument(
        ..., help="OptiScribe dataset directory (from `synth run configs/optiscribe.yaml`)."
    ),
    target: Path | None = typer.Option(None, "--target", help="New or empty directory (default: DATASET/instances)."),
    formats: str = typer.Option("lp,mps", "--formats", help="Comma-separated file formats: lp, mps."),
) -> None:
    """Write each kept model as `<id>.lp` / `<id>.mps`, the files SCIP, HiGHS or Gurobi read."""
    from synth.generators.optiscribe.export import export_instances

    chosen = tuple(name.strip() for name in formats.split(",") if name.strip())
    unknown = sorted(set(chosen) - {"lp", "mps"})
    if unknown or not chosen:
        err_console.print(f"[bold red]error:[/] --formats: unknown format {(unknown or [''])[0]!r}; choose lp, mps")
        raise typer.Exit(2)
    report = export_instances(dataset, target=target, formats=chosen)  # type: ignore[arg-type]
    console.print_json(json.dumps(report))


@app.command("tune")
@cli_errors
def tune_command(
    families: list[str] = typer.Argument(..., help="Families to tune (e.g. max_cut facility_location)."),
    out: Path = typer.Option(Path("optiscribe-tune.json"), "--out", "-o", help="Where to write the JSON report."),
    instruction: str | None = typer.Option(None, "--instruction", help="Instance instruction (one family only)."),
    train: int = typer.Option(4, "--train", min=1, help="Generated training instances."),
    heldout: int = typer.Option(6, "--heldout", min=1, help="Generated held-out instances."),
    seed: int = typer.Option(0, "--seed", help="Seed of the instance streams."),
    total_nodes: int = typer.Option(20_000, "--total-nodes", min=1, help="SCIP node cap per solve."),
    time_limit: float = typer.Option(120.0, "--time-limit", min=1, help="SCIP wall-clock cap per solve (s)."),
    workers: int = typer.Option(1, "--workers", min=1, help="Solver processes (the choice does not depend on it)."),
) -> None:
    """Pick SCIP settings (emphasis presets, then a coordinate search over separating / presolving / heuristics
    and the branching score) on generated instances; report tuned vs default on held-out ones."""
    from synth.generators.optiscribe.tune import TUNE_INSTRUCTIONS, tune_report

    unknown = [f for f in families if f not in TUNE_INSTRUCTIONS]
    if unknown:
        err_console.print(f"[bold red]error:[/] unknown family {unknown[0]!r}; choose from {sorted(TUNE_INSTRUCTIONS)}")
        raise typer.Exit(2)
    if instruction is not None and len(families) != 1:
        err_console.print("[bold red]error:[/] --instruction: give exactly one family with it")
        raise typer.Exit(2)
    options = {
        "instruction": instruction,
        "train": train,
        "heldout": heldout,
        "seed": seed,
        "total_nodes": total_nodes,
        "time_limit": time_limit,
        "workers": workers,
    }
    report = tune_report(families, options=options)
    write_report(out, report, sort_keys=True)
    summary = {
        f: {"chosen": r["chosen"], "heldout_time_ratio": r["heldout"]["median_deterministic_time_ratio"]}
        for f, r in report["families"].items()
    }
    console.print_json(json.dumps(summary))
    console.print(f"wrote {out}")


@app.command("bands")
@cli_errors
def bands_command(
    out: Path = typer.Option(Path("optiscribe-bands.json"), "--out", "-o", help="Where to write the JSON report."),
    bands: str = typer.Option("easy,medium,hard", "--bands", help="Comma-separated: easy, medium, hard, about:N."),
    rounds: int = typer.Option(12, "--rounds", min=1, help="Self-play rounds per band."),
    candidates: int = typer.Option(8, "--candidates", min=1, help="Proposals per round."),
    instance_seeds: int = typer.Option(
        1, "--instance-seeds", min=1, help="Instances solved per proposed spec in self-play (scored by their mean)."
    ),
    eval_instances: int = typer.Option(10, "--eval-instances", min=1, help="Instances evaluated per band."),
    seed: int = typer.Option(0, "--seed", help="Seed of self-play and evaluation."),
    total_nodes: int = typer.Option(3000, "--total-nodes", min=1, help="SCIP node cap per solve."),
    workers: int = typer.Option(1, "--workers", min=1, help="Solver processes (results do not depend on it)."),
    calibration_samples: int = typer.Option(
        24, "--calibration-samples", min=0, help="Uniform specs solved to calibrate the bands (0: fixed bands)."
    ),
    families: str = typer.Option("max_cut,facility_location", "--families", help="Comma-separated families."),
    spread_seeds: int = typer.Option(
        6, "--spread-seeds", min=0, help="Seeds per spec measuring seed noise (the medium band's least width; 0: off)."
    ),
    max_draws: int = typer.Option(
        3, "--max-draws", min=1, help="Solves per delivered instance when one outside the band is drawn again."
    ),
    hard_margin: float | None = typer.Option(
        None, "--hard-margin", min=0.0, help="Decades above the hard edge its reward peaks (default: the seed noise)."
    ),
    challenger: str = typer.Option("cem", "--challenger", help="Scripted challenger's learner: cem, bandit or gp."),
    search_specs: int = typer.Option(
        0, "--search-specs", min=0, help="Uniform specs of the random-search baseline per band (0: off)."
    ),
    search_seeds: int = typer.Option(8, "--search-seeds", min=1, help="Instance seeds per searched spec."),
    search_holdout: int = typer.Option(16, "--search-holdout", min=1, help="Fresh seeds re-solving the best spec."),
    mutation_rounds: int = typer.Option(
        0, "--mutation-rounds", min=0, help="Evolution rounds of the mutation challenger per band (0: off)."
    ),
    mutation_children: int = typer.Option(16, "--mutation-children", min=1, help="Children solved per round."),
    mutation_sigma: float = typer.Option(
        0.01, "--mutation-sigma", min=0.0, max=1.0, help="Objective jitter: coefficients times exp(N(0, sigma))."
    ),
    mutation_eval: int = typer.Option(
        40, "--mutation-eval", min=1, help="Instances the mutation challenger generates per band after training."
    ),
    mutation_parents: str = typer.Option(
        "beta",
        "--mutation-parents",
        help="Parent model: beta (children's in-band counts) or lognormal (predicted child log-nodes); a comma list"
        " also runs the others on the same archive and streams, for comparison.",
    ),
    effort_seeds: int = typer.Option(
        1, "--effort-seeds", min=1, help="Odd number of SCIP seeds per measurement; the median solve's nodes count."
    ),
) -> None:
    """Difficulty following: share of instances inside the asked band of SCIP nodes, per band and family."""
    from synth.generators.optiscribe.bench import BAND_BASES, bench_bands

    names = split_choices(families, BAND_BASES, option="--families", noun="family")
    from synth.generators.optiscribe.selfplay import LEARNERS

    if challenger not in LEARNERS:
        exit_with_error(f"--challenger: unknown learner {challenger!r}; choose {', '.join(LEARNERS)}", code=2)

    chosen = []
    for band in (b.strip() for b in bands.split(",") if b.strip()):
        target = band.removeprefix("about:")
        if band in ("easy", "medium", "hard") or (band.startswith("about:") and target.isdigit()):
            chosen.append(band if band in ("easy", "medium", "hard") else f"about {int(target)}")
            continue
        err_console.print(f"[bold red]error:[/] --bands: unknown band {band!r}; use easy, medium, hard or about:N")
        raise typer.Exit(2)
    from synth.generators.optiscribe.archive import PARENT_MODELS
    from synth.generators.optiscribe.bench import MutationSettings
    from synth.validators.optiscribe.spec import SpecError

    if effort_seeds % 2 == 0:
        exit_with_error(f"--effort-seeds: must be odd (the median solve counts), got {effort_seeds}", code=2)
    parents = split_choices(mutation_parents, PARENT_MODELS, option="--mutation-parents", noun="parent model")
    parents = list(dict.fromkeys(parents))
    mutation = None
    if mutation_rounds:
        if mutation_sigma <= 0.0:
            exit_with_error(f"--mutation-sigma: must be > 0, got {mutation_sigma}", code=2)
        mutation = MutationSettings(
            rounds=mutation_rounds,
            children=mutation_children,
            sigma=mutation_sigma,
            eval_instances=mutation_eval,
            parent_model=parents[0],  # type: ignore[arg-type]
        )
    try:
        report = bench_bands(
            bases={name: BAND_BASES[name] for name in names},
            calibration_samples=calibration_samples or None,
            bands=chosen,
            seed=seed,
            rounds=rounds,
            candidates=candidates,
            instance_seeds=instance_seeds,
            eval_instances=eval_instances,
            total_nodes=total_nodes,
            workers=workers,
            spread_seeds=spread_seeds,
            max_draws=max_draws,
            hard_margin=hard_margin,
            challenger=challenger,  # type: ignore[arg-type]
            search_specs=search_specs,
            search_seeds=search_seeds,
            search_holdout=search_holdout,
            mutation=mutation,
            compare_parents=parents[1:],  # type: ignore[arg-type]
            effort_seeds=effort_seeds,
        )
    except SpecError as error:
        exit_with_error(f"optiscribe bands: {error}", code=1)
    write_report(out, report, sort_keys=True)
    summary = {
        f: {
            b: {"first_draw": r["selfplay_in_band"], "verified": r["verified"]["delivered_in_band"]}
            | (
                {"best_uniform_spec": report["uniform_search"][f]["bands"][b]["held_out"]}
                if f in report["uniform_search"]
                else {}
            )
            | (
                {
                    "mutation_first_draw": r["mutation"]["first_draw_in_band"],
                    "mutation_verified": r["mutation"]["delivered_in_band"],
                }
                if "mutation" in r
                else {}
            )
            | {f"{key}_first_draw": r[key]["first_draw_in_band"] for key in r if key.startswith("mutation_")}
            for b, r in bs.items()
        }
        for f, bs in report["families"].items()
    }
    console.print_json(json.dumps(summary))
    console.print(f"wrote {out}")


def register(root: typer.Typer) -> None:
    """Add the `optiscribe` group to the root app."""
    root.add_typer(app, name="optiscribe")
