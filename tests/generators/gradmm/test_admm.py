import pytest

from synth.generators.dasa.tasks import make_pairs

torch = pytest.importorskip("torch")
admm = pytest.importorskip("synth.generators.gradmm.admm")


def test_projection_of_token_embeddings_returns_the_tokens_and_lm_choice_raises_likelihood(reference):
    from synth.generators.dasa.base_lm import encode_pairs

    ids, _, mask = encode_pairs(make_pairs("copy", 6, seed=0), reference.tokenizer)
    weight = reference.model.get_input_embeddings().weight.detach()
    assert torch.equal(admm.project(reference.model, weight[ids], mask, weight, top_k=1), ids)
    noisy = (
        weight[ids]
        + 0.5
        * weight.norm(dim=-1).mean()
        * torch.randn(weight[ids].shape, generator=torch.Generator().manual_seed(0))
        / weight.shape[1] ** 0.5
    )
    nearest = admm.project(reference.model, noisy, mask, weight, top_k=1)
    chosen = admm.project(reference.model, noisy, mask, weight, top_k=20)

    def nll(tokens):
        labels = tokens.masked_fill(mask == 0, -100)
        with torch.no_grad():
            return float(reference.model(input_ids=tokens, attention_mask=mask, labels=labels).loss)

    assert nll(chosen) < nll(nearest)


def test_free_positions_are_the_prompt_content_only():
    from synth.generators.dasa.base_lm import ByteTokenizer, encode_pairs

    _, labels, mask = encode_pairs([("abc>", "bcd"), ("12+3=", "15")], ByteTokenizer())
    free = admm.free_positions(labels, mask)
    # bos a b c > b c d eos | bos 1 2 + 3 = 1 5 eos
    assert free[0].tolist() == [False, True, True, True, False, False, False, False, False]
    assert free[1].tolist() == [False, True, True, True, True, False, False, False, False]
    assert torch.equal(admm.free_positions(labels, mask, free="all"), mask.bool())


def test_projection_keeps_clamped_positions_and_draws_from_the_given_vocabulary(reference):
    from synth.generators.dasa.base_lm import encode_pairs

    ids, labels, mask = encode_pairs(make_pairs("shift", 6, seed=0), reference.tokenizer)
    weight = reference.model.get_input_embeddings().weight.detach()
    point = torch.randn(weight[ids].shape, generator=torch.Generator().manual_seed(0))
    vocabulary = admm.source_vocabulary(ids, mask)
    free = admm.free_positions(labels, mask)
    out = admm.project(reference.model, point, mask, weight, top_k=3, free=free, clamp=ids, vocabulary=vocabulary)
    assert torch.equal(out[~free], ids[~free])
    assert set(out[free].tolist()) <= set(vocabulary.tolist())


def test_gradmm_rows_keep_labels_that_follow_their_inputs(reference):
    """Regression: the first GRADMM projected every position, so the response inputs were rewritten (96% on the
    shift task) while the source labels stayed and the downstream LoRA learnt nothing (exact match 0.00)."""
    source = make_pairs("add", 12, seed=0)
    settings = admm.GradmmSettings(steps=2, inner_steps=2, groups=2, top_k=4)
    rows = admm.synthesize_gradmm(reference, source, m=4, settings=settings, seed=0)
    response = rows.labels != -100
    # labels are aligned with the inputs (the model shifts them): each response label is the token read there
    assert torch.equal(rows.labels[response], rows.input_ids[response])
    from synth.generators.dasa.base_lm import encode_pairs

    ids, labels, mask = encode_pairs([source[i] for i in rows.source_index], reference.tokenizer)
    free = admm.free_positions(labels, mask)
    assert torch.equal(rows.input_ids[~free], ids[~free]) and torch.equal(rows.labels, labels)
    old = admm.GradmmSettings(steps=1, inner_steps=1, groups=2, top_k=50, free="all", vocabulary="all")
    broken = admm.synthesize_gradmm(reference, source, m=4, settings=old, seed=0)
    assert not torch.equal(broken.input_ids[~free & mask.bool()], ids[~free & mask.bool()])


def test_gradmm_rows_are_token_rows_and_deterministic(reference):
    source = make_pairs("shift", 16, seed=0)
    settings = admm.GradmmSettings(steps=2, inner_steps=2, groups=2)
    a = admm.synthesize_gradmm(reference, source, m=4, settings=settings, seed=3)
    b = admm.synthesize_gradmm(reference, source, m=4, settings=settings, seed=3)
    weight = reference.model.get_input_embeddings().weight.detach()
    assert a.input_ids.shape == a.labels.shape and a.input_ids.shape[0] == 4
    assert torch.equal(a.inputs_embeds, weight[a.input_ids])
    assert torch.equal(a.input_ids, b.input_ids) and a.alignment == b.alignment
    assert all(-1.0 <= x <= 1.0 for x in a.alignment) and a.group == [0, 0, 1, 1]


def test_gradmm_snapshots_start_from_the_source_ids(reference):
    from synth.generators.dasa.base_lm import encode_pairs

    source = make_pairs("shift", 8, seed=0)
    settings = admm.GradmmSettings(steps=2, inner_steps=1, groups=1)
    rows = admm.synthesize_gradmm(reference, source, m=2, settings=settings, seed=0, snapshots=(0, 1, 2))
    ids, _, _ = encode_pairs(source, reference.tokenizer)
    assert torch.equal(rows.snapshots[0][1], ids[rows.source_index])  # k = 1: the nearest token of each token
    assert torch.equal(rows.snapshots[2][1], rows.input_ids)
    assert rows.snapshots[0][0] < rows.snapshots[1][0] < rows.snapshots[2][0]
