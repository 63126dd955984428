"""The CEM challenger: free dimensions of a request, learning from rewards, specs inside the request."""

import json

import numpy as np

from synth.generators.optiscribe.policy import CemPolicy, free_dimensions
from synth.validators.optiscribe.grammar import parse_instruction


def test_free_dimensions_are_what_the_instruction_leaves_open():
    request = parse_instruction("a facility location problem with 10-20 customers and 5 facilities, tight capacities")
    names = [d.name for d in free_dimensions(request)]
    assert names == [
        "size:customers",
        "knob:ratio",
        "knob:fixed_cost_scale",
        "knob:fixed_cost_exponent",
        "knob:assignment",
    ]
    fixed = parse_instruction("a facility location problem with 10 customers and 5 facilities, single-sourcing")
    assert "knob:assignment" not in [d.name for d in free_dimensions(fixed)]


def test_cem_moves_towards_rewarded_regions():
    request = parse_instruction("a facility location problem with 10 customers and 5 facilities")
    policy = CemPolicy()
    rng = np.random.default_rng(0)
    for _ in range(8):
        proposals = [policy.sample(request, rng) for _ in range(16)]
        # reward: low capacity ratio and single-sourcing, a known target the learner must find
        rewards = [(1 - p.draws["knob:ratio"]) + (p.draws["knob:assignment"] == "binary") for p in proposals]
        policy.update([p.draws for p in proposals], rewards)
    assert policy.means["knob:ratio"] < 0.15
    assert policy.probs["knob:assignment"]["binary"] > 0.9
    assert policy.stds["knob:ratio"] < 0.3
    assert CemPolicy.from_dict(json.loads(json.dumps(policy.to_dict()))) == policy


def test_sampled_specs_stay_inside_the_request():
    request = parse_instruction("a max-cut problem with 10-14 nodes, density between 0.2 and 0.5, weights from 1 to 3")
    policy = CemPolicy()
    rng = np.random.default_rng(1)
    for _ in range(30):
        spec = policy.sample(request, rng).spec
        assert 10 <= spec.sizes["nodes"] <= 14 and 0.2 <= spec.density <= 0.5
        assert spec.knobs["weight_low"] == 1 and spec.knobs["weight_high"] == 3


def test_equal_rewards_are_ranked_by_the_tiebreak():
    policy = CemPolicy(means={"d": 0.5}, stds={"d": 0.3}, elite_fraction=0.25, smoothing=1.0)
    proposals = [{"d": 0.1}, {"d": 0.2}, {"d": 0.8}, {"d": 0.9}]
    policy.update(proposals, [1.0] * 4, tiebreak=[0.0, 0.0, 0.0, 5.0])
    assert policy.means["d"] == 0.9
    policy.update(proposals, [1.0] * 4)
    assert policy.means["d"] == 0.1  # without a tiebreak, proposal order decides


def test_bandit_finds_the_best_arms_under_heavy_tailed_noise():
    from synth.generators.optiscribe.bandit import BanditPolicy

    request = parse_instruction("a facility location problem with 10 customers and 5 facilities")
    policy = BanditPolicy(bins=4)
    rng = np.random.default_rng(3)
    for _ in range(12):
        proposals = [policy.sample(request, rng) for _ in range(12)]
        # rare big rewards, more often with a low ratio and single-sourcing, as node counts behave
        rewards = [
            float(rng.random() < 0.1 + 0.5 * (p.draws["knob:ratio"] < 0.25) * (p.draws["knob:assignment"] == "binary"))
            for p in proposals
        ]
        policy.update([p.draws for p in proposals], rewards)
    best = policy.best_arms()
    assert best["knob:ratio"] == "0" and best["knob:assignment"] == "binary"
    assert sum(policy.counts["knob:ratio"].values()) == 144
    assert policy.counts["knob:ratio"]["0"] > 144 / 4  # it exploits the good arm
    assert BanditPolicy.from_dict(json.loads(json.dumps(policy.to_dict()))) == policy


def _ridge_reward(draws, rng):
    """Pays only when two knobs are set together (exponent near its top, scale in a narrow middle band), plus
    heavy noise: the shape of CFL's hard region at 100×100."""
    inside = draws["knob:fixed_cost_exponent"] > 0.8 and 0.25 < draws["knob:fixed_cost_scale"] < 0.45
    return float(inside) + 0.3 * rng.standard_normal()


def _trained_share(policy, request, *, seed: int) -> tuple[float, float]:
    """The share inside the ridge of the first round's proposals and of 32 drawn after 6 rounds of 8."""
    rng, noise = np.random.default_rng(seed), np.random.default_rng(100 + seed)
    first = []
    for _ in range(6):
        proposals = [policy.sample(request, rng) for _ in range(8)]
        first = first or [p.draws for p in proposals]
        policy.update([p.draws for p in proposals], [_ridge_reward(p.draws, noise) for p in proposals])
    after = [policy.sample(request, rng).draws for _ in range(32)]

    def share(draws):
        return sum(_ridge_reward(d, np.random.default_rng(0)) > 0.5 for d in draws) / len(draws)

    return share(first), share(after)


def test_gaussian_process_learner_finds_a_joint_region_the_cem_misses():
    from synth.generators.optiscribe.surrogate import GaussianProcessPolicy

    request = parse_instruction("a facility location problem with 10 customers and 5 facilities")
    gp = GaussianProcessPolicy()
    first, gp_share = _trained_share(gp, request, seed=0)
    _, cem_share = _trained_share(CemPolicy(), request, seed=0)
    assert first <= 0.25  # the uniform initial design: the region is 4 % of the box
    assert gp_share >= 0.5
    assert gp_share >= cem_share + 0.4  # same budget and noise: the CEM's one-round elites follow the noise
    assert len(gp.observations) == 48
    trained = gp.trained()  # after self-play: the posterior mean's best pool point, not a posterior draw
    assert trained.exploit and trained.observations == gp.observations and not gp.exploit
    rng = np.random.default_rng(7)
    exploited = [trained.sample(request, rng).draws for _ in range(16)]
    assert sum(_ridge_reward(d, np.random.default_rng(0)) > 0.5 for d in exploited) / 16 >= 0.9
    assert len({round(d["knob:ratio"], 6) for d in exploited}) > 8  # a fresh pool per draw: the specs still vary


def test_gaussian_process_state_round_trips_and_resumes_the_same_draws():
    from synth.generators.optiscribe.selfplay import policy_from_dict
    from synth.generators.optiscribe.surrogate import GaussianProcessPolicy

    request = parse_instruction("a facility location problem with 10 customers and 5 facilities")
    policy = GaussianProcessPolicy(initial_samples=4)
    rng = np.random.default_rng(5)
    proposals = [policy.sample(request, rng) for _ in range(6)]
    policy.update([p.draws for p in proposals], [float(p.draws["knob:ratio"]) for p in proposals])
    restored = policy_from_dict(json.loads(json.dumps(policy.to_dict())))
    assert isinstance(restored, GaussianProcessPolicy) and restored == policy
    assert restored.to_dict()["kind"] == "gp"
    ours = [policy.sample(request, np.random.default_rng(9)).spec for _ in range(2)]
    theirs = [restored.sample(request, np.random.default_rng(9)).spec for _ in range(2)]
    assert ours == theirs
    for spec in ours:  # after the initial design the draws come from the fitted model, still inside the request
        assert spec.sizes == {"customers": 10, "facilities": 5}
        assert 1.0 <= spec.knobs["ratio"] <= 10.0
