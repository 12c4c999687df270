"""Losses comparing functional connectivity (FC) and FCD."""

import equinox as eqx
import jax.numpy as jnp
import numpy as np
from jaxtyping import Array, Float

from .._custom_types import ArrayLike
from ._stats import safe_sqrt, standardize, upper_triangle


def _values(name: str, m: ArrayLike) -> Float[Array, " values"]:
    m = jnp.asarray(m)
    if m.ndim == 1:
        return m
    if m.ndim == 2 and m.shape[0] == m.shape[1]:
        return upper_triangle(m, k=1)
    raise ValueError(
        f"{name} must be a square matrix [n, n] (its upper triangle is used) or a vector "
        f"of values, got shape {m.shape}."
    )


def _pair(a: ArrayLike, b: ArrayLike):
    va, vb = _values("a", a), _values("b", b)
    if va.shape != vb.shape:
        raise ValueError(
            f"a and b must have the same shape, got {jnp.shape(a)} and {jnp.shape(b)}."
        )
    return va, vb


@eqx.filter_jit
def rmse(a: ArrayLike, b: ArrayLike) -> Float[Array, ""]:
    r"""Root-mean-square difference of the upper triangles ($k = 1$) of two FC matrices,

    $$ \sqrt{\tfrac{2}{n(n-1)} \textstyle\sum_{i<j} (a_{ij} - b_{ij})^2}. $$

    ``a`` and ``b`` are ``[nodes, nodes]`` (or 1-D vectors of values, compared as they
    are). The gradient at ``a == b`` is 0.
    """
    va, vb = _pair(a, b)
    d = va - vb
    return safe_sqrt(jnp.mean(d * d))


@eqx.filter_jit
def fc_correlation(a: ArrayLike, b: ArrayLike) -> Float[Array, ""]:
    r"""Pearson correlation between the upper triangles ($k = 1$) of two FC matrices,
    the usual "FC fit" (e.g. Deco et al. 2013). 0 when either triangle is constant."""
    va, vb = _pair(a, b)
    z = standardize(jnp.stack([va, vb], axis=1))
    return jnp.mean(z[:, 0] * z[:, 1])


@eqx.filter_jit
def one_minus_pearson(a: ArrayLike, b: ArrayLike) -> Float[Array, ""]:
    """``1 - fc_correlation(a, b)``: a loss in [0, 2], 0 for a perfect linear fit."""
    return 1.0 - fc_correlation(a, b)


@eqx.filter_jit
def fcd_distance(a: ArrayLike, b: ArrayLike) -> Float[Array, ""]:
    r"""A differentiable distance between the distributions of FCD values: the
    2-Wasserstein distance between their empirical distributions,

    $$ W_2(P_a, P_b) = \Big(\int_0^1 \big(F_a^{-1}(u) - F_b^{-1}(u)\big)^2\,du\Big)^{1/2}, $$

    with $F^{-1}$ the empirical quantile functions (Peyré & Cuturi 2019, Remark 2.30).
    It is computed exactly from the sorted values: with equal counts it is the RMS
    difference of the sorted values. FCD studies usually compare these distributions
    with the Kolmogorov-Smirnov statistic (Hansen et al. 2015; Deco et al. 2017), the
    largest gap between the two CDFs, whose gradient reaches a single value; $W_2$
    integrates the gap between the quantile functions instead, so every value gets a
    gradient (sorting is differentiable almost everywhere).

    **Arguments**: ``a``, ``b``: FCD matrices (their upper triangles, $k = 1$, are
    used) or 1-D vectors of values (e.g. ``fcd_values(m, k)``); the counts may differ.

    **References**: Peyré, Cuturi (2019), *Computational Optimal Transport*, Found. Trends
    Mach. Learn. 11(5-6); Hansen et al. (2015), NeuroImage 105:525-535; Deco, Kringelbach,
    Jirsa, Ritter (2017), Sci. Rep. 7:3095.
    """
    va, vb = jnp.sort(_values("a", a)), jnp.sort(_values("b", b))
    na, nb = va.shape[0], vb.shape[0]
    if na == 0 or nb == 0:
        raise ValueError("fcd_distance needs at least one value in a and in b.")
    # Both quantile functions are constant between consecutive breakpoints i/na, j/nb.
    levels = np.union1d(np.arange(na + 1) / na, np.arange(nb + 1) / nb)
    widths = np.diff(levels)
    mids = 0.5 * (levels[1:] + levels[:-1])
    ia = np.minimum((mids * na).astype(int), na - 1)
    ib = np.minimum((mids * nb).astype(int), nb - 1)
    d = va[ia] - vb[ib]
    return safe_sqrt(jnp.sum(jnp.asarray(widths, d.dtype) * d * d))
