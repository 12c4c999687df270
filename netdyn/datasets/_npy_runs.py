"""Runs of regional BOLD stored as one ``.npy`` array, read safely."""

from pathlib import Path

import numpy as np

from ._files import read_npy


def read_npy_runs(path: Path) -> list[tuple[str, np.ndarray]]:
    """The runs of a ``.npy`` array ``[time, regions]`` or ``[runs, time, regions]``, each
    ``(where, float64 copy)`` with ``where`` naming the file (and the run); the header is
    checked against the file's size before anything is allocated (``read_npy``).
    ``ValueError`` naming the file for an empty, zipped, damaged, truncated or non-real
    array."""
    value = read_npy(path)
    dtype = value.dtype
    if dtype.kind not in "iuf" or dtype.fields is not None:
        raise ValueError(f"{path}: BOLD time series must be real numbers, got dtype {dtype}.")
    if value.ndim not in (2, 3):
        raise ValueError(
            f"{path}: a .npy BOLD array must be [time, regions] or [runs, time, regions], "
            f"got shape {value.shape}."
        )
    if value.ndim == 2:
        return [(str(path), np.array(value, dtype=np.float64))]
    if value.shape[0] == 0:
        raise ValueError(f"{path}: holds no runs (shape {value.shape}).")
    n = value.shape[0]
    return [
        (f"{path} (run {k + 1} of {n})", np.array(value[k], dtype=np.float64)) for k in range(n)
    ]
