"""The connectome container returned by every loader and reader, and its validation."""

import dataclasses
from collections.abc import Sequence

import equinox as eqx
import numpy as np
from jaxtyping import Bool, Float

from .._custom_types import ArrayLike


class Dataset(eqx.Module):
    """A structural connectome with optional functional data, as NumPy arrays.

    Returned by [`netdyn.datasets.load`][] and by the readers (`read_tvb_zip`, `read_npz`,
    `read_connectome_csv`). The arrays are float64 NumPy copies marked read-only; the
    container is frozen (an `eqx.Module`, so `eqx.tree_at` can build a modified copy and
    `jax.tree.map(jnp.asarray, data)` moves every array to the device).

    Orientation: `weights[i, j]` is the coupling **to** target `i` **from** source `j`
    (`W[target, source]`, as in `netdyn.DelayGraph` and TVB). Units: `lengths` in mm,
    `tr` in ms. Turn lengths into delays with a conduction speed in mm/ms, e.g.
    `nd.DelayGraph.from_lengths(data.weights, data.lengths, speed=4.0)` (delays = L / v).

    **Fields**:

    - `name`: a short name (the dataset's, or the file's stem for the readers).
    - `weights`: `[nodes, nodes]` non-negative coupling weights, `[target, source]`.
    - `lengths`: `[nodes, nodes]` non-negative tract lengths in mm, or `None`.
    - `labels`: one region name per node.
    - `fc`: `[nodes, nodes]` empirical functional connectivity, or `None`.
    - `bold`: `[subjects, time, nodes]` regional BOLD time series, or `None`.
    - `tr`: BOLD sampling period (repetition time) in ms; required with `bold`.
    - `centres`: `[nodes, 3]` region centre coordinates, or `None`.
    - `cortical`, `hemispheres`: `[nodes]` booleans, or `None` (TVB: `True` = cortical,
      `True` = right hemisphere).
    - `areas`: `[nodes]` region areas (TVB: mm^2), or `None`.
    - `citation`: how to cite the data (empty for user files).

    Checks (`ValueError` naming the dataset and array): real numbers (a complex array is
    refused, not cast), square weights, every matrix of the weights' shape, finite values,
    non-negative weights and lengths, one label per node, `bold` over the same nodes with
    a positive `tr`. [`netdyn.datasets.write_tvb_zip`][] runs them again.
    """

    name: str = eqx.field(static=True)
    weights: Float[np.ndarray, "nodes nodes"]
    lengths: Float[np.ndarray, "nodes nodes"] | None
    labels: tuple[str, ...] = eqx.field(static=True)
    fc: Float[np.ndarray, "nodes nodes"] | None
    bold: Float[np.ndarray, "subjects time nodes"] | None
    tr: float | None = eqx.field(static=True)
    centres: Float[np.ndarray, "nodes 3"] | None
    cortical: Bool[np.ndarray, " nodes"] | None
    hemispheres: Bool[np.ndarray, " nodes"] | None
    areas: Float[np.ndarray, " nodes"] | None
    citation: str = eqx.field(static=True)

    def __init__(
        self,
        weights: ArrayLike,
        lengths: ArrayLike | None = None,
        labels: Sequence[str] | None = None,
        *,
        name: str = "",
        fc: ArrayLike | None = None,
        bold: ArrayLike | None = None,
        tr: float | None = None,
        centres: ArrayLike | None = None,
        cortical: ArrayLike | None = None,
        hemispheres: ArrayLike | None = None,
        areas: ArrayLike | None = None,
        citation: str = "",
    ):
        where = f"Dataset {name!r}"
        self.name = name
        self.weights = frozen_array(weights, "weights", where)
        n = self.weights.shape[0] if self.weights.ndim else 0
        self.lengths = None if lengths is None else frozen_array(lengths, "lengths", where)
        self.labels = tuple(str(i) for i in range(n)) if labels is None else tuple(labels)
        self.fc = None if fc is None else frozen_array(fc, "fc", where)
        self.bold = None if bold is None else frozen_array(bold, "bold", where)
        self.tr = None if tr is None else float(tr)
        self.centres = None if centres is None else frozen_array(centres, "centres", where)
        self.cortical = (
            None if cortical is None else frozen_array(cortical, "cortical", where, bool)
        )
        self.hemispheres = (
            None if hemispheres is None else frozen_array(hemispheres, "hemispheres", where, bool)
        )
        self.areas = None if areas is None else frozen_array(areas, "areas", where)
        self.citation = citation

    def __check_init__(self):
        where = f"Dataset {self.name!r}"
        check_matrix(self.weights, "weights", where)
        check_nonnegative(self.weights, "weights", where)
        n = self.weights.shape[0]
        if self.lengths is not None:
            check_like(self.lengths, "lengths", self.weights, where)
            check_nonnegative(self.lengths, "lengths", where)
        if self.fc is not None:
            check_like(self.fc, "fc", self.weights, where)
        check_count(len(self.labels), "labels", n, where)
        if self.bold is not None:
            if self.bold.ndim != 3 or self.bold.shape[2] != n:
                raise ValueError(
                    f"{where}: bold must be [subjects, time, {n}] (nodes last), "
                    f"got shape {self.bold.shape}."
                )
            check_finite(self.bold, "bold", where)
            if self.tr is None or not self.tr > 0:
                raise ValueError(f"{where}: bold needs a positive tr (ms), got {self.tr}.")
        if self.centres is not None and self.centres.shape != (n, 3):
            raise ValueError(
                f"{where}: centres must have shape ({n}, 3), got {self.centres.shape}."
            )
        if self.centres is not None:
            check_finite(self.centres, "centres", where)
        for what in ("cortical", "hemispheres", "areas"):
            value = getattr(self, what)
            if value is not None:
                if value.ndim != 1:
                    raise ValueError(f"{where}: {what} must be 1-D, got shape {value.shape}.")
                check_count(value.shape[0], what, n, where)
        if self.areas is not None:
            check_finite(self.areas, "areas", where)

    @property
    def n_nodes(self) -> int:
        """Number of regions."""
        return self.weights.shape[0]


