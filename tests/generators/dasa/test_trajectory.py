import pytest

from synth.generators.dasa.tasks import make_pairs

torch = pytest.importorskip("torch")
pytest.importorskip("peft")
trajectory = pytest.importorskip("synth.generators.dasa.trajectory")
synthesize = pytest.importorskip("synth.generators.dasa.synthesize")


def token_rows(reference, n=16):
    from synth.generators.dasa.lora import rows_from_pairs

    return rows_from_pairs(make_pairs("shift", n, seed=0), reference.tokenizer)


def test_checkpoints_start_at_the_reference_and_refuse_impossible_requests():
    assert trajectory.checkpoints(60, 4) == [0, 15, 30, 45]
    assert trajectory.checkpoints(0, 1) == [0]
    with pytest.raises(ValueError, match="cannot place 5 states"):
        trajectory.checkpoints(3, 5)


def test_source_trajectory_records_lora_updates_and_leaves_the_reference_unchanged(reference):
    from synth.generators.dasa.base_lm import embedding_hash
    from synth.generators.dasa.lora import LORA_TARGETS

    before = {n: p.detach().clone() for n, p in reference.model.named_parameters()}
    deltas = trajectory.source_trajectory(
        reference, token_rows(reference), at=[0, 3], rank=4, lr=3e-3, batch_size=8, seed=0
    )
    assert sorted(deltas) == [0, 3]
    assert len(deltas[3]) == 2 * len(LORA_TARGETS)  # two decoder layers
    assert all(float(d.abs().max()) == 0.0 for d in deltas[0].values())  # B = 0 at init
    assert all(float(d.abs().max()) > 0.0 for d in deltas[3].values())
    after = dict(reference.model.named_parameters())
    assert sorted(after) == sorted(before) and all(torch.equal(after[n], p) for n, p in before.items())
    assert not any(p.requires_grad for p in after.values())
    assert embedding_hash(reference.model) == reference.embedding_hash


def test_shifted_weights_are_the_merged_adapter_and_come_back_exactly(reference):
    from synth.generators.dasa.lora import LORA_TARGETS, train_lora
    from synth.generators.dasa.objective import target_modules

    rows = token_rows(reference)
    deltas = trajectory.source_trajectory(reference, rows, at=[4], rank=4, lr=3e-3, batch_size=8, seed=1)[4]
    modules = target_modules(reference.model, LORA_TARGETS)
    batch = rows.batch(torch.arange(len(rows)))
    with torch.no_grad():
        plain = reference.model(**batch).loss
        with trajectory.shifted(modules, deltas):
            moved = reference.model(**batch).loss
        back = reference.model(**batch).loss
    adapter = train_lora(reference, rows, rank=4, steps=4, batch_size=8, lr=3e-3, seed=1)
    with torch.no_grad():
        merged = adapter(**batch).loss
    reference.model = adapter.unload()
    assert float(back) == float(plain) and float(moved) < float(plain)
    torch.testing.assert_close(moved, merged, rtol=1e-5, atol=1e-6)


@pytest.mark.parametrize("target", ["trajectory", "states"])
def test_trajectory_targets_raise_alignment_and_are_deterministic(reference, target):
    source = make_pairs("shift", 16, seed=0)
    settings = synthesize.DasaSettings(steps=6, groups=2, target=target, states=2, source_steps=4, source_batch=8)
    a = synthesize.synthesize_dasa(reference, source, m=4, settings=settings, seed=2)
    b = synthesize.synthesize_dasa(reference, source, m=4, settings=settings, seed=2)
    one = synthesize.synthesize_dasa(
        reference, source, m=4, settings=synthesize.DasaSettings(steps=6, groups=2), seed=2
    )
    assert a.inputs_embeds.numpy().tobytes() == b.inputs_embeds.numpy().tobytes()
    assert all(end > start for start, end in zip(a.alignment_start, a.alignment, strict=True))
    assert not torch.equal(a.inputs_embeds, one.inputs_embeds)
    assert a.source_index == one.source_index  # same start rows: only the desired update differs


def test_prompt_only_optimisation_keeps_the_response_inputs_on_their_tokens(reference):
    source = make_pairs("shift", 16, seed=0)
    settings = synthesize.DasaSettings(steps=4, groups=2, optimise="prompt")
    rows = synthesize.synthesize_dasa(reference, source, m=4, settings=settings, seed=0)
    weight = reference.model.get_input_embeddings().weight.detach()
    from synth.generators.dasa.base_lm import encode_pairs

    ids, _, _ = encode_pairs(source, reference.tokenizer)
    start = weight[ids[torch.tensor(rows.source_index)]]
    response = rows.labels != -100
    assert torch.equal(rows.inputs_embeds[response], start[response])
    assert not torch.equal(rows.inputs_embeds[~response], start[~response])
    assert all(end > start for start, end in zip(rows.alignment_start, rows.alignment, strict=True))


def test_self_states_tune_rows_at_their_own_lora_run_and_are_deterministic(reference):
    from synth.generators.dasa.base_lm import embedding_hash

    source = make_pairs("shift", 16, seed=0)
    settings = synthesize.DasaSettings(
        steps=4, groups=1, target="self-states", rounds=2, state_steps=(0, 3), source_batch=4
    )
    a = synthesize.synthesize_dasa(reference, source, m=4, settings=settings, seed=3, snapshots=(0, 2, 4))
    b = synthesize.synthesize_dasa(reference, source, m=4, settings=settings, seed=3)
    one = synthesize.synthesize_dasa(reference, source, m=4, settings=synthesize.DasaSettings(steps=4), seed=3)
    assert a.inputs_embeds.numpy().tobytes() == b.inputs_embeds.numpy().tobytes()
    assert a.source_index == one.source_index and not torch.equal(a.inputs_embeds, one.inputs_embeds)
    assert all(end > start for start, end in zip(a.alignment_start, a.alignment, strict=True))
    # snapshots count steps over all rounds; step 0 is the start rows, later ones moved
    assert sorted(a.snapshots) == [0, 2, 4]
    assert a.snapshots[0][0] < a.snapshots[2][0] < a.snapshots[4][0]
    assert torch.equal(a.snapshots[4][1], a.inputs_embeds)
    assert embedding_hash(reference.model) == reference.embedding_hash
    assert not any(p.requires_grad for p in reference.model.parameters())
    with pytest.raises(ValueError, match="rounds"):
        synthesize.synthesize_dasa(
            reference, source, m=4, settings=synthesize.DasaSettings(steps=2, target="self-states", rounds=0), seed=3
        )


def test_norm_target_is_the_mean_norm_of_the_source_tokens_not_the_vocabulary(reference):
    source = make_pairs("shift", 16, seed=0)
    batch = synthesize.encode_source(reference, source, groups=1, seed=0)
    weight = reference.model.get_input_embeddings().weight.detach()
    used = weight[batch.ids[batch.mask.bool()]].norm(dim=-1)
    assert float(synthesize.token_norm(weight, batch)) == pytest.approx(float(used.mean()))
    assert float(used.mean()) > 1.2 * float(weight.norm(dim=-1).mean())  # most byte ids were never trained
