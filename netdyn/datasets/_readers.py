"""Readers for connectomes stored in common file formats."""

import bz2
import os
import zipfile
from collections.abc import Sequence
from pathlib import Path

import numpy as np

from ._dataset import (
    Dataset,
    check_count,
    check_finite,
    check_like,
    check_matrix,
    check_nonnegative,
    frozen_array,
)
from ._files import (
    READ_ERRORS,
    PathLike,
    decode_text,
    npz_array,
    open_npz,
    parse_table,
    read_text,
)


def read_tvb_zip(path: PathLike, *, name: str | None = None) -> Dataset:
    """Read a TVB connectivity zip (as shipped by `tvb-data` or exported by TVB).

    Members are found by file stem anywhere in the archive (`weights.txt`,
    `conn/weights.txt` and `weights.txt.bz2` all match `weights`; `__MACOSX/` entries
    are ignored), as TVB's `Connectivity.from_file` does:

    - `weights` (required): whitespace-separated `[nodes, nodes]` matrix. TVB stores it
      `[target, source]`, netdyn's orientation, so it is not transposed.
    - `tract_lengths` (required): `[nodes, nodes]`, in mm.
    - `centres` (or `centers`, required): one line per region, `label x y z` (extra
      columns are ignored).
    - `cortical`, `hemispheres` (optional): one 0/1 per region (`hemispheres`: 1 = right).
    - `areas` (optional): one area per region.

    Other members (`average_orientations`, `info`) are ignored.

    **Arguments**:

    - `path`: the `.zip` file.
    - `name`: name of the returned dataset (default: the file's stem).

    **Returns**: a [`netdyn.datasets.Dataset`][] with `fc = bold = None`.

    **Raises**: `ValueError` naming the file and member when it is not a zip, a required
    member is missing or ambiguous, a matrix is not square, shapes disagree, or values are
    non-numeric, NaN/infinite or negative (weights, lengths).
    """
    path = Path(path)
    try:
        archive = zipfile.ZipFile(path)
    except (zipfile.BadZipFile, OSError) as e:
        raise ValueError(f"{path}: cannot open as a zip archive ({e}).") from None
    with archive:
        members = _members_by_stem(archive)

        def text(stem: str, required: bool) -> tuple[str, str] | None:
            found = members.get(stem, [])
            if len(found) > 1:
                raise ValueError(f"{path}: two or more members for '{stem}': {found}.")
            if not found:
                if required:
                    raise ValueError(
                        f"{path}: no '{stem}' member (e.g. {stem}.txt); the archive holds "
                        f"{sorted(archive.namelist())}."
                    )
                return None
            member = found[0]
            try:
                raw = archive.read(member)
                if member.endswith(".bz2"):
                    raw = bz2.decompress(raw)
            except READ_ERRORS as e:
                raise ValueError(f"{path}:{member}: cannot read as text ({e}).") from None
            return decode_text(raw, f"{path}:{member}"), f"{path}:{member}"

        weights_text, weights_where = text("weights", True)
        weights = _parse_matrix(weights_text, "weights", weights_where)
        check_nonnegative(weights, "weights", weights_where)
        lengths_text, lengths_where = text("tract_lengths", True)
        lengths = _parse_matrix(lengths_text, "tract_lengths", lengths_where)
        check_like(lengths, "tract_lengths", weights, lengths_where)
        check_nonnegative(lengths, "tract_lengths", lengths_where)
        n = weights.shape[0]
        centres_stem = "centres" if "centres" in members else "centers"
        if centres_stem not in members:
            text("centres", True)  # raises the missing-member error
        labels, centres = _parse_centres(*text(centres_stem, True))
        check_count(len(labels), "labels in centres", n, f"{path}:{members[centres_stem][0]}")
        extras = {}
        for stem, dtype in (("cortical", bool), ("hemispheres", bool), ("areas", np.float64)):
            found = text(stem, False)
            if found is not None:
                extras[stem] = _parse_vector(*found, stem, n, dtype)
    return Dataset(
        weights, lengths, labels, name=path.stem if name is None else name, centres=centres,
        **extras,
    )


