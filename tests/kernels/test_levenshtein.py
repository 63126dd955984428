"""Levenshtein kernels: the numpy reference and the triton kernel against rapidfuzz, exact on every pair.

Triton decides when it is first imported whether its library runs interpreted, so the interpreter checks run in one
child process started with TRITON_INTERPRET=1; nothing leaks into this process or the other tests.
"""

from __future__ import annotations

import doctest
import importlib.util
import json
import os
import subprocess
import sys
import time

import numpy as np
import pyarrow as pa
import pytest
from rapidfuzz.distance import Levenshtein
from rapidfuzz.process import cpdist
from typer.testing import CliRunner

from synth.cli.app import app
from synth.core.errors import MissingDependencyError
from synth.kernels.levenshtein import (
    KernelUnavailableError,
    api,
    encode_codepoints,
    levenshtein_batch,
    levenshtein_numpy,
    missing_triton_requirement,
    reference,
)
from synth.kernels.levenshtein import bench as bench_module
from synth.kernels.levenshtein.api import resolve_backend
from synth.kernels.levenshtein.bench import bench_levenshtein
from synth.kernels.runtime import cuda_available
from synth.validators.papyrus import CERVerifier

GREEK = "αβγδεζηθικλμνξοπρστυφχψω"
JOHN = "ἐν ἀρχῇ ἦν ὁ λόγος, καὶ ὁ λόγος ἦν πρὸς τὸν θεόν, καὶ θεὸς ἦν ὁ λόγος. "  # 71 code points, polytonic
ADVERSARIAL = [
    ("", ""),
    ("", "α"),
    ("αβγ", ""),
    ("", JOHN * 3),
    ("λόγος", "λόγος"),
    (JOHN * 2, JOHN * 2),  # equal, three words of 64 rows
    ("αβγ", "δεζ"),
    ("α" * 70, "β" * 70),  # all different, two words
    ("α" * 200, "β" * 5),
    ("kitten", "sitting"),
    ("ab", "ba"),
    ("α" * 64, "α" * 63),  # lengths at the word boundary
    ("α" * 64, "α" * 65),
    ("α" * 128, "α" * 129),
    ("α" * 127 + "β", "β" + "α" * 127),
    ("αβ" * 70, "βα" * 70),
    (JOHN * 2, JOHN.upper() * 2),
    (JOHN * 2, JOHN[::-1] * 2),
    ("\u1f00", "\u03b1\u0313"),  # precomposed and decomposed ἀ: code points differ
    ("𝔸𝔹ℂ", "𝔸ℂ"),  # outside the BMP: one code point each
    ("α β γ\nδ", "αβγδ"),
    ("\x00α", "α\x00"),  # code point 0 is an ordinary character
]


