import pytest

from synth.generators.dasa.tasks import make_pairs

torch = pytest.importorskip("torch")
objective = pytest.importorskip("synth.generators.dasa.objective")
synthesize = pytest.importorskip("synth.generators.dasa.synthesize")


def activations(reference, pairs, *, targets=("q_proj", "down_proj")):
    from synth.generators.dasa.base_lm import encode_pairs

    ids, labels, mask = encode_pairs(pairs, reference.tokenizer)
    for p in reference.model.parameters():
        p.requires_grad_(False)
    modules = objective.target_modules(reference.model, targets)
    embeds = reference.model.get_input_embeddings().weight[ids]
    return modules, embeds, labels, mask


def test_hooked_gradient_equals_autograd_weight_gradient_and_gram_norm(reference):
    modules, embeds, labels, mask = activations(reference, make_pairs("shift", 4, seed=0))
    acts, _ = objective.layer_activations(reference.model, modules, embeds.requires_grad_(True), labels, mask)
    name, module = modules[0]
    module.weight.requires_grad_(True)
    loss = reference.model(inputs_embeds=embeds.detach(), attention_mask=mask, labels=labels).loss
    (expected,) = torch.autograd.grad(loss, [module.weight])
    module.weight.requires_grad_(False)
    grad = acts[name].gradient()
    torch.testing.assert_close(grad, expected, rtol=1e-4, atol=1e-7)
    torch.testing.assert_close(objective.gram_norm_sq(acts[name]), grad.pow(2).sum(), rtol=1e-4, atol=1e-12)


def test_full_rank_lowrank_space_gives_the_full_cosine(reference):
    modules, embeds, labels, mask = activations(reference, make_pairs("shift", 8, seed=0))
    kwargs = {"labels": labels[4:], "attention_mask": mask[4:], "rank": 1000, "seed": 0}
    full = objective.desired_update(reference.model, modules, embeds[4:], space="full", **kwargs)
    low = objective.desired_update(reference.model, modules, embeds[4:], space="lowrank", **kwargs)
    syn = embeds[:4].detach().requires_grad_(True)
    acts, _ = objective.layer_activations(reference.model, modules, syn, labels[:4], mask[:4])
    torch.testing.assert_close(objective.alignment(low, acts), objective.alignment(full, acts), rtol=1e-4, atol=1e-5)


@pytest.mark.parametrize("space", ["full", "lora", "lowrank"])
def test_optimised_embeddings_align_better_than_their_start_and_random_embeddings(reference, space):
    source = make_pairs("shift", 16, seed=0)
    settings = synthesize.DasaSettings(steps=8, groups=2, space=space, rank=4)
    rows = synthesize.synthesize_dasa(reference, source, m=4, settings=settings, seed=0)
    rand = synthesize.synthesize_dasa(
        reference,
        source,
        m=4,
        settings=synthesize.DasaSettings(steps=0, groups=2, space=space, rank=4, init="random"),
        seed=0,
    )
    assert rows.inputs_embeds.shape[:2] == rows.labels.shape and rows.inputs_embeds.shape[0] == 4
    assert all(end > start + 0.02 for start, end in zip(rows.alignment_start, rows.alignment, strict=True))
    assert min(rows.alignment) > max(rand.alignment)
    assert rows.group == [0, 0, 1, 1]


def test_synthesis_is_byte_identical_per_seed(reference):
    source = make_pairs("shift", 16, seed=0)
    settings = synthesize.DasaSettings(steps=3, groups=2)
    a = synthesize.synthesize_dasa(reference, source, m=4, settings=settings, seed=5)
    b = synthesize.synthesize_dasa(reference, source, m=4, settings=settings, seed=5)
    c = synthesize.synthesize_dasa(reference, source, m=4, settings=settings, seed=6)
    assert a.inputs_embeds.numpy().tobytes() == b.inputs_embeds.numpy().tobytes()
    assert not torch.equal(a.inputs_embeds, c.inputs_embeds)


