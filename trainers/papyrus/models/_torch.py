"""Shared torch plumbing of the neural models: a seeded session, a training loop with random crops, and
windowed prediction. Imported only by `charcnn.py` and `bytes_encoder.py`, after torch is known to exist.

A network takes `(ids [B, L] long, mask [B, L] bool, True on real tokens)` and returns `[B, outputs]`.
"""

from __future__ import annotations

import contextlib
import math
from collections.abc import Iterator, Sequence
from dataclasses import dataclass

import numpy as np
import torch
from torch import nn

BUCKET_BATCHES = 32


@contextlib.contextmanager
def seeded_session(seed: int, threads: int) -> Iterator[None]:
    """Seed torch, fix the thread count and require deterministic kernels; restore all three afterwards."""
    previous_threads = torch.get_num_threads()
    previous_deterministic = torch.are_deterministic_algorithms_enabled()
    with torch.random.fork_rng(devices=[]):
        torch.manual_seed(seed)
        torch.set_num_threads(threads)
        _set_deterministic(True)
        try:
            yield
        finally:
            _set_deterministic(previous_deterministic)
            torch.set_num_threads(previous_threads)


def _set_deterministic(mode: bool) -> None:
    # The public setter also imports torch._inductor (seconds, pulls in sympy) to flag compiled code; these
    # models are never compiled, so set only the eager flag when the private hook exists.
    setter = getattr(torch._C, "_set_deterministic_algorithms", None)
    if setter is None:
        torch.use_deterministic_algorithms(mode)
    else:
        setter(mode)


@dataclass(frozen=True)
class LoopSettings:
    """How a network is trained and how long inputs are cut."""

    max_len: int
    epochs: int
    batch_size: int
    learning_rate: float
    weight_decay: float
    max_windows: int
    grad_clip: float = 1.0


def pad_batch(sequences: Sequence[torch.Tensor], pad_id: int) -> tuple[torch.Tensor, torch.Tensor]:
    """Right-pad id sequences into `(ids, mask)`."""
    length = max(1, max(len(sequence) for sequence in sequences))
    ids = torch.full((len(sequences), length), pad_id, dtype=torch.long)
    mask = torch.zeros((len(sequences), length), dtype=torch.bool)
    for row, sequence in enumerate(sequences):
        ids[row, : len(sequence)] = sequence
        mask[row, : len(sequence)] = True
    return ids, mask


def random_crop(sequence: torch.Tensor, max_len: int, generator: torch.Generator) -> torch.Tensor:
    """A window of at most `max_len` ids at a random offset."""
    if len(sequence) <= max_len:
        return sequence
    start = int(torch.randint(0, len(sequence) - max_len + 1, (1,), generator=generator))
    return sequence[start : start + max_len]