def noisy_copy(rng: np.random.Generator, text: str, alphabet: str) -> str:
    """`text` with up to a fifth of its length in random insertions, deletions and substitutions."""
    chars = list(text)
    for _ in range(int(rng.integers(0, len(chars) // 5 + 2))):
        op, at = int(rng.integers(0, 3)), int(rng.integers(0, len(chars) + 1))
        if op == 0:
            chars.insert(at, alphabet[rng.integers(len(alphabet))])
        elif at < len(chars):
            if op == 1:
                del chars[at]
            else:
                chars[at] = alphabet[rng.integers(len(alphabet))]
    return "".join(chars)


def random_pairs(seed: int, count: int, *, max_len: int) -> tuple[list[str], list[str]]:
    """Half independent strings, half noisy copies; small alphabets so that many characters match."""
    rng = np.random.default_rng(seed)
    a, b = [], []
    for index in range(count):
        alphabet = GREEK[: int(rng.integers(2, len(GREEK) + 1))]
        x = "".join(rng.choice(list(alphabet), size=int(rng.integers(0, max_len + 1))))
        if index % 2:
            y = noisy_copy(rng, x, alphabet)
        else:
            y = "".join(rng.choice(list(alphabet), size=int(rng.integers(0, max_len + 1))))
        a.append(x)
        b.append(y)
    return a, b


def rapidfuzz_distances(a: list[str], b: list[str]) -> np.ndarray:
    return np.asarray(cpdist(a, b, scorer=Levenshtein.distance), dtype=np.int64)


def assert_same_distances(got: np.ndarray, a: list[str], b: list[str]) -> None:
    expected = rapidfuzz_distances(a, b)
    wrong = np.flatnonzero(np.asarray(got) != expected)
    shown = [(len(a[k]), len(b[k]), int(got[k]), int(expected[k])) for k in wrong[:5]]
    assert wrong.size == 0, f"{wrong.size} of {len(a)} pairs differ; (len a, len b, got, rapidfuzz): {shown}"


CER_TABLE = pa.table(
    {
        "text_clean": ["αβγ", "αβγ δε", JOHN.lower(), "λόγος"],
        "text_noisy": ["αβδ", "x", "αβγ" * 30, "λογος"],
        "k": [1, 2, 80, 1],
        "n_ref": [3, 6, len(JOHN), 5],
    }
)


# --- numpy reference ---------------------------------------------------------------------------------------------


def test_encode_codepoints_pads_rows_and_counts_code_points():
    codes, lengths = encode_codepoints(["𝔸β", "", "γ"], pad=-7)
    assert codes.dtype == np.int32 and codes.tolist() == [[0x1D538, 0x3B2], [-7, -7], [0x3B3, -7]]
    assert lengths.tolist() == [2, 0, 1]
    codes, lengths = encode_codepoints([])
    assert codes.shape == (0, 1) and lengths.tolist() == []


def test_numpy_reference_matches_rapidfuzz_on_adversarial_pairs():
    a, b = map(list, zip(*ADVERSARIAL, strict=True))
    assert_same_distances(levenshtein_numpy(a, b), a, b)
    assert_same_distances(levenshtein_numpy(b, a), b, a)


def test_numpy_reference_matches_rapidfuzz_on_random_pairs():
    a, b = random_pairs(0, 3000, max_len=150)
    got = levenshtein_numpy(a, b)
    assert got.dtype == np.int64
    assert_same_distances(got, a, b)


def test_numpy_reference_splits_large_batches_into_chunks(monkeypatch):
    monkeypatch.setattr("synth.kernels.levenshtein.reference.MAX_CHUNK_CELLS", 500)
    a, b = random_pairs(1, 300, max_len=90)
    assert_same_distances(levenshtein_numpy(a, b), a, b)


# --- levenshtein_batch -------------------------------------------------------------------------------------------


@pytest.mark.parametrize("backend", ["rapidfuzz", "numpy"])
def test_cpu_backends_agree_with_rapidfuzz_and_return_int64(backend):
    a, b = random_pairs(2, 400, max_len=100)
    got = levenshtein_batch(a, b, backend=backend)
    assert got.dtype == np.int64 and got.shape == (400,)
    assert_same_distances(got, a, b)
    empty = levenshtein_batch([], [], backend=backend)
    assert empty.dtype == np.int64 and empty.shape == (0,)


def test_bad_arguments_are_refused_with_the_parameter_named():
    with pytest.raises(ValueError, match="`backend` must be one of"):
        levenshtein_batch(["a"], ["b"], backend="cuda")  # type: ignore[arg-type]
    with pytest.raises(ValueError, match="same length, got 2 and 1"):
        levenshtein_batch(["a", "b"], ["c"], backend="numpy")


def test_auto_backend_computes_distances():
    a, b = ["kitten", ""], ["sitting", "ab"]
    assert levenshtein_batch(a, b).tolist() == [3, 2]


def test_triton_without_cuda_or_interpreter_fails_in_one_line(monkeypatch):
    monkeypatch.delenv("TRITON_INTERPRET", raising=False)
    if missing_triton_requirement() is not None:
        with pytest.raises(MissingDependencyError, match="pip install 'synth"):
            levenshtein_batch(["a"], ["b"], backend="triton")
        return
    if cuda_available():
        pytest.skip("a CUDA device is visible: the triton backend can run")
    with pytest.raises(KernelUnavailableError, match="TRITON_INTERPRET=1") as caught:
        levenshtein_batch(["a"], ["b"], backend="triton")
    assert "\n" not in str(caught.value)


def test_missing_torch_names_the_extra(monkeypatch):
    real_find_spec = importlib.util.find_spec

    def find_spec(name, *args):
        return None if name == "torch" else real_find_spec(name, *args)

    monkeypatch.setattr(importlib.util, "find_spec", find_spec)
    with pytest.raises(
        MissingDependencyError, match=r"`torch` package; install it with `pip install 'synth\[train\]'`"
    ):
        levenshtein_batch(["a"], ["b"], backend="triton")
    with pytest.raises(MissingDependencyError, match=r"step `cer` needs the `torch` package for `kernel='triton'`"):
        CERVerifier(name="cer", kernel="triton")


def test_importing_the_package_imports_neither_torch_nor_triton():
    code = (
        "import sys, synth.kernels.levenshtein, synth.validators.papyrus;"
        "print(sorted({'torch', 'triton'} & set(sys.modules)))"
    )
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True, timeout=120)
    assert done.stdout.strip() == "[]"


@pytest.mark.parametrize("module", [reference, api, bench_module], ids=lambda m: m.__name__)
def test_docstring_examples_run(module, monkeypatch):
    monkeypatch.delenv("TRITON_INTERPRET", raising=False)
    failed, attempted = doctest.testmod(module)
    assert attempted > 0 and failed == 0


# --- CER verifier ------------------------------------------------------------------------------------------------


def test_cer_verifier_scores_a_batch_with_the_rapidfuzz_kernel():
    verdicts = CERVerifier(name="cer").verify(CER_TABLE)
    expected = rapidfuzz_distances(CER_TABLE["text_clean"].to_pylist(), CER_TABLE["text_noisy"].to_pylist())
    assert [v.scores["distance"] for v in verdicts] == expected.astype(float).tolist()
    assert [v.reasons for v in verdicts][:2] == [(), ("distance_mismatch", "alphabet")]


def test_cer_verifier_refuses_an_unknown_kernel():
    with pytest.raises(ValueError, match="`kernel` must be rapidfuzz or triton, got 'cuda'"):
        CERVerifier(name="cer", kernel="cuda")  # type: ignore[arg-type]


# --- bench -------------------------------------------------------------------------------------------------------


def test_bench_reports_pairs_per_second_and_ratios_against_rapidfuzz(monkeypatch):
    monkeypatch.delenv("TRITON_INTERPRET", raising=False)
    report = bench_levenshtein(pairs=50, length=40, seed=3, backends=("numpy",), repeats=2)
    assert set(report["pairs_per_s"]) == {"rapidfuzz", "numpy"}
    assert report["agrees_with_rapidfuzz"] == {"rapidfuzz": True, "numpy": True}
    per_s = report["pairs_per_s"]
    assert report["ratios"]["numpy_vs_rapidfuzz"] == pytest.approx(per_s["numpy"] / per_s["rapidfuzz"], rel=1e-3)
    assert len(report["seconds"]["numpy"]) == 2


def test_bench_command_writes_json(tmp_path):
    out = tmp_path / "bench.json"
    args = ["bench", "levenshtein", "--pairs", "30", "--length", "20", "--backends", "numpy", "--out", str(out)]
    result = CliRunner().invoke(app, args)
    assert result.exit_code == 0, result.output
    report = json.loads(out.read_text(encoding="utf-8"))
    assert report["config"]["pairs"] == 30 and "numpy_vs_rapidfuzz" in report["ratios"]
    assert CliRunner().invoke(app, ["bench", "levenshtein", "--backends", "gpu"]).exit_code == 2


# --- triton kernel, in triton's interpreter ----------------------------------------------------------------------

INTERPRETER_SCRIPT = """
import json, sys, time
from synth.kernels.levenshtein import levenshtein_batch
from synth.kernels.levenshtein.triton_kernel import levenshtein_triton
import pyarrow as pa
from synth.validators.papyrus import CERVerifier

jobs = json.loads(open(sys.argv[1], encoding="utf-8").read())
results = {}
for name, job in jobs["pairs"].items():
    start = time.perf_counter()
    if job["block_pairs"] is None:
        got = levenshtein_batch(job["a"], job["b"], backend="triton")
    else:
        got = levenshtein_triton(job["a"], job["b"], block_pairs=job["block_pairs"])
    results[name] = {"distances": got.tolist(), "seconds": time.perf_counter() - start}
verdicts = CERVerifier(name="cer", kernel="triton").verify(pa.table(jobs["cer"]))
results["cer"] = [v.to_dict() for v in verdicts]
open(sys.argv[2], "w", encoding="utf-8").write(json.dumps(results))
"""


@pytest.fixture(scope="module")
def interpreted(tmp_path_factory) -> dict:
    """Run the triton kernel under TRITON_INTERPRET=1 in a child process on every pair set the tests check."""
    pytest.importorskip("torch")
    pytest.importorskip("triton")
    base = tmp_path_factory.mktemp("triton-interpreter")
    adversarial_a, adversarial_b = map(list, zip(*ADVERSARIAL, strict=True))
    small_a, small_b = random_pairs(4, 45, max_len=80)
    many_a, many_b = random_pairs(5, 10_000, max_len=150)
    pairs = {
        "adversarial": (adversarial_a + adversarial_b, adversarial_b + adversarial_a, None),
        "small_blocks": (small_a, small_b, 8),
        "random_10k": (many_a, many_b, None),
    }
    jobs = {
        "pairs": {name: {"a": a, "b": b, "block_pairs": block} for name, (a, b, block) in pairs.items()},
        "cer": CER_TABLE.to_pydict(),
    }
    (base / "jobs.json").write_text(json.dumps(jobs), encoding="utf-8")
    env = {**os.environ, "TRITON_INTERPRET": "1"}
    started = time.perf_counter()
    args = [sys.executable, "-c", INTERPRETER_SCRIPT, str(base / "jobs.json"), str(base / "out.json")]
    done = subprocess.run(args, env=env, capture_output=True, text=True, timeout=300)
    assert done.returncode == 0, done.stderr[-3000:]
    results = json.loads((base / "out.json").read_text(encoding="utf-8"))
    seconds = {name: round(results[name]["seconds"], 1) for name in pairs}
    print(f"triton interpreter: child process {time.perf_counter() - started:.1f} s, kernel calls {seconds}")
    results["inputs"] = {name: (a, b) for name, (a, b, _) in pairs.items()}
    return results


def test_triton_interpreter_matches_rapidfuzz_on_adversarial_pairs(interpreted):
    a, b = interpreted["inputs"]["adversarial"]
    assert_same_distances(np.array(interpreted["adversarial"]["distances"]), a, b)


def test_triton_interpreter_matches_rapidfuzz_with_many_small_programs(interpreted):
    a, b = interpreted["inputs"]["small_blocks"]  # 8 pairs per program: padded lanes, mixed word counts
    assert_same_distances(np.array(interpreted["small_blocks"]["distances"]), a, b)


def test_triton_interpreter_matches_rapidfuzz_on_10k_random_pairs(interpreted):
    a, b = interpreted["inputs"]["random_10k"]
    assert len(a) == 10_000 and max(map(len, a)) > 128  # three words of pattern
    assert_same_distances(np.array(interpreted["random_10k"]["distances"]), a, b)


def test_cer_verifier_with_the_triton_kernel_gives_the_rapidfuzz_verdicts(interpreted):
    expected = [v.to_dict() for v in CERVerifier(name="cer").verify(CER_TABLE)]
    assert interpreted["cer"] == expected


# --- triton kernel, compiled for CUDA ----------------------------------------------------------------------------


@pytest.mark.gpu
def test_compiled_kernel_on_cuda_matches_rapidfuzz():
    torch = pytest.importorskip("torch")
    pytest.importorskip("triton")
    if not torch.cuda.is_available():
        pytest.skip("needs a CUDA device")
    if os.environ.get("TRITON_INTERPRET", "0") != "0":
        pytest.skip("TRITON_INTERPRET is set: the compiled kernel cannot run in this process")
    from synth.kernels.levenshtein.triton_kernel import levenshtein_triton

    rng = np.random.default_rng(6)
    long_a = [JOHN * int(rng.integers(1, 40)) for _ in range(300)]  # up to ~2,800 code points, 44 words
    long_b = [noisy_copy(rng, text, GREEK) for text in long_a]
    short_a, short_b = random_pairs(7, 20_000, max_len=300)
    adversarial_a, adversarial_b = map(list, zip(*ADVERSARIAL, strict=True))
    a = adversarial_a + adversarial_b + long_a + short_a
    b = adversarial_b + adversarial_a + long_b + short_b
    assert resolve_backend("auto") == "triton"
    assert_same_distances(levenshtein_batch(a, b, backend="triton"), a, b)
    for block_pairs in (1, 8, 128):
        assert_same_distances(levenshtein_triton(a[:3000], b[:3000], block_pairs=block_pairs), a[:3000], b[:3000])
    expected = [v.to_dict() for v in CERVerifier(name="cer").verify(CER_TABLE)]
    assert [v.to_dict() for v in CERVerifier(name="cer", kernel="triton").verify(CER_TABLE)] == expected


def test_papyrus_config_selects_the_verifier_kernel():
    from synth.pipelines.papyrus import PapyrusConfig, build_verifiers

    assert build_verifiers(PapyrusConfig()).get("cer").kernel == "rapidfuzz"
    if importlib.util.find_spec("torch") and importlib.util.find_spec("triton"):
        assert build_verifiers(PapyrusConfig(kernel="triton"))["cer"].kernel == "triton"
