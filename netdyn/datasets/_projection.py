"""Reader for lead-field (projection / gain) matrices, as TVB ships them."""

import importlib.util
from pathlib import Path

import numpy as np

from ._dataset import check_finite, frozen_array
from ._files import (
    READ_ERRORS,
    PathLike,
    npz_array,
    open_npz,
    parse_table,
    read_npy,
    read_text,
)

_TEXT = (".txt", ".csv", ".tsv", ".dat")


def read_projection_matrix(
    path: PathLike, *, key: str | None = None, regions: int | None = None
) -> np.ndarray:
    """Read a lead-field (gain, projection) matrix `[sensors, regions]` from a file.

    TVB ships its sensor projections (`tvb_data/projectionMatrix/`, `ProjectionMatrix`
    datatypes) as 2-D arrays with one row per sensor and one column per source; use one
    with one column per region of your connectome, in the connectome's region order, with
    [`netdyn.LeadField`][]. Formats, by file suffix:

    - `.npy`: one array (read without pickle).
    - `.npz`: the array named `key`, or the only array in the archive.
    - `.txt`, `.csv`, `.tsv`, `.dat`: one row per sensor, separated by commas, tabs or
      spaces; `#` starts a comment line.
    - `.mat` (MATLAB v5-v7, needs SciPy, which netdyn does not require): the variable
      named `key`, else `ProjectionMatrix` (TVB's name), else the only variable.

    **Arguments**:

    - `path`: the file.
    - `key`: the array's name in a `.npz` or `.mat` file.
    - `regions`: the expected number of columns (regions), checked when given.

    **Returns**: a read-only float64 `[sensors, regions]` NumPy array.

    **Raises**: `ValueError` naming the file for an unknown suffix, a missing or damaged
    file (a `.npy` header that claims more data than the file holds is refused before
    anything is allocated), a missing or ambiguous key, an array that is not 2-D, empty,
    non-numeric, complex or non-finite, or a column count other than `regions` (with a
    hint when the matrix looks transposed).
    """
    path = Path(path)
    suffix = path.suffix.lower()
    if suffix == ".npy":
        gain = read_npy(path)
    elif suffix == ".npz":
        with open_npz(path) as archive:
            names = sorted(archive.files)
            name = _choose(path, names, key, preferred=None)
            gain = npz_array(archive, name, path)
    elif suffix in _TEXT:
        gain = parse_table(read_text(path, "projection matrix"), "projection matrix", str(path))
    elif suffix == ".mat":
        gain = _read_mat(path, key)
    else:
        raise ValueError(
            f"{path}: unknown projection matrix format {suffix!r}; use .npy, .npz, "
            f"{', '.join(_TEXT)} or .mat."
        )
    gain = frozen_array(gain, "the projection matrix", str(path))
    if gain.ndim != 2 or 0 in gain.shape:
        raise ValueError(
            f"{path}: a projection matrix must be 2-D [sensors, regions] and non-empty, got "
            f"shape {gain.shape}."
        )
    check_finite(gain, "the projection matrix", str(path))
    if regions is not None and gain.shape[1] != regions:
        hint = " (it looks transposed: use its .T)" if gain.shape[0] == regions else ""
        raise ValueError(
            f"{path}: projection matrix of shape {gain.shape} = [sensors, regions] has "
            f"{gain.shape[1]} columns for {regions} regions{hint}."
        )
    return gain


def _choose(path: Path, names: list[str], key: str | None, preferred: str | None) -> str:
    if key is not None:
        if key not in names:
            raise ValueError(f"{path}: no array {key!r}; it holds {names}.")
        return key
    if preferred is not None and preferred in names:
        return preferred
    if len(names) != 1:
        raise ValueError(
            f"{path}: holds {len(names)} arrays {names}; pass key= to choose one."
        )
    return names[0]


def _read_mat(path: Path, key: str | None) -> np.ndarray:
    if importlib.util.find_spec("scipy") is None:
        raise ValueError(
            f"{path}: reading .mat files needs SciPy (pip install scipy), or convert the "
            "matrix to .npy."
        )
    from scipy import io as sio

    try:
        contents = sio.loadmat(path)
    except NotImplementedError:
        raise ValueError(
            f"{path}: MATLAB v7.3 (HDF5) files are not supported; save it with -v7 or "
            "convert the matrix to .npy."
        ) from None
    except (*READ_ERRORS, sio.matlab.MatReadError) as e:
        raise ValueError(
            f"{path}: cannot read as a .mat file ({type(e).__name__}: {e})."
        ) from None
    names = sorted(k for k in contents if not k.startswith("__"))
    return contents[_choose(path, names, key, preferred="ProjectionMatrix")]