def test_snapshots_keep_the_rows_after_k_steps_with_growing_times(reference):
    source = make_pairs("shift", 8, seed=0)
    settings = synthesize.DasaSettings(steps=3, groups=1)
    rows = synthesize.synthesize_dasa(reference, source, m=2, settings=settings, seed=0, snapshots=(0, 2))
    assert set(rows.snapshots) == {0, 2}
    weight = reference.model.get_input_embeddings().weight.detach()
    from synth.generators.dasa.base_lm import encode_pairs

    ids, _, _ = encode_pairs(source, reference.tokenizer)
    assert torch.equal(rows.snapshots[0][1], weight[ids[rows.source_index]])
    assert 0 < rows.snapshots[0][0] < rows.snapshots[2][0]
    plain = synthesize.synthesize_dasa(reference, source, m=2, settings=settings, seed=0)
    assert torch.equal(plain.inputs_embeds, rows.inputs_embeds)
    with pytest.raises(ValueError, match="groups"):
        synthesize.synthesize_dasa(
            reference, source, m=2, settings=synthesize.DasaSettings(steps=1, groups=2), seed=0, snapshots=(1,)
        )


def test_farthest_first_picks_the_farthest_row_each_time_and_repeats_past_all_rows():
    points = torch.tensor([[0.0], [1.0], [10.0], [4.0]])
    assert synthesize.farthest_first(points, 3, first=0).tolist() == [0, 2, 3]
    assert synthesize.farthest_first(points, 6, first=1).tolist() == [1, 2, 3, 0, 1, 2]


def test_kmeans_medoids_take_the_row_nearest_each_cluster_centre():
    points = torch.tensor([[0.0], [0.1], [0.3], [10.0], [10.2], [10.3], [20.0], [20.1], [20.2]])
    for seed in range(5):
        chosen = synthesize.kmeans_medoids(points, 3, torch.Generator().manual_seed(seed))
        assert sorted(chosen.tolist()) == [1, 4, 7]  # nearest the centres 0.13, 10.17, 20.1
    many = synthesize.kmeans_medoids(points, 12, torch.Generator().manual_seed(0)).tolist()
    assert sorted(many[:9]) == list(range(9)) and many[9:] == many[:3]


@pytest.mark.parametrize(("init", "radius"), [("coverage", "max"), ("medoids", "mean")])
def test_feature_start_rows_cover_the_source_better_than_a_draw_and_are_deterministic_per_seed(reference, init, radius):
    """`coverage` lowers the largest distance from a source row to its nearest start row, `medoids` the mean one."""
    source = make_pairs("cipher", 64, seed=0)
    model, _, weight = synthesize.frozen_reference(reference, targets=("q_proj",))
    batch = synthesize.encode_source(reference, source, groups=1, seed=0)
    features = synthesize.row_features(model, weight, batch)

    def start_rows(how, seed):
        settings = synthesize.DasaSettings(steps=0, groups=1, init=how)
        return synthesize.synthesize_dasa(reference, source, m=8, settings=settings, seed=seed).source_index

    def spread(rows):
        chosen = torch.tensor(rows)
        if radius == "max":
            return synthesize.max_distance_to(features, chosen)
        return float(torch.cdist(features, features[chosen]).min(dim=1).values.mean())

    for seed in (0, 1, 2):
        chosen = start_rows(init, seed)
        assert len(set(chosen)) == 8
        assert spread(chosen) < spread(start_rows("source", seed))
    assert start_rows(init, 3) == start_rows(init, 3)
    assert start_rows(init, 3) != start_rows(init, 4)


def test_self_states_takes_the_update_at_the_reference_once(reference, monkeypatch):
    calls = []
    real = synthesize.desired_update
    monkeypatch.setattr(synthesize, "desired_update", lambda *a, **k: calls.append(1) or real(*a, **k))
    source = make_pairs("shift", 8, seed=0)
    settings = synthesize.DasaSettings(steps=2, groups=1, target="self-states", rounds=2, state_steps=(0, 2))
    synthesize.synthesize_dasa(reference, source, m=2, settings=settings, seed=0)
    assert len(calls) == 3  # θ₀ (every run's step 0) once, step 2 once per round; no unused θ₀ target
    calls.clear()
    synthesize.synthesize_dasa(reference, source, m=2, settings=synthesize.DasaSettings(steps=1, groups=1), seed=0)
    assert len(calls) == 1  # one-step still takes its θ₀ target
