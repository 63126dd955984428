"""OptiScribe end to end: synth run on a tiny self-play config, synth verify re-solving every kept row, reruns."""

import json

import pyarrow.parquet as pq
import pytest
import yaml
from typer.testing import CliRunner

pytest.importorskip("pyscipopt")
pytest.importorskip("ortools")

from synth.cli.app import app

runner = CliRunner()
TINY = {
    "domain": "optiscribe",
    "seed": 3,
    "shards": 2,
    "generator": {
        "curriculum": [
            "a max-cut problem with 12 nodes, density 0.4",
            "a max-cut problem with 14 nodes, density 0.4",
        ],
        "rounds": 2,
        "candidates": 3,
        "advance_reward": 0.2,
        "scip": {"total_nodes": 1000},
    },
}


def invoke(*args):
    return runner.invoke(app, [str(a) for a in args])


def write_config(path, data):
    path.write_text(yaml.safe_dump(data))
    return path


@pytest.fixture(scope="module")
def dataset(tmp_path_factory):
    root = tmp_path_factory.mktemp("optiscribe")
    out = root / "out"
    result = invoke("run", write_config(root / "tiny.yaml", TINY), "--out", out, "--no-progress")
    assert result.exit_code == 0, result.output
    return out


def test_rows_carry_instruction_spec_model_statistics_checks_and_reward(dataset):
    kept = pq.read_table(dataset / "data").to_pylist()
    rejected = pq.read_table(dataset / "rejected").to_pylist()
    assert len(kept) + len(rejected) == 2 * 2 * 3
    assert kept, "every instance was filtered"
    for row in kept:
        spec = json.loads(row["spec"])
        assert spec["family"] == "max_cut" and spec["sizes"]["nodes"] in (12, 14)
        assert row["model_text"].startswith("\\ SCIP STATISTICS") and row["model_format"] == "lp"
        assert row["scip_nodes"] == row["solve_nodes"] and row["scip_feasible"] == 1.0
        assert not (row["scip_nodes"] <= 1 and row["scip_postcut_gap"] == 0.0)
        assert row["ortools_agrees"] == 1.0 and row["instruction_followed"] == 1.0
        assert row["reward_reward"] == row["reward"] > 0
        assert json.loads(row["scip_settings"])["total_nodes"] == 1000
        assert row["round"] in (0, 1) and row["challenger"] == "cem"
        assert row["provenance"]["generator"] == "optiscribe-cem"
    assert all(r["filter_reason"].startswith(("reward:trivial", "scip:")) for r in rejected)


def test_verify_re_solves_every_kept_row_to_the_same_status_and_nodes(dataset):
    result = invoke("verify", dataset, "--json")
    assert result.exit_code == 0, result.output
    report = json.loads(result.stdout)
    kept = pq.read_table(dataset / "data").num_rows
    assert report["ok"] and report["verifiers"]["scip"] == {"checked": kept, "mismatched": 0}


def test_mutation_rounds_write_children_that_rebuild_and_verify(tmp_path):
    from synth.generators.optiscribe.build import Mutation, build_model_text
    from synth.validators.optiscribe.spec import InstanceSpec

    generator = {**TINY["generator"], "curriculum": ["a max-cut problem with 12 nodes, density 0.4, easy"]}
    mutation = {"rounds": 1, "mutation_rounds": 2, "mutation_sigma": 0.05, "mutation_parents": "lognormal"}
    config = dict(TINY, shards=1, generator={**generator, **mutation})
    out = tmp_path / "out"
    result = invoke("run", write_config(tmp_path / "mutate.yaml", config), "--out", out, "--no-progress")
    assert result.exit_code == 0, result.output
    rows = pq.read_table(out / "data").to_pylist() + pq.read_table(out / "rejected").to_pylist()
    children = [r for r in rows if r["round"] >= 1]
    assert len(rows) == 9 and len(children) == 6
    assert all(json.loads(r["instance_mutations"]) == [] for r in rows if r["round"] == 0)
    for row in children:
        mutations = [Mutation.from_list(m) for m in json.loads(row["instance_mutations"])]
        assert mutations and json.loads(row["policy"])["kind"] == "mutation"
        spec = InstanceSpec.from_json(row["spec"])
        assert row["model_text"] == build_model_text(spec, seed=row["instance_seed"], mutations=mutations)
    verified = invoke("verify", out, "--json")
    assert verified.exit_code == 0 and json.loads(verified.stdout)["ok"], verified.output


