import pytest

from synth.generators.dasa.lora import TrainRows, rows_from_pairs, source_loss, train_lora
from synth.generators.dasa.tasks import make_pairs

torch = pytest.importorskip("torch")
pytest.importorskip("peft")


def test_lora_on_tokens_and_on_their_embeddings_is_the_same_training(reference):
    pairs = make_pairs("shift", 32, seed=0)
    held = make_pairs("shift", 32, seed=1)
    before = source_loss(reference.model, reference.tokenizer, held)
    tokens = rows_from_pairs(pairs, reference.tokenizer)
    model = train_lora(reference, tokens, steps=15, seed=3)
    after_tokens = source_loss(model, reference.tokenizer, held)
    reference.model = model.unload()
    assert after_tokens < 0.9 * before
    embeds = reference.model.get_input_embeddings().weight.detach()[tokens.input_ids]
    rows = TrainRows(labels=tokens.labels, attention_mask=tokens.attention_mask, inputs_embeds=embeds)
    model = train_lora(reference, rows, steps=15, seed=3)
    after_embeds = source_loss(model, reference.tokenizer, held)
    reference.model = model.unload()
    assert after_embeds == pytest.approx(after_tokens, rel=1e-4)


def test_train_rows_need_exactly_one_input():
    with pytest.raises(ValueError, match="exactly one"):
        TrainRows(labels=torch.zeros(1, 2), attention_mask=torch.ones(1, 2))
