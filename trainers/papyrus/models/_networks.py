"""The torch modules of the neural models; imported lazily, only once torch is known to be installed.

Every network takes `(ids [B, L] long, mask [B, L] bool, True on real tokens)` and returns `[B, outputs]`.
"""

from __future__ import annotations

from typing import Any

import torch
from torch import nn


def masked_mean(hidden: torch.Tensor, mask: torch.Tensor) -> torch.Tensor:
    """Mean of `hidden [B, L, D]` over the real positions of `mask [B, L]`."""
    weights = mask.unsqueeze(2).to(hidden.dtype)
    return (hidden * weights).sum(dim=1) / weights.sum(dim=1).clamp(min=1.0)


class CharCNNNetwork(nn.Module):
    """Embedding → parallel Conv1d ("same" padding) → ReLU → global max-pool → dropout → linear."""

    def __init__(
        self,
        *,
        symbols: int,
        embedding_dim: int,
        filters: int,
        kernel_sizes: tuple[int, ...],
        dropout: float,
        outputs: int,
    ) -> None:
        super().__init__()
        self.embedding = nn.Embedding(symbols, embedding_dim, padding_idx=0)
        self.convs = nn.ModuleList(nn.Conv1d(embedding_dim, filters, size, padding=size // 2) for size in kernel_sizes)
        self.dropout = nn.Dropout(dropout)
        self.head = nn.Linear(filters * len(kernel_sizes), outputs)

    def forward(self, ids: torch.Tensor, mask: torch.Tensor) -> torch.Tensor:
        x = self.embedding(ids).transpose(1, 2)
        padded = ~mask.unsqueeze(1)
        # ReLU outputs are >= 0, so zeroing padded positions leaves the max over the real ones unchanged.
        pooled = [torch.relu(conv(x))[..., : ids.shape[1]].masked_fill(padded, 0.0).amax(dim=2) for conv in self.convs]
        return self.head(self.dropout(torch.cat(pooled, dim=1)))


class ByteEncoderNetwork(nn.Module):
    """A pre-norm Transformer encoder over byte ids with learned positions, mean pooling and a linear head.

    With `downsample` > 1 a strided Conv1d stem (CANINE-style) first merges each run of `downsample` byte
    embeddings into one position, so attention runs over `downsample` times fewer positions (a Greek letter is
    two UTF-8 bytes).
    """

    def __init__(
        self,
        *,
        vocab: int,
        max_len: int,
        d_model: int,
        layers: int,
        heads: int,
        ff_dim: int,
        dropout: float,
        outputs: int,
        downsample: int = 1,
    ) -> None:
        super().__init__()
        self.downsample = downsample
        self.embedding = nn.Embedding(vocab, d_model, padding_idx=0)
        self.stem = nn.Conv1d(d_model, d_model, downsample, stride=downsample) if downsample > 1 else None
        self.position = nn.Embedding(-(-max_len // downsample), d_model)
        layer = nn.TransformerEncoderLayer(
            d_model, heads, ff_dim, dropout, activation="gelu", batch_first=True, norm_first=True
        )
        self.encoder = nn.TransformerEncoder(layer, layers, enable_nested_tensor=False)
        self.norm = nn.LayerNorm(d_model)
        self.head = nn.Sequential(nn.Dropout(dropout), nn.Linear(d_model, outputs))

    def forward(self, ids: torch.Tensor, mask: torch.Tensor) -> torch.Tensor:
        hidden = self.embedding(ids)
        if self.stem is not None:
            pad = -ids.shape[1] % self.downsample
            hidden = nn.functional.pad(hidden.transpose(1, 2), (0, pad))
            hidden = self.stem(hidden * nn.functional.pad(mask, (0, pad)).unsqueeze(1)).transpose(1, 2)
            mask = nn.functional.pad(mask, (0, pad)).view(ids.shape[0], -1, self.downsample).any(dim=2)
        positions = torch.arange(hidden.shape[1], device=ids.device)
        hidden = self.encoder(hidden + self.position(positions), src_key_padding_mask=~mask)
        return self.head(masked_mean(self.norm(hidden), mask))


class PretrainedByT5Network(nn.Module):
    """A ByT5 encoder (`transformers.T5EncoderModel`) with mean pooling and a linear head."""

    def __init__(self, backbone: Any, *, dropout: float, outputs: int) -> None:
        super().__init__()
        self.backbone = backbone
        self.head = nn.Sequential(nn.Dropout(dropout), nn.Linear(backbone.config.d_model, outputs))

    def forward(self, ids: torch.Tensor, mask: torch.Tensor) -> torch.Tensor:
        hidden = self.backbone(input_ids=ids, attention_mask=mask.long()).last_hidden_state
        return self.head(masked_mean(hidden, mask))
