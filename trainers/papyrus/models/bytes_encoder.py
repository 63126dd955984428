"""A tiny byte-level Transformer encoder in ByT5's tokenisation, trained from scratch (or ByT5 weights).

Tokens are the UTF-8 bytes shifted by 3 plus ByT5's specials (pad 0, eos 1, unk 2): vocabulary 259. With
`pretrained_path` set, the encoder is a `transformers.T5EncoderModel` read from that LOCAL directory (for
example a copy of `google/byt5-small`), never downloaded.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Any, ClassVar

from synth.core.errors import ConfigError, InputError
from synth.trainers.papyrus.models.base import Objective, check_requirements, state_path
from synth.trainers.papyrus.models.torch_model import TorchTextModel, check_loop_params

PAD, EOS, UNK = 0, 1, 2
SPECIALS = 3
VOCAB_SIZE = 256 + SPECIALS
BYT5_CONFIG_DIR = "byt5_config"
MAX_LAYERS = 48


@dataclass(frozen=True)
class ByteEncoderParams:
    """Hyper-parameters of the byte encoder (the defaults are the research notes' 4 x 256 x 4 heads)."""

    layers: int = 4
    d_model: int = 256
    heads: int = 4
    ff_dim: int = 1024
    dropout: float = 0.1
    max_bytes: int = 1024
    downsample: int = 1
    max_windows: int = 8
    epochs: int = 10
    batch_size: int = 16
    learning_rate: float = 3e-4
    weight_decay: float = 0.01
    threads: int = 4
    pretrained_path: str | None = None

    def __post_init__(self) -> None:
        sizes = ("layers", "d_model", "heads", "ff_dim", "max_bytes", "downsample", "max_windows", "batch_size")
        sizes = (*sizes, "threads")
        check_loop_params("bytes", self, positive=sizes)
        if self.d_model % self.heads:
            msg = f"bytes: `d_model` ({self.d_model}) must be divisible by `heads` ({self.heads})"
            raise ConfigError(msg)
        if self.layers > MAX_LAYERS:
            msg = f"bytes: `layers` must be at most {MAX_LAYERS}, got {self.layers}"
            raise ConfigError(msg)


def encode_bytes(text: str) -> list[int]:
    """ByT5 ids of a text: each UTF-8 byte + 3, then EOS.

    Example:
        >>> encode_bytes("αa")
        [209, 180, 100, 1]
    """
    return [byte + SPECIALS for byte in text.encode("utf-8")] + [EOS]


class ByteEncoderModel(TorchTextModel):
    """Byte-level Transformer encoder with mean pooling, trained on random crops of at most `max_bytes`."""

    kind: ClassVar[str] = "bytes"
    params_type: ClassVar[type[Any]] = ByteEncoderParams
    pad_id: ClassVar[int] = PAD

    def __init__(self, *, objective: Objective, seed: int = 0, params: dict[str, Any] | None = None) -> None:
        super().__init__(objective=objective, seed=seed, params=params)
        if self.params.pretrained_path is not None:
            check_requirements("bytes (pretrained_path)", (("transformers", "synth[train]"),))

    def _scratch_network(self) -> Any:
        from synth.trainers.papyrus.models._networks import ByteEncoderNetwork

        p: ByteEncoderParams = self.params
        return ByteEncoderNetwork(
            vocab=VOCAB_SIZE,
            max_len=p.max_bytes,
            d_model=p.d_model,
            layers=p.layers,
            heads=p.heads,
            ff_dim=p.ff_dim,
            dropout=p.dropout,
            outputs=self._outputs(),
            downsample=p.downsample,
        )

    def _pretrained_network(self, config_dir: Path | None = None) -> Any:
        """ByT5 weights from `pretrained_path`, or (when loading) only the architecture from `config_dir`."""
        import transformers

        from synth.trainers.papyrus.models._networks import PretrainedByT5Network

        if config_dir is not None:
            config = transformers.T5Config.from_pretrained(config_dir, local_files_only=True)
            if not 1 <= config.num_layers <= MAX_LAYERS:
                msg = f"{config_dir}: `num_layers` must lie in 1..{MAX_LAYERS}, got {config.num_layers}"
                raise InputError(msg)
            backbone = transformers.T5EncoderModel(config)
        else:
            path = Path(self.params.pretrained_path).expanduser()
            if not path.is_dir():
                msg = f"{path}: `pretrained_path` is not a directory (expected a local ByT5 checkpoint)"
                raise InputError(msg)
            backbone = transformers.T5EncoderModel.from_pretrained(path, local_files_only=True)
        return PretrainedByT5Network(backbone, dropout=self.params.dropout, outputs=self._outputs())

    def _settings(self) -> Any:
        from synth.trainers.papyrus.models._torch import LoopSettings

        p: ByteEncoderParams = self.params
        return LoopSettings(p.max_bytes, p.epochs, p.batch_size, p.learning_rate, p.weight_decay, p.max_windows)

    @staticmethod
    def _encode(texts: list[str]) -> list[Any]:
        import torch

        return [torch.tensor(encode_bytes(text), dtype=torch.long) for text in texts]

    def _build_network(self, saved: tuple[Path, dict[str, Any]] | None = None) -> Any:
        if saved is not None:
            root, state = saved
            if "byt5_config" not in state:
                return self._scratch_network()
            return self._pretrained_network(state_path(root, state, "byt5_config", directory=True))
        return self._pretrained_network() if self.params.pretrained_path is not None else self._scratch_network()

    def _extra_state(self, root: Path) -> dict[str, Any]:
        if self.params.pretrained_path is None:
            return {}
        self.network.backbone.config.save_pretrained(root / BYT5_CONFIG_DIR)
        return {"byt5_config": BYT5_CONFIG_DIR}
