"""Connectome weights scaled to a maximum of one."""

from ._dataset import Dataset, rechecked


def normalise(data: Dataset) -> Dataset:
    r"""``data`` with its weights divided by their largest entry, as ``netdyn fit
    --normalise`` does:

    $$ W'_{ij} = \frac{W_{ij}}{\max_{kl} W_{kl}}, $$

    so that the strongest connection weighs 1 and a coupling strength ``G`` means the same
    across connectomes of different units (streamline counts, densities). Every other
    field is kept; the embedded ``"hcp"`` weights are already normalised (max 1). For a
    bare array, this is ``w / w.max()``.

    **Arguments**:

    - ``data``: a [`netdyn.datasets.Dataset`][] (its weights are non-negative).

    **Returns**: a new `Dataset`, checked as every `Dataset` is.

    **Raises**: `ValueError` when every weight is zero (there is no scale to divide by),
    or when `data` is not a `Dataset`.

    ```python
    data = nd.datasets.normalise(nd.datasets.read_tvb_zip("connectivity_76.zip"))
    ```
    """
    if not isinstance(data, Dataset):
        raise ValueError(
            f"normalise(data) must be a netdyn.datasets.Dataset, got {type(data).__name__} "
            "(for an array w, normalise with w / w.max())."
        )
    top = float(data.weights.max())
    if not top > 0:
        raise ValueError(
            f"normalise: Dataset {data.name!r} has only zero weights; there is no maximum "
            "to divide by."
        )
    return rechecked(data, weights=data.weights / top)
