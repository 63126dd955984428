"""A character CNN (Zhang et al. style): symbols → embedding → Conv1d {3,5,7} → global max-pool → linear."""

from __future__ import annotations

from collections import Counter
from dataclasses import dataclass
from pathlib import Path
from typing import Any, ClassVar

from synth.pipelines.errors import ConfigError
from synth.trainers.papyrus.models.base import TextModel

PAD, UNKNOWN = 0, 1


@dataclass(frozen=True)
class CharCNNParams:
    """Hyper-parameters of the character CNN; `threads` is part of the result (CPU reductions depend on it)."""

    max_symbols: int = 32
    embedding_dim: int = 64
    filters: int = 128
    kernel_sizes: tuple[int, ...] = (3, 5, 7)
    dropout: float = 0.5
    max_chars: int = 2048
    max_windows: int = 8
    epochs: int = 20
    batch_size: int = 16
    learning_rate: float = 1e-3
    weight_decay: float = 0.0
    threads: int = 4

    def __post_init__(self) -> None:
        positive = ("max_symbols", "embedding_dim", "filters", "max_chars", "max_windows", "batch_size", "threads")
        bad = [name for name in positive if getattr(self, name) < 1]
        if bad or self.max_symbols < 3 or self.epochs < 0 or min(self.kernel_sizes) < 1:
            msg = f"charcnn: sizes must be positive (max_symbols >= 3, epochs >= 0), got {bad or self}"
            raise ConfigError(msg)
        if not 0.0 <= self.dropout < 1.0 or self.learning_rate <= 0:
            msg = "charcnn: `dropout` must lie in [0, 1) and `learning_rate` be positive"
            raise ConfigError(msg)


def build_alphabet(texts: list[str], max_symbols: int) -> str:
    """The `max_symbols - 2` most frequent characters (ties by code point); the rest map to UNKNOWN."""
    counts = Counter(char for text in texts for char in text)
    ranked = sorted(counts.items(), key=lambda item: (-item[1], item[0]))
    return "".join(char for char, _ in ranked[: max_symbols - 2])


class CharCNNModel(TextModel):
    """Character CNN trained on random crops of at most `max_chars`; long texts are predicted per window."""

    kind: ClassVar[str] = "charcnn"
    params_type: ClassVar[type[Any]] = CharCNNParams
    requires: ClassVar[tuple[tuple[str, str], ...]] = (("torch", "synth[train]"),)

    def _network(self, outputs: int) -> Any:
        from synth.trainers.papyrus.models._networks import CharCNNNetwork

        p: CharCNNParams = self.params
        return CharCNNNetwork(
            symbols=p.max_symbols,
            embedding_dim=p.embedding_dim,
            filters=p.filters,
            kernel_sizes=p.kernel_sizes,
            dropout=p.dropout,
            outputs=outputs,
        )

    def _settings(self) -> Any:
        from synth.trainers.papyrus.models._torch import LoopSettings

        p: CharCNNParams = self.params
        return LoopSettings(p.max_chars, p.epochs, p.batch_size, p.learning_rate, p.weight_decay, p.max_windows)

    def _encode(self, texts: list[str]) -> list[Any]:
        import torch

        index = {char: position + 2 for position, char in enumerate(self.alphabet)}
        return [torch.tensor([index.get(char, UNKNOWN) for char in text], dtype=torch.long) for text in texts]

    def _fit(self, texts: list[str], targets: list[Any]) -> None:
        from synth.trainers.papyrus.models import _torch

        self.alphabet = build_alphabet(texts, self.params.max_symbols)
        encoded = _torch.encode_targets(targets, self.classes)
        self.target_mean, self.target_scale = encoded.mean, encoded.scale
        n_classes = len(self.classes) if self.classes is not None else None
        with _torch.seeded_session(self.seed, self.params.threads):
            self.network = self._network(n_classes or 1)
            self.history = _torch.train_network(
                self.network,
                self._encode(texts),
                encoded.values,
                loss=_torch.make_loss(encoded, n_classes),
                settings=self._settings(),
                pad_id=PAD,
                seed=self.seed,
            )

    def _predict(self, texts: list[str]) -> list[Any]:
        from synth.trainers.papyrus.models import _torch

        with _torch.seeded_session(self.seed, self.params.threads):
            outputs = _torch.predict_network(self.network, self._encode(texts), settings=self._settings(), pad_id=PAD)
        return _torch.decode_outputs(outputs, self.classes, self.target_mean, self.target_scale)

    def _save_state(self, root: Path) -> dict[str, Any]:
        import torch

        from synth.trainers.papyrus.models._torch import WEIGHTS_FILE

        torch.save(self.network.state_dict(), root / WEIGHTS_FILE)
        return {
            "weights": WEIGHTS_FILE,
            "alphabet": self.alphabet,
            "target_mean": self.target_mean,
            "target_scale": self.target_scale,
            "loss_per_epoch": self.history,
        }

    def _load_state(self, root: Path, state: dict[str, Any]) -> None:
        import torch

        self.alphabet = state["alphabet"]
        self.target_mean, self.target_scale = state["target_mean"], state["target_scale"]
        self.history = state.get("loss_per_epoch", [])
        self.network = self._network(len(self.classes) if self.classes is not None else 1)
        self.network.load_state_dict(torch.load(root / state["weights"], weights_only=True))
        self.network.eval()
