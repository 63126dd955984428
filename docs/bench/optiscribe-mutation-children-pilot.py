"""Pilot behind the README's "why a parent model cannot close the gap": children of delivered medium CFL instances.

Re-solves the 40 medium instances that `optiscribe-bands-cfl-mutation-seed0.json` delivered and 6 children of each
(sigma 0.01, mutation seeds 7919 i + c), under the bench's SCIP settings, and each parent again under SCIP seeds
1-4; then measures how well a parent's own node count, its first k children, or its robustness to SCIP's seed
(the share of the 5 seeds whose solve lands in the band) predict its children's in-band share. The children are
solved again under SCIP seeds 1-2 too, to measure what an effort taken as the median over 3 SCIP seeds
(`ScipSettings.effort_seeds`) does to the share that lands. Writes
`optiscribe-mutation-children-pilot.json` (raw node counts and the summary). About 14 min on 2 cores:
`python docs/bench/optiscribe-mutation-children-pilot.py` (or `--analyse` to recompute the summary from the JSON).
"""

import json
import math
import sys
from pathlib import Path

import numpy as np

HERE = Path(__file__).parent
OUT = HERE / "optiscribe-mutation-children-pilot.json"
CHILDREN = 6


def nodes_under(instances: list, seed: int) -> list[int]:
    """Each instance's node count under the bench's SCIP settings with SCIP seed `seed`."""
    from synth.generators.optiscribe.archive import solve_instances
    from synth.validators.optiscribe.scip import ScipSettings

    scip = ScipSettings(seed=seed, total_nodes=3000, time_limit=120)
    return [s.nodes for s in solve_instances(instances, scip=scip, workers=2)]


def by_parent(kid_nodes: list[int]) -> list[list[int]]:
    """Children's node counts cut into one row of `CHILDREN` per parent."""
    return [kid_nodes[i : i + CHILDREN] for i in range(0, len(kid_nodes), CHILDREN)]


def solve() -> dict:
    from synth.generators.optiscribe.archive import Instance
    from synth.generators.optiscribe.build import Mutation

    bench = json.loads((HERE / "optiscribe-bands-cfl-mutation-seed0.json").read_text())
    medium = bench["families"]["facility_location"]["medium"]
    parents = [Instance.from_dict(d) for d in medium["mutation"]["delivered"]]
    kids = [p.child(Mutation(7919 * i + c, 0.01)) for i, p in enumerate(parents) for c in range(CHILDREN)]
    nodes = nodes_under(parents + kids, 0)
    raw = {"band": medium["effort_band"], "sigma": 0.01, "parents": nodes[: len(parents)]}
    return raw | {
        "children": by_parent(nodes[len(parents) :]),
        "parents_by_scip_seed": {str(seed): nodes_under(parents, seed) for seed in (1, 2, 3, 4)},
        "children_by_scip_seed": {str(seed): by_parent(nodes_under(kids, seed)) for seed in (1, 2)},
    }


def median_of_three(raw: dict) -> dict:
    """In-band shares when every node count is the median over SCIP seeds 0-2, against seed 0 alone."""
    low, high = raw["band"]

    def inside(nodes: np.ndarray) -> np.ndarray:
        return (low <= np.maximum(nodes, 1)) & (np.maximum(nodes, 1) <= high)

    kids = np.array([raw["children"], *raw["children_by_scip_seed"].values()])
    parents = np.array([raw["parents"], *raw["parents_by_scip_seed"].values()])
    median_kids, median_parents = np.median(kids, axis=0), np.median(parents[:3], axis=0)
    robust = inside(parents).all(axis=0)
    return {
        "children_in_band_by_scip_seed": [round(float(inside(k).mean()), 4) for k in kids],
        "children_in_band_median": round(float(inside(median_kids).mean()), 4),
        "children_in_band_all_three_seeds": round(float(inside(kids).all(axis=0).mean()), 4),
        "parents_in_band_median": int(inside(median_parents).sum()),
        "their_children_in_band_seed0": round(float(inside(kids[0][inside(median_parents)]).mean()), 4),
        "their_children_in_band_median": round(float(inside(median_kids[inside(median_parents)]).mean()), 4),
        "parents_in_band_under_all_5_seeds": int(robust.sum()),
        "robust_parents_children_in_band_median": round(float(inside(median_kids[robust]).mean()), 4),
    }


def analyse(raw: dict) -> dict:
    from synth.generators.optiscribe.archive import band_log_edges, in_band_probability, pooled_tau
    from synth.validators.optiscribe.difficulty import EffortBand

    low, high = raw["band"]
    edges = band_log_edges(EffortBand(low, high, "medium"))
    parents = np.log(np.maximum(raw["parents"], 1))
    kids = np.array(raw["children"])
    logs = np.log(np.maximum(kids, 1))
    landed = (low <= kids) & (kids <= high)
    deviation = (logs - parents[:, None]).ravel()
    centre_distance = np.abs(parents - sum(edges) / 2)
    near = centre_distance <= np.median(centre_distance)
    predictors = {}
    for fitted in range(4):  # a parent and its first `fitted` children predict the rest
        later = landed[:, fitted:].mean(axis=1)
        counts = (1 + landed[:, :fitted].sum(axis=1)) / (2 + fitted)
        groups = [np.r_[parents[i], logs[i, :fitted]] for i in range(len(parents))]
        tau = pooled_tau(groups)  # a child scatters around its group's mean with the mean's own error added
        lognormal = [in_band_probability(g.mean(), tau * math.sqrt(1 + 1 / len(g)), edges) for g in groups]
        predictors[f"first_{fitted}_children"] = {
            "count_correlation": None if fitted == 0 else round(float(np.corrcoef(counts, later)[0, 1]), 3),
            "lognormal_correlation": round(float(np.corrcoef(lognormal, later)[0, 1]), 3),
        }
    seeds = np.array([raw["parents"], *raw["parents_by_scip_seed"].values()])
    robust = ((low <= seeds) & (seeds <= high)).mean(axis=0)
    share = landed.mean(axis=1)
    robustness = {
        "correlation": round(float(np.corrcoef(robust, share)[0, 1]), 3),
        "children_in_band_by_parent_seed_share": {
            str(round(float(v), 2)): {
                "parents": int((robust == v).sum()),
                "children_in_band": round(float(share[robust == v].mean()), 4),
            }
            for v in sorted(set(robust))
        },
    }
    return {
        "children_in_band": round(float(landed.mean()), 4),
        "children_in_band_nearer_half": round(float(landed[near].mean()), 4),
        "children_in_band_farther_half": round(float(landed[~near].mean()), 4),
        "log_deviation_quantiles": {
            str(q): round(float(np.quantile(deviation, q)), 3) for q in (0.05, 0.1, 0.25, 0.5, 0.75, 0.9, 0.95)
        },
        "misses_below": int((kids < low).sum()),
        "misses_above": int((kids > high).sum()),
        "prediction_of_later_children": predictors,
        "parent_robustness_to_scip_seed": robustness,
        "median_of_three_scip_seeds": median_of_three(raw) if "children_by_scip_seed" in raw else None,
    }


if __name__ == "__main__":
    raw = json.loads(OUT.read_text())["raw"] if "--analyse" in sys.argv else solve()
    OUT.write_text(json.dumps({"raw": raw, "summary": analyse(raw)}, indent=1) + "\n")
    print(json.dumps(analyse(raw), indent=1))