def read_npz(
    path: PathLike,
    *,
    weights: str = "weights",
    lengths: str | None = "lengths",
    labels: str | None = "labels",
    fc: str | None = "fc",
    name: str | None = None,
) -> Dataset:
    """Read a connectome from a NumPy `.npz` archive.

    The keyword arguments name the arrays in the archive. `weights` must be present.
    The others are optional: a key left at its default name is read when present and
    `None` otherwise; a key given explicitly (any other name) must be present; `None`
    skips it. Object arrays are refused (the file is opened with `allow_pickle=False`).
    For example tvboptim's structural file reads with
    `read_npz(path, labels="region_labels")`.

    **Arguments**:

    - `path`: the `.npz` file.
    - `weights`: key of the `[nodes, nodes]` weights, `[target, source]`.
    - `lengths`: key of the `[nodes, nodes]` tract lengths in mm.
    - `labels`: key of the `[nodes]` region names.
    - `fc`: key of a `[nodes, nodes]` functional connectivity matrix.
    - `name`: name of the returned dataset (default: the file's stem).

    **Raises**: `ValueError` naming the file and key for a missing key, a damaged member
    (one whose header claims more data than the archive holds included), a non-square or
    mismatched matrix, complex values, or NaN/infinite or negative (weights, lengths)
    values.
    """
    path = Path(path)
    defaults = {"lengths": "lengths", "labels": "labels", "fc": "fc"}
    with open_npz(path) as archive:
        keys = sorted(archive.files)

        def get(role: str, key: str | None, required: bool = False):
            if key is None:
                return None
            if key not in keys:
                if required or key != defaults.get(role):
                    raise ValueError(f"{path}: no array {key!r} ({role}); keys are {keys}.")
                return None
            return npz_array(archive, key, path)

        w = _as_float(get("weights", weights, required=True), "weights", f"{path}[{weights!r}]")
        check_matrix(w, "weights", f"{path}[{weights!r}]")
        check_nonnegative(w, "weights", f"{path}[{weights!r}]")
        ln = get("lengths", lengths)
        if ln is not None:
            where = f"{path}[{lengths!r}]"
            ln = _as_float(ln, "lengths", where)
            check_like(ln, "lengths", w, where)
            check_nonnegative(ln, "lengths", where)
        lab = get("labels", labels)
        if lab is not None:
            lab = np.asarray(lab)
            if lab.ndim != 1:
                raise ValueError(
                    f"{path}[{labels!r}]: labels must be 1-D (one name per region), got "
                    f"shape {lab.shape}."
                )
            lab = [str(s) for s in lab]
            check_count(len(lab), "labels", w.shape[0], f"{path}[{labels!r}]")
        f = get("fc", fc)
        if f is not None:
            f = _as_float(f, "fc", f"{path}[{fc!r}]")
            check_like(f, "fc", w, f"{path}[{fc!r}]")
    return Dataset(w, ln, lab, name=path.stem if name is None else name, fc=f)


def read_csv_matrix(path: PathLike, *, delimiter: str | None = None) -> np.ndarray:
    """Read a square numeric matrix from a text file (CSV, TSV or whitespace-separated).

    Lines starting with `#` are comments; a UTF-8 byte-order mark (as spreadsheet programs
    write) is dropped. With `delimiter=None` the delimiter is a comma
    when the first data line contains one, whitespace otherwise. No header row or column:
    labels go in a separate file (see [`netdyn.datasets.read_connectome_csv`][]).

    **Returns**: a float64 `[n, n]` array. Values are not sign-checked (an FC matrix may be
    negative); `read_connectome_csv` checks weights and lengths.

    **Raises**: `ValueError` naming the file for a missing file, non-numeric entries, ragged
    rows, a non-square matrix, or NaN/infinite values.
    """
    path = Path(path)
    return _parse_matrix(read_text(path), "matrix", str(path), delimiter=delimiter)


