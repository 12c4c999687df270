"""The connectome, the empirical FC and the BOLD runs that ``netdyn fit`` reads, the
split of the runs into those the fit sees and those it is scored on, and the regional
maps of ``--maps``."""

import math
from dataclasses import dataclass

import numpy as np

from .. import datasets
from .._observation.runs import runs_fc
from .._parameterisation import maps as region_maps
from .._parameterisation.maps import RegionMaps
from ._options import naming

# The TR simulated when neither --tr nor the data give one (the HCP's).
DEFAULT_TR = 720.0

# The library's readers say every problem of a file (missing, damaged, foreign) as a
# ValueError naming it: said here with the option that named the file (naming).


@dataclass(frozen=True)
class FitData:
    """What ``netdyn fit`` fits to and scores on (NumPy arrays; runs ``[time, nodes]``)."""

    weights: np.ndarray
    lengths: np.ndarray
    target: np.ndarray  # the FC the fit matches: the training subjects' (or --fc, the dataset's)
    name: str
    train: list[np.ndarray] | None  # the training subjects, None without BOLD runs
    test: list[np.ndarray] | None  # the test subjects, None without any
    train_subjects: tuple[int, ...]  # their numbers (one BOLD run each), counted from 1
    test_subjects: tuple[int, ...]
    tr: float | None  # the runs' sampling period in ms, when the data say


def parse_runs(flag: str, spec: str, n: int) -> tuple[int, ...]:
    """``nd.datasets.parse_subjects(spec, n)``, its ``ValueError`` naming ``flag``."""
    with naming(flag):
        return datasets.parse_subjects(spec, n)


def _split(args, n: int) -> tuple[tuple[int, ...], tuple[int, ...]]:
    """Training and test subjects of ``n``: by default the first half (rounded up) trains,
    the rest tests (runs 1-4 and 5-7 of the embedded HCP data)."""
    first = math.ceil(n / 2) if n >= 2 else n
    train = (parse_runs("--train-subjects", args.train_subjects, n)
             if args.train_subjects is not None else tuple(range(1, first + 1)))
    rest = tuple(r for r in range(1, n + 1) if r not in train)
    test = (parse_runs("--test-subjects", args.test_subjects, n)
            if args.test_subjects is not None else rest)
    both = sorted(set(train) & set(test))
    if both:
        raise ValueError(f"--test-subjects: subject {both[0]} is also a training subject "
                         "(--train-subjects): a score on data the fit saw says nothing of "
                         "how it generalises.")
    if not train and args.fc is None:
        raise ValueError("--train-subjects none leaves nothing to fit: give training "
                         "subjects or --fc.")
    return train, test


def _runs(args, data) -> tuple[list[np.ndarray], float | None]:
    """The BOLD runs (``--bold`` files, else the dataset's) and their TR, if any."""
    if args.bold:
        with naming("--bold"):
            runs = datasets.read_bold(args.bold, n_regions=data.n_nodes)
        return [np.asarray(r) for r in runs.runs], runs.tr
    if data.bold is None:
        return [], None
    return [np.asarray(r) for r in data.bold], data.tr


def load_data(args) -> FitData:
    """The data of ``--dataset`` or ``--weights``/``--lengths``, ``--fc`` and ``--bold``,
    checked against each other, with the runs (one per subject) split by
    ``--train-subjects``/``--test-subjects``.
    The target is ``--fc``, else the training subjects' FC, else the dataset's FC. With
    ``--fc`` alone the dataset's runs are not used (they are not that FC's runs): no
    test-subject scores, no leave-one-subject-out error bars.
    Sets ``args.tr`` to the runs' TR when ``--tr`` is not given (another ``--tr`` is
    simulated as given; FCDs are then not compared, their windows being in TRs)."""
    data = _connectome(args)
    fc = None if args.fc is None else _fc_file(args.fc, data.n_nodes)
    runs, tr = _runs(args, data)
    if fc is not None and not args.bold and args.train_subjects is None and \
            args.test_subjects is None:
        # The dataset's runs are not those of a given FC: scoring on them, leaving them out
        # for error bars or taking their FCD would judge the fit against other data.
        runs = []
    if not runs and (args.train_subjects is not None or args.test_subjects is not None):
        raise ValueError(f"--train-subjects/--test-subjects: {data.name!r} has no BOLD "
                         "runs; give them with --bold FILE [FILE ...].")
    if args.tr is None:
        args.tr = tr if tr is not None else DEFAULT_TR
    train, test = _split(args, len(runs)) if runs else ((), ())
    train_data = [runs[r - 1] for r in train] or None
    if fc is None:
        fc = runs_fc(train_data) if train_data is not None else data.fc
    if fc is None:
        raise ValueError(f"--dataset {data.name!r} has no FC and no BOLD runs: pass --fc FILE "
                         "or --bold FILE [FILE ...].")
    weights = np.asarray((datasets.normalise(data) if args.normalise else data).weights)
    return FitData(weights, np.asarray(data.lengths), np.asarray(fc, dtype=float),
                   data.name, train_data, [runs[r - 1] for r in test] or None, train, test, tr)


def _connectome(args) -> datasets.Dataset:
    """The dataset of ``--dataset`` or ``--weights``/``--lengths``, with tract lengths."""
    if args.weights is not None:
        if args.lengths is None:
            raise ValueError("--weights needs --lengths (tract lengths in mm).")
        with naming("--weights/--lengths:"):
            data = datasets.read_connectome_csv(args.weights, args.lengths)
    else:
        with naming("--dataset"):
            data = datasets.from_spec(args.dataset)
    if data.lengths is None:
        raise ValueError(f"--dataset {data.name!r} has no tract lengths (needed for delays).")
    return data


def _fc_file(path: str, n: int) -> np.ndarray:
    """The FC matrix of ``--fc``, checked against the connectome's ``n`` regions."""
    with naming("--fc"):
        target = np.asarray(datasets.read_matrix(path), dtype=float)
    if target.shape != (n, n):
        raise ValueError(
            f"--fc: the FC matrix has shape {target.shape}, but the connectome has {n} "
            f"regions (expected ({n}, {n}))."
        )
    return target


def read_maps(spec: str, weights: np.ndarray, target_fc: np.ndarray) -> RegionMaps:
    """The maps of ``--maps`` (``nd.maps.from_spec``; the gradient is the fitted FC's,
    never the test subjects'), its errors naming the flag."""
    with naming("--maps"):
        return region_maps.from_spec(spec, weights, target_fc)
