"""Saved Papyrus models are data only: every family round-trips without pickles, and a hostile folder is refused."""

from __future__ import annotations

import importlib.util
import json
import pickle
import shutil
import time
from pathlib import Path

import numpy as np
import pytest

from synth.core.errors import InputError
from synth.trainers.papyrus.models import build_model, load_model

TEXTS = ["αβγ δεζ ηθι", "αβγ αβγ κλμ", "κλμ νξο πρσ", "κλμ κλμ αβγ", "τυφ χψω", "τυφ τυφ νξο"] * 2
LABELS = ["a", "a", "b", "b", "c", "c"] * 2
YEARS = [-200.0, -150.0, 100.0, 150.0, 300.0, 350.0] * 2
CHARCNN_TOY = {"embedding_dim": 8, "filters": 8, "max_chars": 64, "epochs": 1, "batch_size": 4, "threads": 1}
BYTES_TOY = {"layers": 1, "d_model": 16, "heads": 2, "ff_dim": 32, "max_bytes": 64, "epochs": 1, "threads": 1}
SAFE_SUFFIXES = {".json", ".npy", ".safetensors"}


class Payload:
    """Unpickling this creates `marker`: proof that a loader ran code from a file."""

    def __init__(self, marker: Path) -> None:
        self.marker = marker

    def __reduce__(self) -> tuple:
        return (Path.touch, (self.marker,))


def tiny_byt5(folder: Path) -> Path:
    import transformers

    config = transformers.T5Config(
        vocab_size=259, d_model=16, d_kv=8, d_ff=32, num_layers=1, num_heads=2, num_decoder_layers=1
    )
    transformers.T5EncoderModel(config).save_pretrained(folder)
    return folder


FAMILIES = [
    ("tfidf", "classification", {}),
    ("tfidf", "regression", {}),
    ("charcnn", "classification", CHARCNN_TOY),
    ("charcnn", "regression", CHARCNN_TOY),
    ("bytes", "classification", BYTES_TOY),
    ("bytes", "regression", BYTES_TOY),
    pytest.param(
        "fasttext",
        "classification",
        {"epoch": 2, "dim": 8},
        marks=pytest.mark.skipif(importlib.util.find_spec("fasttext") is None, reason="fasttext is not installed"),
    ),
]


def saved(tmp_path: Path, kind: str = "tfidf", objective: str = "classification", params: dict | None = None) -> Path:
    targets = LABELS if objective == "classification" else YEARS
    model = build_model(kind, objective=objective, params=params or {}).fit(TEXTS, targets)  # type: ignore[arg-type]
    return model.save(tmp_path / f"{kind}-{objective}")


@pytest.fixture(scope="module")
def saved_folders(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Path]:
    root = tmp_path_factory.mktemp("models")
    return {"tfidf": saved(root), "charcnn": saved(root, "charcnn", params=CHARCNN_TOY)}


def copy_of(folders: dict[str, Path], kind: str, tmp_path: Path) -> Path:
    return Path(shutil.copytree(folders[kind], tmp_path / kind, symlinks=True))


def edit_meta(folder: Path, **changes: object) -> None:
    meta = json.loads((folder / "model.json").read_text())
    for key, value in changes.items():
        *parents, leaf = key.split(".")
        node = meta
        for part in parents:
            node = node[part]
        node[leaf] = value
    (folder / "model.json").write_text(json.dumps(meta))


def check_round_trip(model: object, folder: Path, *, native: bool = False) -> None:
    """The folder holds data files only (no pickle, no temp file) and the loaded model predicts the same."""
    files = [path for path in folder.rglob("*") if path.is_file()]
    if not native:
        assert {path.suffix for path in files} <= SAFE_SUFFIXES, files
    assert not [path for path in files if path.read_bytes()[:1] == b"\x80"], "a pickle was written"
    assert not [path for path in files if ".tmp-" in path.name]
    np.testing.assert_array_equal(load_model(folder).predict(TEXTS), model.predict(TEXTS))  # type: ignore[attr-defined]


@pytest.mark.parametrize(("kind", "objective", "params"), FAMILIES)
def test_every_family_saves_data_only_and_predicts_identically_after_loading(
    tmp_path: Path, kind: str, objective: str, params: dict
) -> None:
    targets = LABELS if objective == "classification" else YEARS
    model = build_model(kind, objective=objective, params=params).fit(TEXTS, targets)  # type: ignore[arg-type]
    check_round_trip(model, model.save(tmp_path / "model"), native=kind == "fasttext")


@pytest.mark.skipif(importlib.util.find_spec("transformers") is None, reason="transformers is not installed")
def test_a_pretrained_byt5_encoder_round_trips_with_its_tied_weights(tmp_path: Path) -> None:
    params = {**BYTES_TOY, "pretrained_path": str(tiny_byt5(tmp_path / "byt5"))}
    model = build_model("bytes", objective="classification", params=params).fit(TEXTS, LABELS)
    folder = model.save(tmp_path / "model")
    check_round_trip(model, folder)
    edit_meta(folder, **{"state.byt5_config": str(tmp_path / "byt5")})
    with pytest.raises(InputError, match=r"field `state\.byt5_config` is '/.*byt5', outside the model folder"):
        load_model(folder)


