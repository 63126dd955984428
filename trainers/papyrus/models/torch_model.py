"""The training, prediction and persistence plumbing shared by the torch text models.

Weights are saved with safetensors (no pickle). Loading first builds the network on torch's `meta` device and
checks every tensor's name, dtype and shape against the file's header, so neither a damaged file nor
inflated `params` in `model.json` can make the loader allocate more than the weights file holds.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any, ClassVar

from synth.core.errors import ConfigError, InputError
from synth.core.sink import write_atomic
from synth.trainers.papyrus.models.base import MODEL_FILE, TextModel, state_number, state_path

WEIGHTS_FILE = "weights.safetensors"
MAX_THREADS = 256


def check_loop_params(kind: str, params: Any, *, positive: tuple[str, ...]) -> None:
    """Refuse non-positive sizes, negative epochs, dropout outside [0, 1) and a non-positive learning rate."""
    bad = [name for name in positive if getattr(params, name) < 1]
    if bad or params.epochs < 0:
        msg = f"{kind}: `{(bad or ['epochs'])[0]}` must be positive"
        raise ConfigError(msg)
    if params.threads > MAX_THREADS:
        msg = f"{kind}: `threads` must be at most {MAX_THREADS}, got {params.threads}"
        raise ConfigError(msg)
    if not 0.0 <= params.dropout < 1.0 or params.learning_rate <= 0:
        msg = f"{kind}: `dropout` must lie in [0, 1) and `learning_rate` be positive"
        raise ConfigError(msg)


class TorchTextModel(TextModel):
    """A torch model: subclasses build the network, encode texts and give the loop settings.

    Subclasses implement `_build_network(saved)` (`saved` is the model folder and state when loading),
    `_encode(texts)` and `_settings()`; they may fit text-side state in `_prepare(texts)` and persist it
    through `_extra_state` / `_restore_extra`.
    """

    pad_id: ClassVar[int] = 0
    requires: ClassVar[tuple[tuple[str, str], ...]] = (("torch", "synth[train]"), ("safetensors", "synth[train]"))

    def _build_network(self, saved: tuple[Path, dict[str, Any]] | None = None) -> Any:
        raise NotImplementedError

    def _encode(self, texts: list[str]) -> list[Any]:
        raise NotImplementedError

    def _settings(self) -> Any:
        raise NotImplementedError

    def _prepare(self, texts: list[str]) -> None:
        """Fit text-side state (an alphabet, say) before the network is built; nothing by default."""

    def _extra_state(self, root: Path) -> dict[str, Any]:
        return {}

    def _restore_extra(self, root: Path, state: dict[str, Any]) -> None:
        """Restore (and check) what `_extra_state` saved; nothing by default."""

    def _outputs(self) -> int:
        return len(self.classes) if self.classes is not None else 1

    def _fit(self, texts: list[str], targets: list[Any]) -> None:
        from synth.trainers.papyrus.models import _torch

        self._prepare(texts)
        encoded = _torch.encode_targets(targets, self.classes)
        self.target_mean, self.target_scale = encoded.mean, encoded.scale
        with _torch.seeded_session(self.seed, self.params.threads):
            self.network = self._build_network()
            self.history = _torch.train_network(
                self.network,
                self._encode(texts),
                encoded.values,
                loss=_torch.make_loss(encoded, len(self.classes) if self.classes is not None else None),
                settings=self._settings(),
                pad_id=self.pad_id,
                seed=self.seed,
            )

    def _predict(self, texts: list[str]) -> list[Any]:
        from synth.trainers.papyrus.models import _torch

        with _torch.seeded_session(self.seed, self.params.threads):
            outputs = _torch.predict_network(
                self.network, self._encode(texts), settings=self._settings(), pad_id=self.pad_id
            )
        return _torch.decode_outputs(outputs, self.classes, self.target_mean, self.target_scale)

    def _save_state(self, root: Path) -> dict[str, Any]:
        from safetensors.torch import save_model

        write_atomic(root / WEIGHTS_FILE, lambda tmp: save_model(self.network, str(tmp)))
        state = {
            "weights": WEIGHTS_FILE,
            "target_mean": self.target_mean,
            "target_scale": self.target_scale,
            "loss_per_epoch": self.history,
        }
        return state | self._extra_state(root)

    def _load_state(self, root: Path, state: dict[str, Any]) -> None:
        import torch
        from safetensors.torch import load_model

        self.target_mean = state_number(root, state, "target_mean")
        self.target_scale = state_number(root, state, "target_scale")
        self.history = state.get("loss_per_epoch", [])
        self._restore_extra(root, state)
        weights = state_path(root, state, "weights")
        with torch.device("meta"):
            skeleton = self._build_network((root, state))
        check_weights(weights, skeleton, source=root / MODEL_FILE)
        self.network = self._build_network((root, state))
        load_model(self.network, str(weights), strict=True, device="cpu")
        self.network.eval()


def read_weight_header(path: Path) -> dict[str, tuple[str, tuple[int, ...]]]:
    """The dtype and shape of every tensor in a safetensors file, read from its header only."""
    from safetensors import SafetensorError, safe_open

    try:
        with safe_open(str(path), framework="pt") as handle:
            return {
                name: (handle.get_slice(name).get_dtype(), tuple(handle.get_slice(name).get_shape()))
                for name in handle.keys()  # noqa: SIM118 (a safetensors handle is not a mapping)
            }
    except (SafetensorError, OSError) as error:
        msg = f"{path}: not a safetensors weights file ({(str(error).splitlines() or ['unreadable'])[0]})"
        raise InputError(msg) from None


def check_weights(path: Path, skeleton: Any, *, source: Path) -> None:
    """Check the file's tensors against a network built on the meta device: same names, float32, same shapes.

    Tensors the network shares (tied embeddings) are stored once, under any one of their names.
    """
    header = read_weight_header(path)
    tensors = skeleton.state_dict(keep_vars=True)
    unexpected = sorted(set(header) - set(tensors))
    if unexpected:
        msg = f"{path}: tensor `{unexpected[0]}` is not part of the network that {source} describes"
        raise InputError(msg)
    names_of: dict[int, list[str]] = {}
    for name, tensor in tensors.items():
        names_of.setdefault(id(tensor), []).append(name)
    for names in names_of.values():
        stored = [name for name in names if name in header]
        if not stored:
            msg = f"{path}: tensor `{names[0]}` is missing (the `params` in {source} give a network with it)"
            raise InputError(msg)
        for name in stored:
            dtype, found = header[name]
            shape = tuple(tensors[name].shape)
            if dtype != "F32" or found != shape:
                msg = (
                    f"{path}: tensor `{name}` is {dtype} {list(found)}, but the `params` in {source} "
                    f"give F32 {list(shape)}"
                )
                raise InputError(msg)