def test_an_effort_over_three_scip_seeds_is_recorded_filtered_on_and_re_verified(tmp_path):
    generator = {**TINY["generator"], "curriculum": TINY["generator"]["curriculum"][:1], "rounds": 1}
    config = dict(TINY, shards=1, generator={**generator, "scip": {"total_nodes": 1000, "effort_seeds": 3}})
    out = tmp_path / "out"
    result = invoke("run", write_config(tmp_path / "median.yaml", config), "--out", out, "--no-progress")
    assert result.exit_code == 0, result.output
    rows = pq.read_table(out / "data").to_pylist() + pq.read_table(out / "rejected").to_pylist()
    assert len(rows) == 3
    for row in rows:
        counts = json.loads(row["solve_stats"])["nodes_by_seed"]
        assert len(counts) == 3 and row["solve_nodes"] == sorted(counts)[1]
        assert json.loads(row["scip_settings"])["effort_seeds"] == 3
    verified = invoke("verify", out, "--json")
    assert verified.exit_code == 0 and json.loads(verified.stdout)["ok"], verified.output


def test_same_seed_and_config_give_byte_identical_shards(dataset, tmp_path):
    again = tmp_path / "again"
    result = invoke("run", write_config(tmp_path / "tiny.yaml", TINY), "--out", again, "--no-progress")
    assert result.exit_code == 0, result.output
    for part in ("data", "rejected"):
        first = sorted((dataset / part).glob("*.parquet"))
        second = sorted((again / part).glob("*.parquet"))
        assert [p.name for p in first] == [p.name for p in second]
        assert all(a.read_bytes() == b.read_bytes() for a, b in zip(first, second, strict=True))


def test_a_bad_instruction_in_the_config_is_a_one_line_error(tmp_path):
    bad = dict(TINY, generator={"curriculum": ["a travelling salesman problem with 30 cities"]})
    result = invoke("run", write_config(tmp_path / "bad.yaml", bad), "--out", tmp_path / "out")
    assert result.exit_code == 2
    lines = [line for line in result.output.splitlines() if line.strip()]
    assert len(lines) == 1 and "generator.curriculum" in lines[0] and "unknown family" in lines[0]


@pytest.mark.parametrize(
    ("instruction", "message"),
    [
        (
            "a max-cut problem with -5 nodes",
            "'-5 nodes' is not a size; size `nodes` must be a whole number of at least 3",
        ),
        (
            "a max-cut problem with 2.5 nodes",
            "'2.5 nodes' is not a size; size `nodes` must be a whole number of at least 3",
        ),
        (
            "a max-cut problem with twenty nodes",
            "'twenty nodes' is not read as a size; write it in digits (e.g. '30 nodes')",
        ),
    ],
)
def test_an_unreadable_size_is_refused_before_anything_is_built(tmp_path, instruction, message):
    result = invoke(
        "generate",
        "optiscribe",
        "--out",
        tmp_path / "out",
        "--set",
        f"generator.curriculum={json.dumps([instruction])}",
    )
    assert result.exit_code == 2
    lines = [line for line in result.output.splitlines() if line.strip()]
    assert len(lines) == 1 and lines[0].startswith("error: ") and "`curriculum[0]`: max_cut: " in lines[0]
    assert message in lines[0]
    assert not (tmp_path / "out").exists()


def test_export_writes_lp_and_mps_files_that_solve_like_the_rows(dataset, tmp_path):
    from synth.core.errors import OutputDirError
    from synth.generators.optiscribe.export import export_instances
    from synth.validators.optiscribe.scip import ScipSettings, solve_model_text

    report = export_instances(dataset, target=tmp_path / "instances")
    kept = pq.read_table(dataset / "data").to_pylist()
    assert report["instances"] == len(kept) and report["files"] == 2 * len(kept)
    row = kept[0]
    settings = ScipSettings(**json.loads(row["scip_settings"]))
    lp = (tmp_path / "instances" / f"{row['id']}.lp").read_text()
    mps = (tmp_path / "instances" / f"{row['id']}.mps").read_text()
    assert lp == row["model_text"]
    assert solve_model_text(mps, fmt="mps", settings=settings).primal_bound == row["scip_primal_bound"]
    with pytest.raises(OutputDirError, match="not empty"):
        export_instances(dataset, target=tmp_path / "instances")


