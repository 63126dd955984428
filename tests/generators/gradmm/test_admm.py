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
