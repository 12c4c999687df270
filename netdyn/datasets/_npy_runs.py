"""Arrays stored as ``.npy``, read safely: runs of regional BOLD in one array, and a
matrix from ``.npy`` or text (``read_matrix``)."""

import os
from pathlib import Path

import numpy as np

from .._validate import real_array
from ._files import read_npy
from ._readers import read_csv_matrix


def read_matrix(path: str | os.PathLike) -> np.ndarray:
    """A real matrix (an FC, say) from a ``.npy`` file or a text file (as
    ``read_csv_matrix``), as ``netdyn fit --fc`` reads it. A ``.npy`` file is read
    without pickles, its header checked against the file's size before anything is
    allocated; its shape is the caller's to check.

    **Raises** ``ValueError`` naming the file: damaged, truncated, not real numbers.
    """
    if str(path).endswith(".npy"):
        return real_array(str(path), read_npy(Path(path)))
    return read_csv_matrix(path)


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
