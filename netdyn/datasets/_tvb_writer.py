"""Writer for TVB connectivity zips."""

import os
import tempfile
import zipfile
from pathlib import Path

import numpy as np

from ._dataset import Dataset, rechecked
from ._files import PathLike


def write_tvb_zip(data: Dataset, path: PathLike, *, overwrite: bool = False) -> Path:
    """Write a connectome as a TVB connectivity zip, the format of `tvb-data`'s
    `connectivity_*.zip`, which TVB's `Connectivity.from_file` and
    [`netdyn.datasets.read_tvb_zip`][] read.

    Members (plain text, numbers with 17 significant digits, so that a read gives back
    the same float64 values):

    - `weights.txt`: `[nodes, nodes]`, `[target, source]` (TVB's orientation too);
    - `tract_lengths.txt`: `[nodes, nodes]`, mm;
    - `centres.txt`: one line `label x y z` per region, in order (zeros when the dataset
      has no `centres`: TVB requires positions, so they are then placeholders);
    - `areas.txt`, `cortical.txt`, `hemispheres.txt` (`1` = cortical, `1` = right
      hemisphere): when the dataset has them.

    The zip is written to a temporary file in the same folder and then renamed, so a
    failure (a full disk, an interruption) never leaves a partial file at `path`.

    **Arguments**:

    - `data`: a [`netdyn.datasets.Dataset`][] with `lengths`.
    - `path`: the `.zip` file to write.
    - `overwrite`: replace an existing file (default: refuse).

    **Returns**: `path` as a `Path`.

    **Raises**: `ValueError` when the dataset fails the checks of
    [`netdyn.datasets.Dataset`][] (which [`netdyn.datasets.read_tvb_zip`][] applies too:
    an edit with `eqx.tree_at` skips them, so they run again here, e.g. on NaN weights or
    negative lengths), has no lengths, a label is empty or
    contains whitespace (TVB's `centres.txt` is whitespace-separated), `path` exists
    (without `overwrite`) or is a folder, or its folder is missing or not writable.
    """
    path = Path(path)
    if not isinstance(data, Dataset):
        raise ValueError(f"write_tvb_zip needs a netdyn.datasets.Dataset, got {type(data)}.")
    try:
        data = rechecked(data)
    except ValueError as e:
        raise ValueError(f"write_tvb_zip: not writing {path}: {e}") from None
    if data.lengths is None:
        raise ValueError(
            f"write_tvb_zip: dataset {data.name!r} has no tract lengths, which a TVB "
            "connectivity requires."
        )
    for i, label in enumerate(data.labels):
        if not label or any(c.isspace() for c in label):
            raise ValueError(
                f"write_tvb_zip: label {i} ({label!r}) is empty or contains whitespace; "
                "TVB's centres.txt separates fields by whitespace (use e.g. '_')."
            )
    if path.is_dir():
        raise ValueError(f"{path}: is a folder; give the path of the .zip file to write.")
    if path.exists() and not overwrite:
        raise ValueError(f"{path}: exists; pass overwrite=True to replace it.")
    if not path.parent.is_dir():
        raise ValueError(f"{path}: the folder {path.parent} does not exist.")

    n = data.n_nodes
    centres = np.zeros((n, 3)) if data.centres is None else data.centres
    members = {
        "weights.txt": _matrix(data.weights),
        "tract_lengths.txt": _matrix(data.lengths),
        "centres.txt": "".join(
            f"{label} {_num(x)} {_num(y)} {_num(z)}\n"
            for label, (x, y, z) in zip(data.labels, centres)
        ),
    }
    if data.areas is not None:
        members["areas.txt"] = "".join(f"{_num(a)}\n" for a in data.areas)
    for what in ("cortical", "hemispheres"):
        flags = getattr(data, what)
        if flags is not None:
            members[f"{what}.txt"] = "".join(f"{int(f)}\n" for f in flags)

    try:
        fd, tmp = tempfile.mkstemp(dir=path.parent, prefix=f".{path.name}.", suffix=".tmp")
    except OSError as e:
        raise ValueError(f"{path}: cannot write in {path.parent} ({e}).") from None
    try:
        with os.fdopen(fd, "wb") as f, zipfile.ZipFile(f, "w", zipfile.ZIP_DEFLATED) as zf:
            for member, text in members.items():
                zf.writestr(member, text)
        os.chmod(tmp, 0o644)  # mkstemp's 0600 would make the result private
        os.replace(tmp, path)
    except OSError as e:
        Path(tmp).unlink(missing_ok=True)
        raise ValueError(f"{path}: cannot write ({e}).") from None
    except BaseException:
        Path(tmp).unlink(missing_ok=True)
        raise
    return path


def _num(x) -> str:
    return f"{float(x):.17g}"


def _matrix(m: np.ndarray) -> str:
    return "".join(" ".join(_num(v) for v in row) + "\n" for row in m)