def test_a_pickle_format_model_is_refused_and_never_unpickled(tmp_path: Path) -> None:
    folder, marker = tmp_path / "old", tmp_path / "ran-code"
    folder.mkdir()
    (folder / "pipeline.joblib").write_bytes(pickle.dumps(Payload(marker)))  # what joblib.load would run
    meta = {"format": "synth-papyrus-model/1", "kind": "tfidf", "objective": "classification", "seed": 0}
    meta |= {"params": {}, "classes": ["a", "b"], "state": {"file": "pipeline.joblib"}}
    (folder / "model.json").write_text(json.dumps(meta))
    with pytest.raises(InputError, match=r"field `format` is 'synth-papyrus-model/1', a model saved as a pickle"):
        load_model(folder)
    assert not marker.exists()


def test_pickles_in_place_of_state_files_are_refused_without_running(
    tmp_path: Path, saved_folders: dict[str, Path]
) -> None:
    import torch

    marker = tmp_path / "ran-code"
    tfidf = copy_of(saved_folders, "tfidf", tmp_path)
    np.save(tfidf / "tfidf_idf.npy", np.array([Payload(marker)], dtype=object), allow_pickle=True)
    with pytest.raises(InputError, match=r"tfidf_idf\.npy: expected a float64 array of shape \(\d+,\), got object"):
        load_model(tfidf)
    charcnn = copy_of(saved_folders, "charcnn", tmp_path)
    torch.save(Payload(marker), charcnn / "weights.safetensors", pickle_protocol=pickle.HIGHEST_PROTOCOL)
    with pytest.raises(InputError, match=r"weights\.safetensors: not a safetensors weights file"):
        load_model(charcnn)
    assert not marker.exists()


@pytest.mark.parametrize("value", ["../outside.json", "/etc/passwd", "sub/../../outside.json", "link.json"])
def test_a_state_path_outside_the_folder_is_refused_naming_the_field(
    tmp_path: Path, saved_folders: dict[str, Path], value: str
) -> None:
    folder = copy_of(saved_folders, "tfidf", tmp_path)
    (tmp_path / "outside.json").write_text((folder / "tfidf_vocabulary.json").read_text())
    (folder / "link.json").symlink_to(tmp_path / "outside.json")
    edit_meta(folder, **{"state.vocabulary": value})
    with pytest.raises(InputError) as info:
        load_model(folder)
    message = str(info.value)
    assert message.startswith(f"{folder / 'model.json'}: field `state.vocabulary` is {value!r}, outside the model")
    assert "\n" not in message


@pytest.mark.parametrize(
    ("changes", "message"),
    [
        ({"params.filters": 10**7}, r"tensor `convs\.0\.weight` is F32 \[8, 8, 3\], but the `params` in .* give F32"),
        ({"params.kernel_sizes": [3, 5]}, r"tensor `convs\.2\.bias` is not part of the network that .* describes"),
        ({"params.kernel_sizes": [3, 5, 7, 9]}, r"tensor `convs\.3\.weight` is missing"),
        ({"params.threads": 10**6}, r"field `params`: charcnn: `threads` must be at most 256"),
        ({"params.layers": 2}, r"field `params`: model `charcnn` has no parameter `layers`"),
        ({"state.alphabet": "α" * 40}, r"field `state\.alphabet` must be a string of at most 30 distinct"),
        ({"state.target_mean": "x"}, r"field `state\.target_mean` must be a finite number \(got 'x'\)"),
        ({"classes": ["a"]}, r"field `classes`: a classifier needs 2 or more distinct class names"),
        ({"seed": -1}, r"field `seed`: Input should be greater than or equal to 0"),
        ({"kind": "tfidf"}, r"field `params`: model `tfidf` has no parameter `batch_size`"),
        (
            {"kind": "tfidf", "params": {}},
            r"field `state\.vocabulary` must name a file in the model folder \(got None\)",
        ),
    ],
)
def test_inflated_or_inconsistent_fields_are_refused_before_anything_is_allocated(
    tmp_path: Path, saved_folders: dict[str, Path], changes: dict, message: str
) -> None:
    folder = copy_of(saved_folders, "charcnn", tmp_path)
    edit_meta(folder, **changes)
    started = time.perf_counter()
    with pytest.raises(InputError, match=message):
        load_model(folder)
    assert time.perf_counter() - started < 10  # 10**7 filters would be gigabytes of weights to build


def test_tfidf_arrays_must_match_the_vocabulary(tmp_path: Path, saved_folders: dict[str, Path]) -> None:
    folder = copy_of(saved_folders, "tfidf", tmp_path)
    vocabulary = json.loads((folder / "tfidf_vocabulary.json").read_text())
    (folder / "tfidf_vocabulary.json").write_text(json.dumps(vocabulary[:-1]))
    with pytest.raises(
        InputError, match=rf"tfidf_idf\.npy: expected a float64 array of shape \({len(vocabulary) - 1},\)"
    ):
        load_model(folder)
    (folder / "tfidf_vocabulary.json").write_text(json.dumps([*vocabulary[:-1], 7]))
    with pytest.raises(InputError, match=rf"field `state\.vocabulary`: item {len(vocabulary) - 1} 7 is not a string"):
        load_model(folder)
    (folder / "tfidf_vocabulary.json").write_text(json.dumps(vocabulary))
    np.save(folder / "tfidf_coef.npy", np.zeros((3, 2)))
    with pytest.raises(InputError, match=r"tfidf_coef\.npy: expected a float64 array of shape \(3, \d+\)"):
        load_model(folder)
    with (folder / "tfidf_idf.npy").open("r+b") as handle:
        handle.truncate(200)
    with pytest.raises(InputError, match=r"tfidf_idf\.npy: holds \d+ data bytes, expected"):
        load_model(folder)