def test_export_command_writes_both_formats_and_refuses_a_used_target(dataset, tmp_path):
    target = tmp_path / "files"
    result = runner.invoke(app, ["optiscribe", "export", str(dataset), "--target", str(target)])
    assert result.exit_code == 0, result.output
    report = json.loads(result.stdout)
    kept = pq.read_table(dataset / "data").num_rows
    assert report["instances"] == kept and report["files"] == 2 * kept
    assert len(list(target.glob("*.lp"))) == len(list(target.glob("*.mps"))) == kept
    again = runner.invoke(app, ["optiscribe", "export", str(dataset), "--target", str(target)])
    assert again.exit_code != 0 and "not empty" in again.output
    bad = runner.invoke(app, ["optiscribe", "export", str(dataset), "--formats", "nl"])
    assert bad.exit_code == 2 and "unknown format 'nl'" in bad.output


@pytest.mark.parametrize(
    ("generator", "fragment"),
    [
        (
            {"curriculum": ["a max-cut problem with 12 nodes, needs about 9000 nodes"], "scip": {"total_nodes": 1000}},
            "needs at least 3000 nodes, not below the node cap 1000",
        ),
        ({"scip": {"emphasis": "fastest"}}, "unknown emphasis 'fastest'"),
        ({"scip": {"meta": {"separating": "sometimes"}}}, "meta setting separating='sometimes'"),
        ({"challenger": "llm", "instance_seeds": 3}, "instance_seeds > 1 needs a spec challenger"),
        ({"mutation_rounds": 1}, "mutation_rounds > 0 needs every curriculum instruction to ask a difficulty"),
        ({"mutation_parents": "best"}, "mutation_parents"),
        ({"scip": {"effort_seeds": 2}}, "effort_seeds 2 must be odd"),
    ],
)
def test_an_unreachable_band_or_unknown_scip_setting_is_a_one_line_config_error(tmp_path, generator, fragment):
    bad = dict(TINY, generator={**TINY["generator"], **generator})
    result = invoke("run", write_config(tmp_path / "bad.yaml", bad), "--out", tmp_path / "out")
    assert result.exit_code == 2, result.output
    lines = [line for line in result.output.splitlines() if line.strip()]
    assert len(lines) == 1 and fragment in lines[0], lines
    assert not (tmp_path / "out").exists()


def test_tune_and_bands_refuse_bad_arguments_in_one_line(tmp_path):
    unknown = invoke("optiscribe", "tune", "sudoku", "--out", tmp_path / "t.json")
    assert unknown.exit_code == 2 and "unknown family 'sudoku'" in unknown.output
    two = invoke(
        "optiscribe", "tune", "max_cut", "knapsack", "--instruction", "a max-cut problem", "-o", tmp_path / "t"
    )
    assert two.exit_code == 2 and "exactly one family" in two.output
    band = invoke("optiscribe", "bands", "--bands", "easy,extreme", "--out", tmp_path / "b.json")
    assert band.exit_code == 2 and "unknown band 'extreme'" in band.output
    family = invoke("optiscribe", "bands", "--families", "max_cut,sudoku", "--out", tmp_path / "b.json")
    assert family.exit_code == 2 and "unknown family 'sudoku'" in family.output
    learner = invoke("optiscribe", "bands", "--challenger", "ga", "--out", tmp_path / "b.json")
    assert learner.exit_code == 2 and "unknown learner 'ga'" in learner.output
    seeds = invoke("optiscribe", "bands", "--effort-seeds", "2", "--out", tmp_path / "b.json")
    assert seeds.exit_code == 2 and "--effort-seeds: must be odd" in seeds.output
    assert not (tmp_path / "t.json").exists() and not (tmp_path / "b.json").exists()


def test_bands_measures_effort_over_several_scip_seeds_from_the_cli(tmp_path):
    out = tmp_path / "bands.json"
    tiny = ["--rounds", "1", "--candidates", "1", "--eval-instances", "1", "--max-draws", "1"]
    options = ["--families", "max_cut", "--bands", "about:30", "--calibration-samples", "0", "--spread-seeds", "0"]
    result = invoke("optiscribe", "bands", *options, *tiny, "--effort-seeds", "3", "--out", out)
    assert result.exit_code == 0, result.output
    report = json.loads(out.read_text())
    assert report["settings"]["scip"]["effort_seeds"] == 3
    band = report["families"]["max_cut"]["about 30"]
    assert band["effort_band"] == [10, 90] and len(band["selfplay_nodes"]) == 1


