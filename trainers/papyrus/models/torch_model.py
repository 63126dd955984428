"""The training, prediction and persistence plumbing shared by the torch text models."""

from __future__ import annotations

from pathlib import Path
from typing import Any, ClassVar

from synth.core.errors import ConfigError
from synth.trainers.papyrus.models.base import TextModel


def check_loop_params(kind: str, params: Any, *, positive: tuple[str, ...]) -> None:
    """Refuse non-positive sizes, negative epochs, dropout outside [0, 1) and a non-positive learning rate."""
    bad = [name for name in positive if getattr(params, name) < 1]
    if bad or params.epochs < 0:
        msg = f"{kind}: `{(bad or ['epochs'])[0]}` must be positive"
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
    requires: ClassVar[tuple[tuple[str, str], ...]] = (("torch", "synth[train]"),)

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

    def _restore_extra(self, state: dict[str, Any]) -> None:
        """Restore what `_extra_state` saved; nothing by default."""

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
        import torch

        from synth.trainers.papyrus.models._torch import WEIGHTS_FILE

        torch.save(self.network.state_dict(), root / WEIGHTS_FILE)
        state = {
            "weights": WEIGHTS_FILE,
            "target_mean": self.target_mean,
            "target_scale": self.target_scale,
            "loss_per_epoch": self.history,
        }
        return state | self._extra_state(root)

    def _load_state(self, root: Path, state: dict[str, Any]) -> None:
        import torch

        self.target_mean, self.target_scale = state["target_mean"], state["target_scale"]
        self.history = state.get("loss_per_epoch", [])
        self._restore_extra(state)
        self.network = self._build_network((root, state))
        self.network.load_state_dict(torch.load(root / state["weights"], weights_only=True))
        self.network.eval()
