"""Reader for tab-separated connectomes (BIDS connectivity derivatives and similar)."""

from pathlib import Path

import numpy as np

from .._validate import is_number_text
from ._dataset import Dataset, check_count, check_like, check_matrix, check_nonnegative
from ._files import PathLike, data_lines, read_text

_LABEL_COLUMNS = ("name", "label", "region", "abbreviation")


def read_tsv_connectome(
    weights: PathLike,
    lengths: PathLike | None = None,
    nodes: PathLike | None = None,
    *,
    name: str | None = None,
) -> Dataset:
    """Read a connectome from tab-separated matrices and an optional nodes table.

    The layout of BIDS connectivity derivatives (BEP017 relationship matrices, and e.g.
    `*_conndata-network_connectivity.tsv` dense exports), and of most spreadsheets:

    - **Matrix files** (`weights`, `lengths`): one row per region, separated by tabs
      (or commas, or spaces: the first line decides). A **header row** of region labels is
      optional (recognised when any of its fields is not a number), with or without a
      leading corner cell; so is a **first column** of region labels (recognised when the
      first field of every row is not a number). When both are present they must agree.
      Lines starting with `#` are comments; a UTF-8 byte-order mark (as spreadsheet
      programs write) is dropped. The matrix is oriented `[target, source]`
      (row `i` holds the inputs to region `i`; transpose a `[source, target]` file
      yourself; for a symmetric connectome either reading is the same). `lengths` in mm.
    - **Nodes file** (`nodes`, e.g. a BIDS `*_dseg.tsv` or `*_nodes.tsv`): a header row,
      then one row per region **in the matrix's order**. The labels come from the first
      of the columns `name`, `label`, `region`, `abbreviation`; the centres from columns
      `x`, `y`, `z` when all three are present. Other columns (`index`, `color`, ...)
      are ignored.

    Labels that look like numbers (e.g. atlas indices) are read as data, not as labels:
    give them in the nodes file instead.

    Labels are taken from the nodes file, else the matrices' headers, else numbered;
    every source given must agree, so that the labels travel with the right rows.

    **Arguments**:

    - `weights`: the weights matrix file.
    - `lengths`: the tract lengths matrix file (mm), or `None`.
    - `nodes`: the nodes table, or `None`.
    - `name`: name of the returned dataset (default: the weights file's stem).

    **Returns**: a [`netdyn.datasets.Dataset`][] (`centres` from the nodes file, if any).

    **Raises**: `ValueError` naming the file for unreadable or non-UTF-8 files,
    non-numeric entries, ragged rows, non-square matrices, mismatched shapes or labels,
    NaN/infinite or negative values, or a nodes file without a label column.

    For example (fields separated by tabs), a weights file with both label rows and a
    nodes file:

    ```text
    # sub-01_atlas-X_meas-weights_relmat.dense.tsv
            precentral_L  precentral_R  cuneus_L
    precentral_L   0      12.5          3.0
    ...
    # sub-01_atlas-X_nodes.tsv
    index  name          x      y     z
    1      precentral_L  -38.6  -5.7  50.9
    ...
    ```
    """
    w, w_labels = _read_labelled_matrix(Path(weights), "weights")
    check_nonnegative(w, "weights", str(weights))
    labels, source = w_labels, weights
    ln = None
    if lengths is not None:
        ln, l_labels = _read_labelled_matrix(Path(lengths), "lengths")
        check_like(ln, "lengths", w, str(lengths))
        check_nonnegative(ln, "lengths", str(lengths))
        labels, source = _agree(labels, source, l_labels, lengths)
    centres = None
    if nodes is not None:
        n_labels, centres = _read_nodes(Path(nodes))
        check_count(len(n_labels), "rows", w.shape[0], str(nodes))
        labels, source = _agree(labels, source, n_labels, nodes)
    stem = Path(weights).stem
    return Dataset(w, ln, labels, name=stem if name is None else name, centres=centres)