def test_bands_measures_the_random_search_baseline_from_the_cli(tmp_path):
    out = tmp_path / "bands.json"
    tiny = ["--rounds", "1", "--candidates", "1", "--eval-instances", "1", "--max-draws", "1"]
    search = ["--search-specs", "2", "--search-seeds", "1", "--search-holdout", "2"]
    options = ["--families", "max_cut", "--bands", "easy", "--calibration-samples", "3", "--spread-seeds", "0"]
    result = invoke("optiscribe", "bands", *options, *tiny, *search, "--out", out)
    assert result.exit_code == 0, result.output
    report = json.loads(out.read_text())
    easy = report["uniform_search"]["max_cut"]["bands"]["easy"]
    assert easy["effort_band"] == report["families"]["max_cut"]["easy"]["effort_band"]
    assert len(easy["in_sample_rates"]) == 2 and len(easy["held_out_nodes"]) == 2
    assert report["settings"]["search_specs"] == 2
    assert f'"best_uniform_spec": {easy["held_out"]}' in result.output


def test_bands_measures_the_mutation_challenger_from_the_cli(tmp_path):
    out = tmp_path / "bands.json"
    tiny = ["--rounds", "1", "--candidates", "2", "--eval-instances", "1", "--max-draws", "2"]
    mutation = [
        "--mutation-rounds",
        "1",
        "--mutation-children",
        "2",
        "--mutation-eval",
        "3",
        "--mutation-sigma",
        "0.05",
        "--mutation-parents",
        "beta,lognormal",
    ]
    options = ["--families", "max_cut", "--bands", "hard", "--calibration-samples", "3", "--spread-seeds", "0"]
    result = invoke("optiscribe", "bands", *options, *tiny, *mutation, "--out", out)
    assert result.exit_code == 0, result.output
    report = json.loads(out.read_text())
    assert report["settings"]["mutation"] == {
        "rounds": 1, "children": 2, "sigma": 0.05, "eval_instances": 3, "min_children": 2, "parent_model": "beta"
    }  # fmt: skip
    assert report["settings"]["compare_parents"] == ["lognormal"]
    hard = report["families"]["max_cut"]["hard"]["mutation"]
    assert hard["seed_instances"] >= 1 and len(hard["delivered_nodes"]) == 3  # seed 0's self-play found a hard one
    assert f'"mutation_verified": {hard["delivered_in_band"]}' in result.output
    paired = report["families"]["max_cut"]["hard"]["mutation_lognormal"]
    assert paired["settings"]["parent_model"] == "lognormal" and paired["seed_instances"] == hard["seed_instances"]
    assert f'"mutation_lognormal_first_draw": {paired["first_draw_in_band"]}' in result.output
    bad = invoke("optiscribe", "bands", *options, "--mutation-rounds", "1", "--mutation-sigma", "0", "-o", out)
    assert bad.exit_code == 2 and "--mutation-sigma: must be > 0" in bad.output
    unknown = invoke("optiscribe", "bands", *options, "--mutation-parents", "beta,best", "-o", out)
    assert unknown.exit_code == 2 and "--mutation-parents: unknown parent model 'best'" in unknown.output


def test_grpo_prompts_follow_a_size_curriculum_and_the_reward_scores_their_answers(dataset):
    from synth.generators.optiscribe.grpo_reward import curriculum_prompts
    from synth.trainers.grpo.rewards import make_reward

    prompts = curriculum_prompts(dataset)
    kept = pq.read_table(dataset / "data").to_pylist()
    assert len(prompts) == len({(r["instruction"], r["instance_seed"]) for r in kept})
    sizes = [int(p["columns"]["instruction"].split(" nodes")[0].split()[-1]) for p in prompts]
    assert sizes == sorted(sizes)
    first = prompts[0]
    row = next(r for r in kept if r["instance_seed"] == first["columns"]["instance_seed"])
    reward = make_reward("optiscribe_scip", total_nodes=1000, node_cap=5000)  # the tiny config's caps
    [score] = reward([list(first["messages"])], [row["spec"]], **{k: [v] for k, v in first["columns"].items()})
    assert score == pytest.approx(row["reward"], abs=1e-12)  # same spec, seed and node cap: the row's own reward
