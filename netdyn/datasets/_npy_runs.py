"""Runs of regional BOLD stored as one ``.npy`` array, read safely."""

import math
import os
from pathlib import Path

import numpy as np


def read_npy_runs(path: Path) -> list[tuple[str, np.ndarray]]:
    """The runs of a ``.npy`` array ``[time, regions]`` or ``[runs, time, regions]``, each
    ``(where, float64 copy)`` with ``where`` naming the file (and the run); the header is
    checked against the file's size before anything is allocated. ``ValueError`` naming
    the file for an empty, zipped, damaged, truncated or non-real array."""
    fmt = np.lib.format
    try:
        f = open(path, "rb")
    except OSError as e:
        raise ValueError(f"{path}: cannot read as a .npy array ({e}).") from None
    with f:
        size = os.fstat(f.fileno()).st_size
        if size == 0:
            raise ValueError(f"{path}: the file is empty (0 bytes), not a .npy array.")
        if f.read(2) == b"PK":
            raise ValueError(f"{path}: expected a .npy array, found a .npz (zip) archive.")
        f.seek(0)
        # Check the header against the file before loading, so that a damaged header cannot
        # make NumPy allocate what it claims. Its parser raises many exception types.
        try:
            version = fmt.read_magic(f)
            if version not in ((1, 0), (2, 0), (3, 0)):
                raise ValueError(f"unknown format version {version}")
            # 3.0 differs from 2.0 only in the header's encoding (UTF-8 for field names)
            read_header = (
                fmt.read_array_header_1_0 if version == (1, 0) else fmt.read_array_header_2_0
            )
            shape, _, dtype = read_header(f)
        except Exception as e:
            raise ValueError(
                f"{path}: cannot read as a .npy array (damaged header: {type(e).__name__}: {e})."
            ) from None
        if dtype.kind not in "iuf" or dtype.fields is not None:
            raise ValueError(f"{path}: BOLD time series must be real numbers, got dtype {dtype}.")
        if len(shape) not in (2, 3) or any(d < 0 for d in shape):
            raise ValueError(
                f"{path}: a .npy BOLD array must be [time, regions] or [runs, time, regions], "
                f"got shape {shape}."
            )
        need = f.tell() + math.prod(shape) * dtype.itemsize
        if need > size:
            raise ValueError(
                f"{path}: the header claims shape {shape} of {dtype} ({need} bytes), but the "
                f"file has {size} bytes (truncated or damaged)."
            )
        f.seek(0)
        try:
            value = fmt.read_array(f, allow_pickle=False)
        except Exception as e:
            raise ValueError(
                f"{path}: cannot read as a .npy array ({type(e).__name__}: {e})."
            ) from None
    if value.ndim == 2:
        return [(str(path), np.array(value, dtype=np.float64))]
    if value.shape[0] == 0:
        raise ValueError(f"{path}: holds no runs (shape {value.shape}).")
    n = value.shape[0]
    return [
        (f"{path} (run {k + 1} of {n})", np.array(value[k], dtype=np.float64)) for k in range(n)
    ]