def window_starts(length: int, max_len: int, max_windows: int) -> list[int]:
    """Evenly spaced offsets of windows of `max_len` that cover a sequence (at most `max_windows`)."""
    if length <= max_len:
        return [0]
    count = min(max_windows, math.ceil(length / max_len))
    if count == 1:
        return [(length - max_len) // 2]
    return [round(index * (length - max_len) / (count - 1)) for index in range(count)]


def bucketed_batches(lengths: Sequence[int], batch_size: int, generator: torch.Generator) -> list[list[int]]:
    """Mini-batches of positions with similar lengths (less padding), in a random order.

    Positions are taken in their given (already shuffled) order in chunks of `BUCKET_BATCHES` batches; each
    chunk is sorted by length and cut into batches, and the batches are then shuffled.
    """
    chunk = batch_size * BUCKET_BATCHES
    batches = []
    for start in range(0, len(lengths), chunk):
        positions = sorted(range(start, min(len(lengths), start + chunk)), key=lambda i: lengths[i])
        batches.extend(positions[i : i + batch_size] for i in range(0, len(positions), batch_size))
    return [batches[i] for i in torch.randperm(len(batches), generator=generator).tolist()]


def train_network(
    network: nn.Module,
    sequences: Sequence[torch.Tensor],
    targets: torch.Tensor,
    *,
    loss: nn.Module,
    settings: LoopSettings,
    pad_id: int,
    seed: int,
) -> list[float]:
    """Train with AdamW on shuffled, length-bucketed mini-batches of random crops; return the loss per epoch."""
    generator = torch.Generator().manual_seed(seed)
    optimizer = torch.optim.AdamW(network.parameters(), lr=settings.learning_rate, weight_decay=settings.weight_decay)
    network.train()
    history = []
    for _ in range(settings.epochs):
        order = torch.randperm(len(sequences), generator=generator).tolist()
        crops = [random_crop(sequences[i], settings.max_len, generator) for i in order]
        total, batches = 0.0, 0
        for batch in bucketed_batches([len(crop) for crop in crops], settings.batch_size, generator):
            ids, mask = pad_batch([crops[i] for i in batch], pad_id)
            optimizer.zero_grad()
            value = loss(network(ids, mask), targets[[order[i] for i in batch]])
            value.backward()
            nn.utils.clip_grad_norm_(network.parameters(), settings.grad_clip)
            optimizer.step()
            total, batches = total + float(value.detach()), batches + 1
        history.append(total / max(1, batches))
    network.eval()
    return history


@torch.no_grad()
def predict_network(
    network: nn.Module, sequences: Sequence[torch.Tensor], *, settings: LoopSettings, pad_id: int
) -> np.ndarray:
    """Network outputs per sequence, averaged over up to `max_windows` windows of `max_len` ids."""
    network.eval()
    windows, owners = [], []
    for index, sequence in enumerate(sequences):
        for start in window_starts(len(sequence), settings.max_len, settings.max_windows):
            windows.append(sequence[start : start + settings.max_len])
            owners.append(index)
    by_length = sorted(range(len(windows)), key=lambda i: len(windows[i]))
    outputs = []
    for start in range(0, len(by_length), settings.batch_size):
        ids, mask = pad_batch([windows[i] for i in by_length[start : start + settings.batch_size]], pad_id)
        outputs.append(network(ids, mask))
    stacked = torch.empty((len(windows), outputs[0].shape[1]), dtype=torch.float64)
    stacked[torch.tensor(by_length)] = torch.cat(outputs).double()
    sums = torch.zeros((len(sequences), stacked.shape[1]), dtype=torch.float64)
    sums.index_add_(0, torch.tensor(owners), stacked)
    counts = torch.bincount(torch.tensor(owners), minlength=len(sequences)).double().unsqueeze(1)
    return (sums / counts).numpy()


def balanced_class_weights(targets: torch.Tensor, n_classes: int) -> torch.Tensor:
    """`n / (k * count_c)` per class, as `class_weight="balanced"` in scikit-learn."""
    counts = torch.bincount(targets, minlength=n_classes).float().clamp(min=1)
    return len(targets) / (n_classes * counts)


@dataclass(frozen=True)
class Targets:
    """Encoded training targets: class indices, or standardised floats with their mean and scale."""

    values: torch.Tensor
    mean: float = 0.0
    scale: float = 1.0


def encode_targets(targets: Sequence[object], classes: Sequence[str] | None) -> Targets:
    """Class indices for classification (`classes` given), else z-scored regression targets."""
    if classes is not None:
        index = {label: position for position, label in enumerate(classes)}
        return Targets(torch.tensor([index[str(target)] for target in targets], dtype=torch.long))
    values = np.asarray(targets, dtype=np.float64)
    mean, scale = float(values.mean()), float(values.std()) or 1.0
    return Targets(torch.tensor((values - mean) / scale, dtype=torch.float32).unsqueeze(1), mean, scale)


def decode_outputs(outputs: np.ndarray, classes: Sequence[str] | None, mean: float, scale: float) -> list[object]:
    """Labels (argmax over averaged logits) or de-standardised regression values."""
    if classes is not None:
        return [classes[int(position)] for position in outputs.argmax(axis=1)]
    return (outputs[:, 0] * scale + mean).tolist()


def make_loss(targets: Targets, n_classes: int | None) -> nn.Module:
    """Class-balanced cross-entropy, or mean squared error on standardised targets."""
    if n_classes is not None:
        return nn.CrossEntropyLoss(weight=balanced_class_weights(targets.values, n_classes))
    return nn.MSELoss()
