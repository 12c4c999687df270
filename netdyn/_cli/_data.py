"""The connectome and the empirical FC that ``netdyn fit`` reads."""

import zipfile
import zlib
from collections.abc import Callable

import numpy as np

from .. import datasets

# What reading a damaged or foreign file can raise (ValueError covers UnicodeDecodeError).
_READ_ERRORS = (ValueError, OSError, EOFError, KeyError, zipfile.BadZipFile, zlib.error)


def _read(flag: str, path: str, read: Callable, *others: str):
    """``read(path)``; any reading error as one ``ValueError`` naming ``flag`` and the file
    (``path``, or one of ``others`` that ``read`` reads too)."""
    try:
        return read(path)
    except _READ_ERRORS as e:
        if isinstance(e, OSError) and e.strerror:
            why = f"{e.filename or path}: {e.strerror}"
        else:
            why = " ".join(str(e).split()) or type(e).__name__
            if not any(str(p) in why for p in (path, *others)):
                why = f"{path}: {why}"
        raise ValueError(f"{flag} {why}".rstrip(".") + ".") from None


def read_matrix(path: str) -> np.ndarray:
    """A matrix from ``.npy`` (no pickles) or a text/csv file."""
    if path.endswith(".npy"):
        return np.load(path, allow_pickle=False)
    return datasets.read_csv_matrix(path)


def load_data(args) -> tuple[np.ndarray, np.ndarray, np.ndarray, str]:
    """``(weights, lengths, fc, name)`` from ``--dataset`` or ``--weights``/``--lengths``,
    and ``--fc``; checked against each other."""
    if args.weights is not None:
        if args.lengths is None:
            raise ValueError("--weights needs --lengths (tract lengths in mm).")
        data = _read("--weights/--lengths:", args.weights,
                     lambda w: datasets.read_connectome_csv(w, args.lengths), args.lengths)
    elif args.dataset in datasets.available():
        data = datasets.load(args.dataset)
    elif args.dataset.endswith(".npz"):
        data = _read("--dataset", args.dataset, datasets.read_npz)
    elif args.dataset.endswith(".zip"):
        data = _read("--dataset", args.dataset, datasets.read_tvb_zip)
    else:
        raise ValueError(
            f"--dataset {args.dataset!r}: not an embedded dataset "
            f"({', '.join(datasets.available())}), a .npz or a TVB .zip file."
        )
    if data.lengths is None:
        raise ValueError(f"--dataset {data.name!r} has no tract lengths (needed for delays).")
    target = data.fc if args.fc is None else _read("--fc", args.fc, read_matrix)
    if target is None:
        raise ValueError(f"--dataset {data.name!r} has no FC: pass --fc FILE.")
    n = data.n_nodes
    target = np.asarray(target, dtype=float)
    if target.shape != (n, n):
        raise ValueError(
            f"--fc: the FC matrix has shape {target.shape}, but the connectome has {n} "
            f"regions (expected ({n}, {n}))."
        )
    weights = np.asarray(data.weights)
    if args.normalise:
        weights = weights / weights.max()
    return weights, np.asarray(data.lengths), target, data.name
