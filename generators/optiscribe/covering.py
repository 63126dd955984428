"""Set cover (Balas & Ho 1980) and combinatorial auction (Leyton-Brown et al. 2000), Ecole-style.

Set cover: nnz = rows·cols·density nonzeros, each column covering at least two rows and each row covered at
least once, costs U{1..max_coef}; variables `x_j`, rows `cover_i`. Combinatorial auction: a simplified form of
the "arbitrary relationships" scheme (common item values, bidder deviations, bundles grown item by item with
`add_item_prob` along a random compatibility matrix, super-additive prices, XOR substitute bids through dummy
items); variables `bid_b`, rows `item_k` and `xor_k`.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

import numpy as np

from synth.validators.optiscribe.spec import InstanceSpec

if TYPE_CHECKING:
    from pyscipopt import Model


def set_cover_rows(spec: InstanceSpec, rng: np.random.Generator) -> list[list[int]]:
    """For each column, the sorted rows it covers."""
    rows, cols = spec.sizes["rows"], spec.sizes["cols"]
    nnz = min(int(rows * cols * float(spec.density or 0.0)), rows * cols)
    counts = 2 + rng.multinomial(nnz - 2 * cols, np.full(cols, 1.0 / cols))
    counts = np.minimum(counts, rows)
    covering = [sorted(int(r) for r in rng.choice(rows, size=int(count), replace=False)) for count in counts]
    covered = np.zeros(rows, dtype=bool)
    for column in covering:
        covered[column] = True
    for row in np.flatnonzero(~covered):
        column = covering[int(rng.integers(cols))]
        column.append(int(row))
        column.sort()
    return covering


def build_set_cover(spec: InstanceSpec, rng: np.random.Generator) -> Model:
    """Set cover: min Σ c_j x_j with Σ_{j covers i} x_j ≥ 1 for every row i."""
    from pyscipopt import Model, quicksum

    covering = set_cover_rows(spec, rng)
    costs = rng.integers(1, int(spec.knobs["max_coef"]) + 1, size=len(covering))
    model = Model("set_cover")
    chosen = [model.addVar(f"x_{j}", vtype="B", obj=float(c)) for j, c in enumerate(costs)]
    by_row: list[list[int]] = [[] for _ in range(spec.sizes["rows"])]
    for j, column in enumerate(covering):
        for row in column:
            by_row[row].append(j)
    for i, columns in enumerate(by_row):
        model.addCons(quicksum(chosen[j] for j in columns) >= 1, name=f"cover_{i}")
    model.setMinimize()
    return model


def _grow_bundle(first: int, compatibility: np.ndarray, add_prob: float, rng: np.random.Generator) -> list[int]:
    bundle = [first]
    while rng.random() < add_prob and len(bundle) < len(compatibility):
        weights = compatibility[bundle].sum(axis=0)
        weights[bundle] = 0.0
        if weights.sum() <= 0:
            break
        bundle.append(int(rng.choice(len(weights), p=weights / weights.sum())))
    return sorted(bundle)


def auction_bids(spec: InstanceSpec, rng: np.random.Generator) -> list[tuple[list[int], float, int]]:
    """(items, price, bidder) of each bid; bids of one bidder are mutually exclusive."""
    items, wanted = spec.sizes["items"], spec.sizes["bids"]
    knobs = spec.knobs
    values = 1 + 99 * rng.random(items)
    compatibility = np.triu(rng.random((items, items)), k=1)
    compatibility = compatibility + compatibility.T
    bids: list[tuple[list[int], float, int]] = []
    bidder = 0
    while len(bids) < wanted:
        private = np.maximum(values + 100 * float(knobs["value_deviation"]) * (2 * rng.random(items) - 1), 1.0)
        offers = min(int(rng.integers(1, int(knobs["max_sub_bids"]) + 1)), wanted - len(bids))
        firsts = rng.choice(items, size=offers, replace=offers > items)
        seen: set[tuple[int, ...]] = set()
        for first in firsts:
            bundle = _grow_bundle(int(first), compatibility, float(knobs["add_item_prob"]), rng)
            if tuple(bundle) in seen:
                continue
            seen.add(tuple(bundle))
            price = float(private[bundle].sum()) ** (1 + float(knobs["additivity"]))
            bids.append((bundle, round(price, 4), bidder))
        bidder += 1
    return bids


def build_combinatorial_auction(spec: InstanceSpec, rng: np.random.Generator) -> Model:
    """Winner determination: max Σ price_b bid_b with each item sold at most once, one bid per bidder."""
    from pyscipopt import Model, quicksum

    bids = auction_bids(spec, rng)
    model = Model("combinatorial_auction")
    chosen = [model.addVar(f"bid_{b}", vtype="B", obj=price) for b, (_, price, _) in enumerate(bids)]
    for item in range(spec.sizes["items"]):
        holders = [b for b, (bundle, _, _) in enumerate(bids) if item in bundle]
        if holders:
            model.addCons(quicksum(chosen[b] for b in holders) <= 1, name=f"item_{item}")
    by_bidder: dict[int, list[int]] = {}
    for b, (_, _, bidder) in enumerate(bids):
        by_bidder.setdefault(bidder, []).append(b)
    for bidder, members in sorted(by_bidder.items()):
        if len(members) > 1:
            model.addCons(quicksum(chosen[b] for b in members) <= 1, name=f"xor_{bidder}")
    model.setMaximize()
    return model
