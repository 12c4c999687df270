"""Numerically safe statistics shared by the observation functions."""

import jax
import jax.numpy as jnp
import numpy as np
from jaxtyping import Array, Float

from .._custom_types import ArrayLike


def as_time_nodes(x: ArrayLike, name: str = "x") -> Float[Array, "time nodes"]:
    """``[time, nodes]`` from ``[time, nodes]`` or a monitor's ``[time, 1, nodes]``."""
    x = jnp.asarray(x)
    if x.ndim == 3 and x.shape[1] == 1:
        x = x[:, 0]
    if x.ndim != 2:
        raise ValueError(
            f"{name} must have shape [time, nodes] or [time, 1, nodes] (one monitored "
            f"variable), got {x.shape}."
        )
    if x.shape[0] < 2:
        raise ValueError(f"{name} needs at least 2 time samples, got shape {x.shape}.")
    if not jnp.issubdtype(x.dtype, jnp.floating):
        x = x.astype(float)
    return x


def standardize(x: Float[Array, "samples columns"]) -> Float[Array, "samples columns"]:
    r"""Each column minus its mean, divided by its (population) standard deviation.

    A constant column (all samples equal) becomes 0, with zero (not NaN) gradients: the
    division is guarded by a double ``where``.
    """
    mean = jnp.mean(x, axis=0)
    centred = x - mean[None]
    var = jnp.mean(centred * centred, axis=0)
    ok = (jnp.max(x, axis=0) > jnp.min(x, axis=0)) & (var > 0)
    inv_std = jnp.where(ok, 1.0 / jnp.sqrt(jnp.where(ok, var, 1.0)), 0.0)
    return centred * inv_std[None]


def safe_sqrt(x: Float[Array, "..."]) -> Float[Array, "..."]:
    """``sqrt(x)`` with gradient 0 (not infinity) at ``x = 0``; NaN stays NaN (a
    diverged simulation must not score as a perfect fit)."""
    positive = x > 0
    return jnp.where(positive, jnp.sqrt(jnp.where(positive, x, 1.0)),
                     jnp.where(jnp.isnan(x), x, 0.0))


def upper_triangle(m: ArrayLike, k: int = 1) -> Float[Array, "*batch pairs"]:
    """The entries of the square matrix ``m`` above its ``k``-th diagonal, row by row
    (``k = 1``: every pair of distinct nodes once).

    **Arguments**: ``m`` a ``[n, n]`` matrix (or a batch ``[..., n, n]``), ``k`` a
    Python int.
    """
    m = jnp.asarray(m)
    if m.ndim < 2 or m.shape[-1] != m.shape[-2]:
        raise ValueError(f"upper_triangle needs a square matrix [..., n, n], got {m.shape}.")
    rows, cols = np.triu_indices(m.shape[-1], k=k)
    return m[..., rows, cols]


def sliding_windows(x: Array, length: int, step: int) -> Array:
    """``[windows, length, ...]``: the windows ``x[s : s + length]`` along the first axis,
    starting every ``step`` samples (the incomplete last one dropped); one static gather."""
    starts = np.arange(0, x.shape[0] - length + 1, step)
    return x[starts[:, None] + np.arange(length)]


def python_int(where: str, name: str, value, lowest: int) -> int:
    """``value`` as an ``int`` when it is a Python (or NumPy) integer ``>= lowest``, not a
    bool: sizes that fix array shapes must be concrete."""
    if not isinstance(value, (int, np.integer)) or isinstance(value, bool) or value < lowest:
        raise ValueError(f"{where}: {name} must be a Python int >= {lowest}, got {value!r}.")
    return int(value)


def check_positive(where: str, name: str, value) -> None:
    """``value > 0``, checked when it is concrete (a traced value is taken as it is)."""
    if not isinstance(value, jax.core.Tracer) and not float(value) > 0:
        raise ValueError(f"{where}: {name} must be > 0, got {value!r}.")


def correlation_of_covariance(c: Float[Array, "n n"]) -> Float[Array, "n n"]:
    r"""The correlation matrix $C_{ij} / \sqrt{C_{ii} C_{jj}}$ of a covariance, with
    diagonal exactly 1; a variable of variance <= 0 has correlation 0 with the others
    (finite gradients: a double ``where``)."""
    d = jnp.diagonal(c)
    ok = d > 0
    inv = jnp.where(ok, 1.0 / jnp.sqrt(jnp.where(ok, d, 1.0)), 0.0)
    r = c * inv[:, None] * inv[None, :]
    return jnp.where(jnp.eye(c.shape[0], dtype=bool), jnp.ones_like(r), r)
