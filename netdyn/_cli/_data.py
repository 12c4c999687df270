"""The connectome and the empirical FC that ``netdyn fit`` reads."""

import numpy as np

from .. import datasets


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
        data = datasets.read_connectome_csv(args.weights, args.lengths)
    elif args.dataset in datasets.available():
        data = datasets.load(args.dataset)
    elif args.dataset.endswith(".npz"):
        data = datasets.read_npz(args.dataset)
    elif args.dataset.endswith(".zip"):
        data = datasets.read_tvb_zip(args.dataset)
    else:
        raise ValueError(
            f"--dataset {args.dataset!r}: not an embedded dataset "
            f"({', '.join(datasets.available())}), a .npz or a TVB .zip file."
        )
    if data.lengths is None:
        raise ValueError(f"--dataset {data.name!r} has no tract lengths (needed for delays).")
    target = data.fc if args.fc is None else read_matrix(args.fc)
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
