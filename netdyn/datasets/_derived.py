"""Datasets made from a dataset: a part of it (``subset``: some of its subjects, some of
its regions) and its weights scaled to a maximum of one (``normalise``)."""

import difflib
import numbers
from collections.abc import Sequence

import numpy as np

from .._observation.runs import runs_fc
from ._dataset import Dataset, rechecked

Selection = int | str | Sequence[int | str] | np.ndarray


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


def subset(
    data: Dataset, *, subjects: Selection | None = None, regions: Selection | None = None
) -> Dataset:
    """The part of ``data`` made of some of its subjects and/or some of its regions.

    **Subjects** are the rows of `data.bold` (`[subjects, time, nodes]`), counted from 0
    (the embedded `"hcp"` data has 7, one run each; `netdyn fit --train-runs 1-4` are
    subjects 0-3 here). Keeping some of them keeps their BOLD and replaces `fc` by their
    group FC, [`netdyn.runs_fc`][] of the kept series: the mean of each subject's FC, as
    `netdyn fit` computes its training and test FC. (The embedded `"hcp"` `fc` is a
    Fisher-z average over all 7 subjects instead: entries differ by up to 0.05.) The
    connectome (`weights`, `lengths`) is the group's and stays.

    **Regions** are given by index (from 0) or by label (`data.labels`), or as a boolean
    mask of one entry per region (e.g. `data.cortical`); the kept regions take the order
    given. Every per-region field follows: rows and columns of `weights`, `lengths` and
    `fc`, the last axis of `bold`, `labels`, `centres`, `cortical`, `hemispheres`,
    `areas`. Each index or label may appear once.

    **Arguments**:

    - ``data``: a [`netdyn.datasets.Dataset`][].
    - ``subjects``: subject indices, or a boolean mask over them; `None` keeps all.
    - ``regions``: region indices or labels, or a boolean mask; `None` keeps all.

    **Returns**: a new `Dataset`, checked as every `Dataset` is (same name, `tr` and
    citation).

    **Raises**: `ValueError` naming the argument for an index out of range, an unknown
    label (with the closest labels), a name given twice, an empty selection, a mask of
    the wrong length, or subjects of a dataset without BOLD.

    ```python
    data = nd.datasets.load("hcp")
    train = nd.datasets.subset(data, subjects=[0, 1, 2, 3])       # fc: their group FC
    left = nd.datasets.subset(data, regions=[l for l in data.labels if l.endswith("_L")])
    ```
    """
    if not isinstance(data, Dataset):
        raise ValueError(
            f"subset(data) must be a netdyn.datasets.Dataset, got {type(data).__name__}."
        )
    where = f"Dataset {data.name!r}"
    bold, changes = data.bold, {}
    if subjects is not None:
        if bold is None:
            raise ValueError(
                f"subset(subjects): {where} has no BOLD time series (bold is None), so no "
                "subjects to choose from; select regions only."
            )
        bold = bold[_indices("subjects", subjects, bold.shape[0], "subject", where)]
    if regions is not None:
        keep = _indices("regions", regions, data.n_nodes, "region", where, data.labels)
        cross = np.ix_(keep, keep)
        changes["weights"] = data.weights[cross]
        changes["labels"] = tuple(data.labels[i] for i in keep)
        for name in ("lengths", "fc"):
            value = getattr(data, name)
            changes[name] = None if value is None else value[cross]
        for name in ("centres", "cortical", "hemispheres", "areas"):
            value = getattr(data, name)
            changes[name] = None if value is None else value[keep]
        bold = None if bold is None else bold[:, :, keep]
    changes["bold"] = bold
    if subjects is not None:
        changes["fc"] = runs_fc(bold)
    return rechecked(data, **changes)


def parse_subjects(spec: str, n: int) -> tuple[int, ...]:
    """Subject numbers, counted from 1, from a short text, as ``netdyn fit
    --train-subjects`` takes it: ``"1-4"``, ``"1,3,5-7"``, ``"all"`` (``1..n``) or
    ``"none"`` (no subject); each in ``1..n``, none twice.

    **Raises** ``ValueError`` that starts with ``repr(spec)``.
    """
    spec = spec.strip().lower()
    if spec == "all":
        return tuple(range(1, n + 1))
    if spec == "none":
        return ()
    runs: list[int] = []
    try:
        for part in spec.split(","):
            lo, sep, hi = part.strip().partition("-")
            first, last = int(lo), int(hi) if sep else int(lo)
            runs.extend(range(first, last + 1))
    except ValueError:
        raise ValueError(f"{spec!r}: expected subject numbers such as 1-4 or 1,3,5-7 "
                         "(counted from 1), 'all' or 'none'.") from None
    bad = [r for r in runs if not 1 <= r <= n]
    if bad or not runs or len(set(runs)) != len(runs):
        why = (f"subject {bad[0]} does not exist (the data have subjects 1-{n})" if bad else
               "no subject" if not runs else "a subject named twice")
        raise ValueError(f"{spec!r}: {why}.")
    return tuple(runs)


def _indices(what: str, value, n: int, noun: str, where: str, labels=None) -> np.ndarray:
    """``value`` (indices from 0, labels, or a boolean mask of ``n``) as distinct indices
    in ``[0, n)``; a ``ValueError`` naming ``subset(what)`` otherwise."""
    name = f"subset({what})"
    accepted = (f"{noun} indices (integers from 0){', labels' if labels else ''} or a "
                f"boolean mask of {n}")
    if isinstance(value, np.ndarray) and value.dtype == bool:
        if value.shape != (n,):
            raise ValueError(f"{name}: a boolean mask must have one entry per {noun} "
                             f"({where} has {n}), got shape {value.shape}.")
        value = np.nonzero(value)[0]
    if isinstance(value, (str, numbers.Integral)):
        value = [value]
    try:
        items = list(value)
    except TypeError:
        raise ValueError(f"{name} must be {accepted}, got {value!r}.") from None
    keep = []
    for item in items:
        if isinstance(item, (numbers.Integral, np.integer)) and not isinstance(
                item, (bool, np.bool_)):
            if not 0 <= item < n:
                raise ValueError(f"{name}: {noun} {int(item)} does not exist; {where} has "
                                 f"{n} {noun}s, counted from 0 (0-{n - 1}).")
            keep.append(int(item))
        elif isinstance(item, str) and labels:
            if item not in labels:
                listed = [repr(label) for label in _closest(item, labels)]
                if len(listed) > 1:
                    listed = [", ".join(listed[:-1]) + " or " + listed[-1]]
                hint = f"; did you mean {listed[0]}?" if listed else ""
                raise ValueError(f"{name}: {where} has no {noun} labelled {item!r}{hint} "
                                 "(the labels are data.labels).")
            keep.append(labels.index(item))
        else:
            raise ValueError(f"{name} must be {accepted}, got {item!r}.")
    if not keep:
        raise ValueError(f"{name} selects no {noun}: keep at least one.")
    seen = set()
    for item, i in zip(items, keep):
        if i in seen:
            raise ValueError(f"{name}: {noun} {item!r} is named twice.")
        seen.add(i)
    return np.asarray(keep)


def _closest(name: str, labels, n: int = 3) -> list[str]:
    """Up to ``n`` labels like ``name`` (``difflib``'s ratio at least 0.6, ignoring case),
    the closest first, in the dataset's order on ties."""
    ratio = [difflib.SequenceMatcher(None, name.lower(), label.lower()).ratio()
             for label in labels]
    order = sorted(range(len(labels)), key=lambda i: -ratio[i])
    return [labels[i] for i in order[:n] if ratio[i] >= 0.6]