def _agree(labels, source, other, other_source):
    if other is None:
        return labels, source
    if labels is not None and tuple(labels) != tuple(other):
        i = next(i for i, (a, b) in enumerate(zip(labels, other)) if a != b)
        raise ValueError(
            f"{other_source}: region labels disagree with {source}: region {i} is "
            f"{other[i]!r} here and {labels[i]!r} there."
        )
    return tuple(other), other_source



def _split_rows(path: Path, what: str) -> list[list[str]]:
    lines = data_lines(read_text(path, what), what, str(path))
    first = lines[0]
    if "\t" in first:
        return [[f.strip() for f in line.rstrip("\r\n").split("\t")] for line in lines]
    if "," in first:
        return [[f.strip() for f in line.split(",")] for line in lines]
    return [line.split() for line in lines]


def _read_labelled_matrix(path: Path, what: str) -> tuple[np.ndarray, tuple[str, ...] | None]:
    rows = _split_rows(path, what)
    # A first column of labels shows in the rows below the first; the first row is a
    # header when it holds text beyond that column.
    labelled = all(row and not is_number_text(row[0]) for row in rows[1:])
    header = None
    if not all(is_number_text(f) for f in rows[0][1 if labelled else 0 :] if f):
        header, rows = rows[0], rows[1:]
        if not rows:
            raise ValueError(f"{path}: {what} has a header row but no data rows.")
    row_labels = None
    if all(row and not is_number_text(row[0]) for row in rows):
        row_labels = tuple(row[0] for row in rows)
        rows = [row[1:] for row in rows]
    for row in rows:  # a trailing delimiter leaves an empty last field
        if row and row[-1] == "":
            row.pop()
    lengths = sorted({len(row) for row in rows})
    if len(lengths) != 1:
        raise ValueError(f"{path}: {what} has ragged rows (row lengths {lengths}).")
    values = np.empty((len(rows), lengths[0]))
    for i, row in enumerate(rows):
        for j, field in enumerate(row):
            try:
                values[i, j] = float(field)
            except ValueError:
                raise ValueError(
                    f"{path}: {what} has a non-numeric entry {field!r} in data row {i + 1}, "
                    f"column {j + 1}."
                ) from None
    check_matrix(values, what, str(path))
    n = values.shape[0]
    col_labels = None
    if header is not None:
        if len(header) == n + 1:
            header = header[1:]  # the corner cell above the row labels
        if len(header) != n:
            raise ValueError(
                f"{path}: the header row has {len(header)} labels for a {n} x {n} {what} "
                "matrix."
            )
        col_labels = tuple(header)
    if row_labels is not None and col_labels is not None and row_labels != col_labels:
        raise ValueError(
            f"{path}: row labels and column labels of {what} differ (row order must equal "
            "column order)."
        )
    return values, col_labels if col_labels is not None else row_labels


def _read_nodes(path: Path) -> tuple[tuple[str, ...], np.ndarray | None]:
    rows = _split_rows(path, "nodes table")
    header = [f.lower() for f in rows[0]]
    column = next((header.index(c) for c in _LABEL_COLUMNS if c in header), None)
    if column is None:
        raise ValueError(
            f"{path}: the nodes table needs a header with one of the columns "
            f"{list(_LABEL_COLUMNS)} for the region labels; its header is {rows[0]}."
        )
    body = rows[1:]
    for i, row in enumerate(body):
        if len(row) != len(header):
            raise ValueError(
                f"{path}: nodes row {i + 1} has {len(row)} fields for {len(header)} columns."
            )
    labels = tuple(row[column] for row in body)
    centres = None
    if all(c in header for c in ("x", "y", "z")):
        idx = [header.index(c) for c in ("x", "y", "z")]
        try:
            centres = np.array([[float(row[k]) for k in idx] for row in body])
        except ValueError:
            raise ValueError(f"{path}: the x, y, z columns must be numbers.") from None
    return labels, centres
