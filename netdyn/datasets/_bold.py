"""Reader for regional BOLD time series of fMRI runs (fMRIPrep / XCP-D / nilearn files)."""

import csv
import math
import os
from collections.abc import Sequence
from pathlib import Path
from typing import NamedTuple

import numpy as np

from .._validate import is_number_text
from ._files import PathLike, data_lines, read_text
from ._npy_runs import read_npy_runs
from ._tr import check_tr, run_tr, sidecar_tr

_TEXT = (".tsv", ".csv", ".txt")
_MISSING = ("n/a", "na", "nan", "")  # lower-cased; "" is how pandas writes NaN by default
_MIN_TIME = 10  # fewest time points per run for an FC worth the name
_WHAT = "BOLD time series"


class BoldRuns(NamedTuple):
    """Regional BOLD time series of one or more fMRI runs, as read by
    [`netdyn.datasets.read_bold`][].

    **Fields**:

    - `runs`: one read-only float64 `[time, regions]` array per run (runs may differ in
      length, never in regions).
    - `tr`: the repetition time in ms, or `None` when neither the argument nor a sidecar
      gave one.
    - `labels`: the region names from the files' header rows, or `None` without one.
    - `files`: the paths read, as `str`, one per file in the order given (a 3-D `.npy`
      file contributes several runs).
    """

    runs: tuple[np.ndarray, ...]
    tr: float | None
    labels: tuple[str, ...] | None
    files: tuple[str, ...]


def read_bold(
    paths: PathLike | Sequence[PathLike],
    *,
    tr: float | int | None = None,
    n_regions: int | None = None,
) -> BoldRuns:
    """Read regional BOLD time series of one or more fMRI runs.

    Rows are time points (one per TR), columns are regions, in every format (by suffix):

    - `.tsv`, `.csv`, `.txt`: as written by fMRIPrep / XCP-D (`*_timeseries.tsv`: tabs, a
      header row of region names, `n/a` for missing values), by nilearn users with
      `np.savetxt` (no header) or pandas `to_csv`, and by spreadsheets (commas; a UTF-8
      byte-order mark and Windows line endings are fine). The first line decides the
      delimiter (tab, else comma, else whitespace) and is a header when any of its fields
      is not a number (so numeric region names are read as data). `#` lines are comments.
    - `.npy`: `[time, regions]` (one run) or `[runs, time, regions]` (several), read
      without pickle.

    The TR comes from `tr` (in **ms**), else from the BIDS JSON sidecar of each file (its
    path with the suffix `.json`, e.g. `sub-01_task-rest_timeseries.json`, key
    `RepetitionTime` in **seconds**), else it is `None` and the caller must supply one. A
    `tr` that disagrees with a sidecar is an error, and so are runs with different TRs or a
    sidecar TR for some files but not others.

    **Arguments**:

    - `paths`: a file, or a sequence of files (`str` or `os.PathLike`).
    - `tr`: the repetition time in ms, or `None` to read it from the sidecars.
    - `n_regions`: the connectome's number of regions, checked against every run's columns.

    **Returns**: a [`netdyn.datasets.BoldRuns`][] `(runs, tr, labels, files)`.

    **Raises**: `ValueError` naming the file (and region) for an empty `paths`, an unknown
    suffix, a missing, empty, damaged or non-UTF-8 file, ragged rows, non-numeric entries,
    a `.npy` array that is not numeric or not 2-/3-D, a region with NaN / `n/a` / infinite
    values or constant over time (FC is undefined for it), fewer than 10 time points,
    regions that differ between runs or from `n_regions`, a bad `tr` or sidecar, or TRs
    that disagree.
    """
    files = _as_paths(paths)
    if tr is not None:
        tr = check_tr(tr)
    if n_regions is not None and (
        isinstance(n_regions, bool) or not isinstance(n_regions, int | np.integer) or n_regions < 1
    ):
        raise ValueError(f"read_bold: n_regions must be a positive integer, got {n_regions!r}.")
    runs: list[np.ndarray] = []
    labels = labels_from = None
    first = None  # (where, regions) of the first run, which every other run must match
    sidecar_trs: list[tuple[Path, float | None]] = []  # (file, TR in ms or None)
    for path in files:
        suffix = path.suffix.lower()
        if suffix == ".npy":
            file_runs = read_npy_runs(path)
            file_labels = None
        elif suffix in _TEXT:
            run, file_labels = _read_text(path)
            file_runs = [(str(path), run)]
        else:
            hint = (
                " (extract regional time series first, e.g. with nilearn's NiftiLabelsMasker)"
                if suffix in (".nii", ".gz", ".mgz")
                else ""
            )
            raise ValueError(
                f"{path}: unknown BOLD time series format {suffix!r}; use .tsv, .csv, .txt "
                f"or .npy{hint}."
            )
        for where, run in file_runs:
            _check_run(run, where, file_labels, n_regions)
            if first is None:
                first = (where, run.shape[1])
            elif run.shape[1] != first[1]:
                raise ValueError(
                    f"{where}: has {run.shape[1]} regions, but {first[0]} has {first[1]}; all "
                    "runs must cover the same regions."
                )
            run.flags.writeable = False
            runs.append(run)
        sidecar_trs.append((path, sidecar_tr(path, tr)))
        if file_labels is not None:
            if labels is not None and file_labels != labels:
                i = next(i for i, (a, b) in enumerate(zip(labels, file_labels)) if a != b)
                raise ValueError(
                    f"{path}: region labels differ from {labels_from}: column {i + 1} is "
                    f"{file_labels[i]!r} here and {labels[i]!r} there."
                )
            labels, labels_from = file_labels, path
    return BoldRuns(tuple(runs), run_tr(tr, sidecar_trs), labels, tuple(str(p) for p in files))


