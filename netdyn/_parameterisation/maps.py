r"""Regional maps for ``nd.MapParameter``: from the connectome, from an FC, from a file.

```python
import netdyn as nd

maps = np.stack([nd.maps.in_strength(data.weights), nd.maps.fc_gradient(train_fc)])
I_o = nd.MapParameter(0.382, maps, names=("in-strength", "fc-gradient"))
name, myelin = nd.maps.read("myelin.csv", n_regions=80)   # e.g. "T1w/T2w", z-scored
```

Every map is z-scored (mean 0, standard deviation 1 over regions), so that a map
coefficient $c$ of 0.1 changes the parameter by 10 % per standard deviation of the map.
"""

import os
from pathlib import Path
from typing import NamedTuple

import numpy as np

from .._custom_types import ArrayLike
from .._validate import is_number_text

__all__ = ["RegionMaps", "fc_gradient", "from_spec", "in_strength", "read", "zscore"]


def read(path: str | os.PathLike, n_regions: int) -> tuple[str, np.ndarray]:
    """A regional map from a text file: one value per region, in the connectome's order,
    separated by commas, tabs, spaces or new lines, with an optional first line naming
    the map (otherwise the file's stem names it), as ``netdyn fit --maps FILE`` reads it.

    **Returns** ``(name, values)``, the values z-scored (``zscore``).

    **Raises** ``ValueError`` naming the file: unreadable, a token that is not a number,
    not ``n_regions`` values, or values that are constant or not finite.
    """
    try:
        text = Path(path).read_text(encoding="utf-8-sig")
    except (OSError, UnicodeDecodeError) as e:
        raise ValueError(f"{path}: cannot read the file ({e}).") from None
    tokens = text.replace(",", " ").split()
    name = Path(path).stem
    if tokens and not is_number_text(tokens[0]):
        lines = text.splitlines()
        name = lines[0].strip().strip(",") or name
        tokens = "\n".join(lines[1:]).replace(",", " ").split()
    bad = next((t for t in tokens if not is_number_text(t)), None)
    if bad is not None:
        raise ValueError(f"{path}: {bad!r} is not a number (one value per region).")
    values = np.asarray([float(t) for t in tokens])
    if values.size != n_regions:
        raise ValueError(f"{path}: {values.size} values for {n_regions} regions (one value "
                         "per region, in the connectome's order).")
    try:
        return name, zscore(values)
    except ValueError as e:
        raise ValueError(f"{path}: {e}") from None


def zscore(x: ArrayLike) -> np.ndarray:
    r"""$(x - \bar x) / \operatorname{sd}(x)$ over regions; a constant map is refused."""
    x = np.asarray(x, dtype=float)
    if x.ndim != 1 or not np.all(np.isfinite(x)):
        raise ValueError(f"a map must be a finite vector [nodes], got shape {x.shape}.")
    sd = x.std()
    if not sd > 1e-12 * max(1.0, np.abs(x).max()):
        raise ValueError("a map must vary across regions (it is constant).")
    return (x - x.mean()) / sd


def in_strength(weights: ArrayLike) -> np.ndarray:
    r"""Each region's in-strength $\sum_j W_{ij}$ (weights ``[target, source]``), z-scored."""
    w = np.asarray(weights, dtype=float)
    if w.ndim != 2 or w.shape[0] != w.shape[1]:
        raise ValueError(f"weights must be a square matrix, got shape {w.shape}.")
    return zscore(w.sum(axis=1))