def read_connectome_csv(
    weights_path: PathLike,
    lengths_path: PathLike | None = None,
    labels: Sequence[str] | PathLike | None = None,
    *,
    name: str | None = None,
) -> Dataset:
    """Read a connectome from text matrices (see [`netdyn.datasets.read_csv_matrix`][]).

    **Arguments**:

    - `weights_path`: `[nodes, nodes]` weights, oriented `[target, source]` (row `i` holds
      the inputs to region `i`; transpose a `[source, target]` file yourself).
    - `lengths_path`: `[nodes, nodes]` tract lengths in mm, or `None`.
    - `labels`: region names: a sequence of strings, or a path (`str` or `os.PathLike`)
      to a text file with one name per line; `None` numbers the regions.
    - `name`: name of the returned dataset (default: the weights file's stem).

    **Raises**: `ValueError` naming the file for every problem `read_csv_matrix` reports,
    negative weights or lengths, mismatched shapes, or a wrong number of labels.
    """
    weights = read_csv_matrix(weights_path)
    check_nonnegative(weights, "weights", str(weights_path))
    lengths = None
    if lengths_path is not None:
        lengths = read_csv_matrix(lengths_path)
        check_like(lengths, "lengths", weights, str(lengths_path))
        check_nonnegative(lengths, "lengths", str(lengths_path))
    if isinstance(labels, str | os.PathLike):
        labels_file = Path(labels)
        lines = read_text(labels_file, "labels").splitlines()
        labels = [s.strip() for s in lines if s.strip()]
        check_count(len(labels), "labels", weights.shape[0], str(labels_file))
    elif labels is not None:
        labels = [str(s) for s in labels]
        check_count(len(labels), "labels", weights.shape[0], "read_connectome_csv")
    stem = Path(weights_path).stem
    return Dataset(weights, lengths, labels, name=stem if name is None else name)


def _members_by_stem(archive: zipfile.ZipFile) -> dict[str, list[str]]:
    members: dict[str, list[str]] = {}
    for member in archive.namelist():
        if member.endswith("/") or member.startswith("__MACOSX"):
            continue
        stem = member.rsplit("/", 1)[-1]
        for suffix in (".bz2", ".txt", ".csv"):
            stem = stem.removesuffix(suffix)
        members.setdefault(stem, []).append(member)
    return members


def _as_float(value, what: str, where: str) -> np.ndarray:
    return np.asarray(frozen_array(value, what, where))


def _parse_matrix(
    content: str, what: str, where: str, delimiter: str | None = None
) -> np.ndarray:
    matrix = parse_table(content, what, where, delimiter)
    check_matrix(matrix, what, where)
    return matrix


def _parse_centres(content: str, where: str) -> tuple[list[str], np.ndarray]:
    labels, coords = [], []
    for number, line in enumerate(content.splitlines()):
        fields = line.split()
        if not fields:
            continue
        try:
            if len(fields) < 4:
                raise ValueError
            coords.append([float(s) for s in fields[1:4]])
        except ValueError:
            raise ValueError(
                f"{where}: line {number + 1} is not 'label x y z': {line.strip()[:60]!r}."
            ) from None
        labels.append(fields[0])
    centres = np.array(coords, dtype=np.float64).reshape(-1, 3)
    check_finite(centres, "centres", where)
    return labels, centres


def _parse_vector(content: str, where: str, what: str, n: int, dtype) -> np.ndarray:
    try:
        values = np.array([float(s) for s in content.split()], dtype=np.float64)
    except ValueError:
        raise ValueError(f"{where}: {what} has non-numeric entries.") from None
    check_count(values.shape[0], f"{what} values", n, where)
    check_finite(values, what, where)
    return values != 0 if dtype is bool else values
