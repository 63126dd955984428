import pytest

from synth.generators.dasa.base_lm import (
    IGNORE,
    ByteTokenizer,
    build_base_lm,
    encode_pairs,
    load_reference,
)
from synth.generators.dasa.lora import source_loss
from synth.generators.dasa.tasks import make_pairs, split_pairs

torch = pytest.importorskip("torch")
pytest.importorskip("transformers")


def test_tasks_are_deterministic_per_seed_and_split_disjointly():
    assert make_pairs("add", 5, seed=1) == make_pairs("add", 5, seed=1)
    assert make_pairs("add", 5, seed=1) != make_pairs("add", 5, seed=2)
    sums = [p.rstrip("=").split("+") for p, _ in make_pairs("add", 20, seed=0)]
    assert [str(int(a) + int(b)) for a, b in sums] == [r for _, r in make_pairs("add", 20, seed=0)]
    train, test = split_pairs("shift", train=50, test=20, seed=0)
    assert not {p for p, _ in train} & {p for p, _ in test}
    with pytest.raises(ValueError, match="unknown task 'nope'"):
        make_pairs("nope", 1, seed=0)


def test_encode_pairs_masks_the_prompt_and_padding():
    tok = ByteTokenizer()
    ids, labels, mask = encode_pairs([("ab>", "c"), ("a>", "bcd")], tok)
    assert ids.shape == labels.shape == mask.shape == (2, 7)
    assert labels[0].tolist() == [IGNORE] * 4 + [tok.encode("c")[0], tok.eos_id, IGNORE]
    assert mask[0].tolist() == [1] * 6 + [0]
    assert tok.decode(ids[1].tolist()) == "a>bcd"


def test_base_lm_is_byte_identical_per_seed_and_learns_copy(tmp_path, base_lm_dir):
    again = build_base_lm(tmp_path / "again", seed=0, steps=150)
    assert (again / "model.safetensors").read_bytes() == (base_lm_dir / "model.safetensors").read_bytes()
    ref = load_reference(base_lm_dir)
    copy = make_pairs("copy", 32, seed=99)
    untrained = build_base_lm(tmp_path / "short", seed=0, steps=1)
    assert source_loss(ref.model, ref.tokenizer, copy) < 0.7 * source_loss(
        load_reference(untrained).model, ref.tokenizer, copy
    )
    assert ref.model_id.endswith(ref.embedding_hash) and ref.hidden_size == 64


def test_build_refuses_a_directory_made_with_other_settings(base_lm_dir):
    assert build_base_lm(base_lm_dir, seed=0, steps=150) == base_lm_dir
    with pytest.raises(ValueError, match="holds a base LM built with"):
        build_base_lm(base_lm_dir, seed=1, steps=150)