def fc_gradient(fc: ArrayLike, *, component: int = 1, sparsity: float = 0.9,
                alpha: float = 0.5) -> np.ndarray:
    r"""The principal gradient of a functional connectivity matrix (Margulies et al.
    2016), z-scored: the first non-trivial diffusion-map coordinate (Coifman & Lafon 2006);
    ``component=k`` gives the ``k``-th (the second gradient, ...).

    Each region's FC profile keeps its top ``1 - sparsity`` fraction of values (the rest
    set to 0); the affinity of two regions is the cosine similarity of their profiles
    (negative values set to 0); with degrees $d_i = \sum_j A_{ij}$ the kernel
    $L = D^{-\alpha} A D^{-\alpha}$ is normalised into a Markov matrix
    $P = \operatorname{diag}(L 1)^{-1} L$, and gradient $k$ is $P$'s eigenvector of the
    $(k+1)$-th largest eigenvalue (the largest belongs to a constant vector). Its sign is
    arbitrary in the method; here the region farthest from the mean is made positive.

    **Arguments**: ``fc`` ``[nodes, nodes]``, finite and symmetric; ``component`` from 1
    to ``nodes - 1``; ``sparsity`` in ``[0, 1)``; ``alpha`` the diffusion-map anisotropy
    (0.5 as Margulies et al.).
    """
    f = np.asarray(fc, dtype=float)
    if f.ndim != 2 or f.shape[0] != f.shape[1] or f.shape[0] < 3:
        raise ValueError(f"fc must be a square matrix with >= 3 regions, got {f.shape}.")
    if not np.all(np.isfinite(f)):
        raise ValueError("fc must be finite (NaN or inf found).")
    if not 0.0 <= sparsity < 1.0:
        raise ValueError(f"sparsity must lie in [0, 1), got {sparsity}.")
    n = f.shape[0]
    if isinstance(component, bool) or int(component) != component or not (
            1 <= component <= n - 1):
        raise ValueError(f"component must be an int from 1 to {n - 1}, got {component!r}.")
    component = int(component)
    keep = f >= np.quantile(f, sparsity, axis=1, keepdims=True)
    profiles = np.where(keep, f, 0.0)
    norms = np.linalg.norm(profiles, axis=1, keepdims=True)
    unit = profiles / np.where(norms > 0, norms, 1.0)
    affinity = np.clip(unit @ unit.T, 0.0, None)
    d = affinity.sum(axis=1) ** -alpha
    kernel = d[:, None] * affinity * d[None, :]
    degree = kernel.sum(axis=1)
    # P = D^-1 L is similar to the symmetric D^-1/2 L D^-1/2: same eigenvalues, and its
    # right eigenvectors are D^-1/2 times the symmetric one's.
    root = np.sqrt(degree)
    values, vectors = np.linalg.eigh(kernel / np.outer(root, root))
    order = np.argsort(values)[::-1]
    if values[order[component]] <= 0:
        raise ValueError(f"fc has no gradient {component} (its affinity graph is "
                         "disconnected or trivial).")
    g = zscore(vectors[:, order[component]] / root)
    return g if g[np.argmax(np.abs(g))] > 0 else -g


class RegionMaps(NamedTuple):
    """``k`` named maps, z-scored: ``names`` and ``values`` ``[k, nodes]`` (as
    ``nd.MapParameter`` takes them)."""

    names: tuple[str, ...]
    values: np.ndarray


def from_spec(spec: str, weights: ArrayLike, fc: ArrayLike) -> RegionMaps:
    """The maps a comma-separated text names, as ``netdyn fit --maps`` takes it:
    ``in-strength`` (``in_strength(weights)``), ``fc-gradient`` (``fc_gradient(fc)``: pass
    the FC fitted, never a test set's) or a file (``read``), e.g.
    ``"in-strength,fc-gradient,myelin.csv"``.

    **Raises** ``ValueError``: no map, a map named twice (starts with ``repr(spec)``) or
    a file's error (starts with its path).
    """
    w = np.asarray(weights, dtype=float)
    names, values = [], []
    for item in (s.strip() for s in spec.split(",")):
        if not item:
            continue
        if item == "in-strength":
            name, v = item, in_strength(w)
        elif item == "fc-gradient":
            name, v = item, fc_gradient(fc)
        else:
            name, v = read(item, w.shape[0])
        if name in names:
            raise ValueError(f"{spec!r} names {name} twice.")
        names.append(name)
        values.append(v)
    if not names:
        raise ValueError(f"{spec!r}: give at least one map (in-strength, fc-gradient or a "
                         "file).")
    return RegionMaps(tuple(names), np.stack(values))