def _as_paths(paths) -> list[Path]:
    if isinstance(paths, str | os.PathLike):
        paths = [paths]
    try:
        paths = list(paths)
    except TypeError:
        raise TypeError(
            f"read_bold: paths must be a path or a sequence of paths, got {paths!r}."
        ) from None
    if not paths:
        raise ValueError("read_bold: no files given (paths is empty).")
    for p in paths:
        if not isinstance(p, str | os.PathLike):
            raise TypeError(f"read_bold: paths must be str or os.PathLike, got {p!r}.")
    return [Path(p) for p in paths]


def _region(labels: tuple[str, ...] | None, j: int) -> str:
    return f"region {labels[j]!r} (column {j + 1})" if labels else f"region in column {j + 1}"


def _check_run(
    run: np.ndarray, where: str, labels: tuple[str, ...] | None, n_regions: int | None
) -> None:
    t, n = run.shape
    if n == 0:
        raise ValueError(f"{where}: has no regions (shape {run.shape}).")
    if n_regions is not None and n != n_regions:
        hint = (
            " (it looks transposed: rows must be time points, columns regions)"
            if t == n_regions
            else ""
        )
        raise ValueError(f"{where}: has {n} regions, but the connectome has {n_regions}{hint}.")
    if t < _MIN_TIME:
        raise ValueError(f"{where}: has {t} time point(s); FC needs more (at least {_MIN_TIME}).")
    bad = ~np.isfinite(run)
    if bad.any():
        j = int(np.flatnonzero(bad.any(axis=0))[0])
        missing = int(np.isnan(run[:, j]).sum())
        kind = f"{missing} missing (NaN or n/a)" if missing else f"{int(bad[:, j].sum())} infinite"
        others = int(bad.any(axis=0).sum()) - 1
        also = f" ({others} other region(s) too)" if others else ""
        raise ValueError(
            f"{where}: {_region(labels, j)} has {kind} value(s) of {t}{also}; FC cannot be "
            "computed from it (drop the region or fill the gaps)."
        )
    constant = np.flatnonzero(np.all(run == run[0], axis=0))
    if constant.size:
        j = int(constant[0])
        also = f" ({constant.size - 1} other region(s) too)" if constant.size > 1 else ""
        raise ValueError(
            f"{where}: {_region(labels, j)} is constant ({run[0, j]}) over all {t} time "
            f"points{also}; its FC is undefined (zero variance)."
        )


def _is_number(field: str) -> bool:
    """A number, or a marker of a missing value (``_MISSING``)."""
    return field.lower() in _MISSING or is_number_text(field)


def _read_text(path: Path) -> tuple[np.ndarray, tuple[str, ...] | None]:
    content = read_text(path, _WHAT)  # without a spreadsheet's byte-order mark
    lines = data_lines(content, _WHAT, str(path))
    if "\t" in lines[0] or "," in lines[0]:
        delimiter = "\t" if "\t" in lines[0] else ","
        rows = [[f.strip() for f in row] for row in csv.reader(lines, delimiter=delimiter)]
        if all(row and row[-1] == "" for row in rows):
            rows = [row[:-1] for row in rows]  # a trailing delimiter on every line
    else:
        rows = [line.split() for line in lines]
    header = None
    if not all(_is_number(f) for f in rows[0]):
        header, rows = tuple(rows[0]), rows[1:]
        if not rows:
            raise ValueError(f"{path}: {_WHAT} has a header row but no data rows.")
        if "" in header:
            raise ValueError(
                f"{path}: header field {header.index('') + 1} is empty; every column needs a "
                "region name (an index column? write it with pandas' index=False)."
            )
    n = len(header) if header is not None else len(rows[0])
    for i, row in enumerate(rows):
        if len(row) != n:
            first = "the header row has" if header is not None else "data row 1 has"
            raise ValueError(
                f"{path}: {_WHAT} has ragged rows: data row {i + 1} has {len(row)} fields, "
                f"{first} {n}."
            )
    values = np.empty((len(rows), n))
    for i, row in enumerate(rows):
        try:
            values[i] = [math.nan if f.lower() in _MISSING else float(f) for f in row]
        except ValueError:
            j = next(j for j, f in enumerate(row) if not _is_number(f))
            raise ValueError(
                f"{path}: {_WHAT} has a non-numeric entry {row[j]!r} in data row {i + 1}, "
                f"column {j + 1}{f' ({header[j]!r})' if header else ''}."
            ) from None
    return values, header
