"""A character CNN (Zhang et al. style): symbols → embedding → Conv1d {3,5,7} → global max-pool → linear."""

from __future__ import annotations

from collections import Counter
from dataclasses import dataclass
from pathlib import Path
from typing import Any, ClassVar

from synth.core.errors import ConfigError, InputError
from synth.trainers.papyrus.models.base import MODEL_FILE, shown
from synth.trainers.papyrus.models.torch_model import TorchTextModel, check_loop_params

PAD, UNKNOWN = 0, 1
MAX_KERNELS = 16


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
        check_loop_params("charcnn", self, positive=positive)
        if self.max_symbols < 3 or min(self.kernel_sizes) < 1 or len(self.kernel_sizes) > MAX_KERNELS:
            msg = (
                f"charcnn: need `max_symbols` >= 3 and 1 to {MAX_KERNELS} kernel sizes >= 1, "
                f"got {self.max_symbols} {self.kernel_sizes}"
            )
            raise ConfigError(msg)


def build_alphabet(texts: list[str], max_symbols: int) -> str:
    """The `max_symbols - 2` most frequent characters (ties by code point); the rest map to UNKNOWN."""
    counts = Counter(char for text in texts for char in text)
    ranked = sorted(counts.items(), key=lambda item: (-item[1], item[0]))
    return "".join(char for char, _ in ranked[: max_symbols - 2])


class CharCNNModel(TorchTextModel):
    """Character CNN trained on random crops of at most `max_chars`; long texts are predicted per window."""

    kind: ClassVar[str] = "charcnn"
    params_type: ClassVar[type[Any]] = CharCNNParams
    pad_id: ClassVar[int] = PAD

    def _build_network(self, saved: tuple[Path, dict[str, Any]] | None = None) -> Any:
        from synth.trainers.papyrus.models._networks import CharCNNNetwork

        p: CharCNNParams = self.params
        return CharCNNNetwork(
            symbols=p.max_symbols,
            embedding_dim=p.embedding_dim,
            filters=p.filters,
            kernel_sizes=p.kernel_sizes,
            dropout=p.dropout,
            outputs=self._outputs(),
        )

    def _settings(self) -> Any:
        from synth.trainers.papyrus.models._torch import LoopSettings

        p: CharCNNParams = self.params
        return LoopSettings(p.max_chars, p.epochs, p.batch_size, p.learning_rate, p.weight_decay, p.max_windows)

    def _encode(self, texts: list[str]) -> list[Any]:
        import torch

        index = {char: position + 2 for position, char in enumerate(self.alphabet)}
        return [torch.tensor([index.get(char, UNKNOWN) for char in text], dtype=torch.long) for text in texts]

    def _prepare(self, texts: list[str]) -> None:
        self.alphabet = build_alphabet(texts, self.params.max_symbols)

    def _extra_state(self, root: Path) -> dict[str, Any]:
        return {"alphabet": self.alphabet}

    def _restore_extra(self, root: Path, state: dict[str, Any]) -> None:
        alphabet = state.get("alphabet")
        limit = self.params.max_symbols - 2
        if not isinstance(alphabet, str) or len(alphabet) > limit or len(set(alphabet)) != len(alphabet):
            msg = (
                f"{root / MODEL_FILE}: field `state.alphabet` must be a string of at most {limit} distinct "
                f"characters (`max_symbols` - 2), got {shown(alphabet)}"
            )
            raise InputError(msg)
        self.alphabet = alphabet
