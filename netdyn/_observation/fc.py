"""Functional connectivity."""

import equinox as eqx
import jax.numpy as jnp

from .._custom_types import ArrayLike, Matrix
from ._stats import as_time_nodes, standardize

_FISHER_CLIP = 1e-7


@eqx.filter_jit
def fc(x: ArrayLike, fisher_z: bool = False) -> Matrix:
    r"""Functional connectivity: the Pearson correlation matrix of the nodes' signals,

    $$ \mathrm{FC}_{ij} = \frac{\sum_t (x_{ti} - \bar x_i)(x_{tj} - \bar x_j)}
       {\sqrt{\sum_t (x_{ti} - \bar x_i)^2 \sum_t (x_{tj} - \bar x_j)^2}}, $$

    as ``numpy.corrcoef(x.T)``.

    **Arguments**:

    - ``x``: ``[time, nodes]``, or ``[time, 1, nodes]`` as a one-variable monitor emits
      it (e.g. ``sol["bold"]``). Discard a warm-up by slicing the time axis first.
    - ``fisher_z``: return $\operatorname{artanh}(\mathrm{FC}_{ij})$ (Fisher's z),
      with correlations clipped to $|r| \le 1 - 10^{-7}$ so that identical signals give
      a finite value; the diagonal is then 0.

    **Returns**: ``[nodes, nodes]``, symmetric, with diagonal 1 (0 with ``fisher_z``).
    A node whose signal is constant (zero variance) has correlation 0 with every other
    node, and its gradients are zero rather than NaN.

    Plain function: works under ``jit``, ``grad`` and ``vmap``.
    """
    x = as_time_nodes(x)
    z = standardize(x)
    r = (z.T @ z) / x.shape[0]
    eye = jnp.eye(x.shape[1], dtype=bool)
    if fisher_z:
        bound = 1.0 - _FISHER_CLIP
        r = jnp.where(eye, 0.0, jnp.clip(r, -bound, bound))
        return jnp.where(eye, 0.0, jnp.arctanh(r))
    return jnp.where(eye, 1.0, r)