def rechecked(data: Dataset, **changes) -> Dataset:
    """``data`` (with the fields in ``changes`` replaced) built again through ``Dataset``'s
    checks, which an edit after construction (``eqx.tree_at``) skips: a writer writes only
    what the readers accept."""
    fields = {f.name: getattr(data, f.name) for f in dataclasses.fields(data)}
    return Dataset(**(fields | changes))


def frozen_array(value, what: str, where: str, dtype=np.float64) -> np.ndarray:
    """A read-only NumPy copy of ``value`` as ``dtype``; ``ValueError`` if not real
    numbers (a complex array is refused, not cast: NumPy would drop the imaginary part)."""
    try:
        raw = np.asarray(value)
        complex_ = np.iscomplexobj(raw)
        a = None if complex_ else np.array(raw, dtype=dtype)
    except (TypeError, ValueError) as e:
        raise ValueError(f"{where}: {what} is not a numeric array ({e}).") from None
    if complex_:
        raise ValueError(
            f"{where}: {what} must be real, got a complex array ({raw.dtype}); netdyn does "
            "not drop imaginary parts."
        )
    a.flags.writeable = False
    return a


def check_finite(a: np.ndarray, what: str, where: str) -> None:
    bad = ~np.isfinite(a)
    if bad.any():
        first = tuple(int(i) for i in np.argwhere(bad)[0])
        kind = "NaN" if np.isnan(a).any() else "infinite"
        raise ValueError(
            f"{where}: {what} contains {int(bad.sum())} {kind} value(s), first at index {first}."
        )


def check_matrix(a: np.ndarray, what: str, where: str) -> None:
    """Square 2-D with finite values."""
    if a.ndim != 2 or a.shape[0] != a.shape[1]:
        raise ValueError(f"{where}: {what} must be a square matrix, got shape {a.shape}.")
    if a.shape[0] == 0:
        raise ValueError(f"{where}: {what} has no regions (shape {a.shape}).")
    check_finite(a, what, where)


def check_like(a: np.ndarray, what: str, ref: np.ndarray, where: str) -> None:
    """Same shape as the weights, finite."""
    if a.shape != ref.shape:
        raise ValueError(
            f"{where}: {what} has shape {a.shape} but weights have shape {ref.shape}."
        )
    check_finite(a, what, where)


def check_nonnegative(a: np.ndarray, what: str, where: str) -> None:
    if np.any(a < 0):
        first = tuple(int(i) for i in np.argwhere(a < 0)[0])
        raise ValueError(
            f"{where}: {what} contains {int(np.sum(a < 0))} negative value(s), first at "
            f"index {first} ({a[first]})."
        )


def check_count(count: int, what: str, n: int, where: str) -> None:
    if count != n:
        raise ValueError(f"{where}: {count} {what} for {n} nodes.")
