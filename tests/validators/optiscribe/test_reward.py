"""The reward: a feasibility gate, monotone in nodes and post-cut gap, and the triviality test."""

from synth.validators.optiscribe.reward import RewardSettings, compute_reward, estimated_nodes, is_trivial


def test_infeasible_gets_zero_and_harder_gets_more():
    assert compute_reward({"feasible": False, "nodes": 900, "postcut_gap": 0.3}) == 0.0
    easy = compute_reward({"feasible": True, "status": "optimal", "nodes": 1, "postcut_gap": 0.0})
    more_nodes = compute_reward({"feasible": True, "status": "optimal", "nodes": 50, "postcut_gap": 0.0})
    more_gap = compute_reward({"feasible": True, "status": "optimal", "nodes": 50, "postcut_gap": 0.1})
    assert 0 < easy < more_nodes < more_gap <= 1.0


def test_caps_saturate_and_timeouts_are_penalised():
    settings = RewardSettings(node_cap=100, gap_cap=0.1)
    capped = compute_reward({"feasible": True, "status": "optimal", "nodes": 100, "postcut_gap": 0.1}, settings)
    beyond = compute_reward({"feasible": True, "status": "optimal", "nodes": 10**6, "postcut_gap": 0.9}, settings)
    assert capped == beyond == 1.0
    timeout = compute_reward({"feasible": True, "status": "timelimit", "nodes": 100, "postcut_gap": 0.1}, settings)
    assert timeout == 1.0 - settings.timeout_penalty


def test_trivial_means_one_node_and_no_gap():
    assert is_trivial(1, 0.0) and is_trivial(0, None)
    assert not is_trivial(1, 0.01) and not is_trivial(2, 0.0)


def test_a_node_capped_solve_is_paid_for_scips_tree_size_estimate():
    capped = {"feasible": True, "status": "totalnodelimit", "nodes": 500, "postcut_gap": 0.0}
    assert estimated_nodes({**capped, "treesize_estimate": 4000.0}) == 4000.0
    assert estimated_nodes({**capped, "treesize_estimate": 120.0}) == 500  # never below what was searched
    assert estimated_nodes({**capped, "treesize_estimate": None}) == estimated_nodes(capped) == 500
    finished = {**capped, "status": "optimal", "treesize_estimate": 4000.0}
    assert estimated_nodes(finished) == 500  # a finished search is paid its own count
    deep = compute_reward({**capped, "treesize_estimate": 4000.0})
    shallow = compute_reward({**capped, "treesize_estimate": 600.0})
    assert compute_reward(capped) < shallow < deep < compute_reward({**capped, "treesize_estimate": 10**6}) + 1e-12
    counted = RewardSettings(capped_nodes="count")  # version 2's pay: the capped count
    assert compute_reward({**capped, "treesize_estimate": 4000.0}, counted) == compute_reward(capped)
