from synth.generators.dasa.tasks import ALPHABET, CIPHER, answer, make_pairs, split_pairs


def test_increment_adds_one_in_base_16_with_carry():
    assert answer("increment", "abc>") == "abd"
    assert answer("increment", "afp>") == "aga"
    assert answer("increment", "ppp>") == "aaa"  # wraps within the numeral's width
    assert all(len(p) == len(r) + 1 for p, r in make_pairs("increment", 50, seed=0))


def test_cipher_is_a_fixed_permutation_of_the_alphabet():
    assert sorted(CIPHER) == sorted(CIPHER.values()) == list(ALPHABET)
    assert any(k != v for k, v in CIPHER.items())
    assert answer("cipher", "ab>") == CIPHER["a"] + CIPHER["b"]


def test_every_letter_task_example_is_its_own_correct_answer_and_bad_prompts_have_none():
    for task in ("copy", "reverse", "shift", "sort", "increment", "cipher"):
        train, test = split_pairs(task, train=40, test=10, seed=1)
        assert all(answer(task, p) == r for p, r in train + test)
    assert answer("shift", "ab<") is None and answer("shift", "a z>") is None and answer("shift", ">") is None
    assert answer("add", "1+2=") is None
