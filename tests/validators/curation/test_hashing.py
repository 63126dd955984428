"""The curation kernels: MinHash estimates Jaccard, keys and shingles are fixed functions of the bytes, buckets
and the greedy keep rule resolve as documented."""

import numpy as np
import pyarrow as pa

from synth.validators.curation.buckets import BucketSpill, bucket_pairs, greedy_keep, second_key
from synth.validators.curation.hashing import (
    exact_keys,
    jaccard_pairs,
    minhash_signatures,
    permutations,
    shingle_sets,
    text_buffers,
)

TEXTS = [
    " ".join(f"w{i}" for i in range(60)),
    " ".join(f"w{i}" for i in range(60) if i != 30) + " zz",
    " ".join(f"v{i}" for i in range(60)),
    "",
]


def test_minhash_estimates_the_exact_shingle_jaccard():
    data, offsets = text_buffers(pa.array(TEXTS))
    a, b = permutations(512, seed=1)
    sig, shingles = minhash_signatures(data, offsets, ngram=5, unit="word", a=a, b=b)
    assert shingles.tolist() == [56, 56, 56, 0]
    starts, values = shingle_sets(data, offsets, 5, False, np.arange(4))
    exact = jaccard_pairs(np.array([0, 0]), np.array([1, 2]), starts, values)
    estimate = (sig[0] == sig[1]).mean(), (sig[0] == sig[2]).mean()
    assert abs(estimate[0] - exact[0]) < 0.06 and exact[0] > 0.8
    assert exact[1] == 0 and estimate[1] < 0.02
    assert (sig[3] == np.uint32(0xFFFFFFFF)).all()


def test_keys_are_fixed_functions_of_the_bytes():
    data, offsets = text_buffers(pa.array(["abc", "abc", "abd", None]))
    keys = exact_keys(data, offsets)
    assert (keys[0] == keys[1]).all() and not (keys[0] == keys[2]).any()
    assert int(keys[0, 0]) == 0xE71FA2190541574B  # FNV-1a 64 of b"abc": the same on every machine
    assert (keys[3] == exact_keys(*text_buffers(pa.array([""]))))[0].all()


def test_buckets_give_all_pairs_of_small_buckets_and_a_star_plus_chain_of_large(tmp_path):
    spill = BucketSpill(tmp_path, "t", partitions=3, two_keys=False)
    keys = np.array([7, 9, 7, 7, 5, 9], dtype=np.uint64)
    spill.add(keys, None, np.arange(6))
    records = np.concatenate(list(spill.partitions()))
    pairs = []
    for part in spill.partitions():
        pairs += bucket_pairs(part["k1"], second_key(part), part["row"], 8).tolist()
    assert sorted(map(tuple, pairs)) == [(0, 2), (0, 3), (1, 5), (2, 3)]
    assert len(records) == 6
    big = bucket_pairs(np.zeros(5, np.uint64), np.zeros(5, np.uint64), np.arange(5), 2)
    assert sorted(map(tuple, big.tolist())) == [(0, 1), (0, 2), (0, 3), (0, 4), (1, 2), (2, 3), (3, 4)]


def test_greedy_keep_drops_only_rows_directly_similar_to_a_kept_row():
    pairs = np.array([[0, 1], [1, 2], [2, 3]], dtype=np.int64)
    dropped, taken = np.zeros(4, dtype=bool), np.zeros(3, dtype=bool)
    greedy_keep(pairs, dropped, taken)
    assert dropped.tolist() == [False, True, False, True]
    assert taken.tolist() == [True, False, True]
