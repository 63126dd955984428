"""Numeric arrays as `.npy` files: written without pickles, read with `allow_pickle=False` after a header check."""

from __future__ import annotations

from pathlib import Path

import numpy as np

from synth.core.errors import InputError

_DTYPE = np.dtype("<f8")


def write_array(path: Path, array: np.ndarray) -> None:
    """Write a float64 array to `path` as `.npy` (no pickle)."""
    with path.open("wb") as handle:
        np.save(handle, np.ascontiguousarray(array, dtype=_DTYPE), allow_pickle=False)


def read_array(path: Path, *, shapes: tuple[tuple[int, ...], ...]) -> np.ndarray:
    """Read a little-endian float64 `.npy` array of one of `shapes`; a one-line `InputError` otherwise.

    The header is checked against `shapes` and the file size before any data is read, so a damaged or hostile
    file can neither run code (no pickles) nor make the reader allocate more than the file holds.
    """
    try:
        with path.open("rb") as handle:
            version = np.lib.format.read_magic(handle)
            if version == (1, 0):
                header = np.lib.format.read_array_header_1_0(handle)
            elif version == (2, 0):
                header = np.lib.format.read_array_header_2_0(handle)
            else:
                msg = f"{path}: unsupported .npy version {version}"
                raise InputError(msg)
            found, fortran, dtype = header
            offset = handle.tell()
            size = path.stat().st_size
    except (ValueError, OSError, SyntaxError) as error:
        msg = f"{path}: not a numpy .npy array ({(str(error).splitlines() or [type(error).__name__])[0]})"
        raise InputError(msg) from None
    shape = tuple(found)
    if dtype != _DTYPE or fortran or shape not in shapes:
        wanted = " or ".join(str(option) for option in shapes)
        msg = f"{path}: expected a float64 array of shape {wanted}, got {dtype} of shape {shape}"
        raise InputError(msg)
    expected = int(np.prod(shape, dtype=np.int64)) * _DTYPE.itemsize
    if size - offset != expected:
        msg = f"{path}: holds {size - offset:,} data bytes, expected {expected:,} for shape {shape}"
        raise InputError(msg)
    return np.load(path, allow_pickle=False)
