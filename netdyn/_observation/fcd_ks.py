"""A smoothed, differentiable Kolmogorov-Smirnov distance between FCD distributions."""

import equinox as eqx
import jax
import jax.numpy as jnp
from jaxtyping import Array, Float

from .._custom_types import ArrayLike
from ._stats import check_positive, python_int
from .losses import _values


@eqx.filter_jit
def fcd_ks(
    a: ArrayLike, b: ArrayLike, bandwidth: float | int = 0.02, points: int = 256
) -> Float[Array, ""]:
    r"""Smoothed Kolmogorov-Smirnov distance between two distributions of FCD values.

    The KS statistic usually reported for FCD fits (Hansen et al. 2015; Deco et al. 2017)
    is the largest gap between the empirical CDFs, $\sup_z |F_a(z) - F_b(z)|$: a step
    function of the values, whose gradient is zero almost everywhere. Here each step is
    replaced by a logistic ramp of width ``bandwidth`` $h$,

    $$ F^h_a(z) = \frac{1}{n_a}\sum_{i} \sigma\Big(\frac{z - a_i}{h}\Big), \qquad
       \mathrm{KS}_h(a, b) = \max_{k} \big|F^h_a(z_k) - F^h_b(z_k)\big|, $$

    with $\sigma$ the logistic function and $z_0, \dots, z_{P-1}$ ( $P$ = ``points``)
    evenly spaced from the smallest to the largest of the pooled values. Every value within
    a few $h$ of the largest gap gets a gradient. As $h \to 0$ (with a grid finer than the
    gaps between values) it tends to the KS statistic; $h$ is in the units of the values
    (FCD entries are correlations in $[-1, 1]$: the default $h = 0.02$ is 1% of that
    range). Keep the grid spacing (range / (``points`` - 1)) below $h / 2$, so that the
    maximum over the grid is close to the maximum over all $z$.
    ``fcd_distance`` ($W_2$) is the alternative that weighs the whole distribution.

    **Arguments**: ``a``, ``b``: FCD matrices (their upper triangles, $k = 1$, are used)
    or 1-D vectors of values (e.g. ``fcd_values(m, k)``); the counts may differ.
    ``bandwidth`` $h > 0$; ``points`` $P \ge 2$ (a Python int). Cost: $P (n_a + n_b)$
    logistic evaluations, and as much memory.

    **Returns**: a scalar in $[0, 1]$. Differentiable and ``vmap``-able; use it in a loss
    for ``fit`` (e.g. ``fcd_ks(fcd(sim, window, step), fcd_target)``).

    **References**: Hansen, Battaglia, Spiegler, Deco, Jirsa (2015), NeuroImage
    105:525-535; Deco, Kringelbach, Jirsa, Ritter (2017), Sci. Rep. 7:3095.
    """
    va, vb = _values("a", a), _values("b", b)
    if va.shape[0] == 0 or vb.shape[0] == 0:
        raise ValueError("fcd_ks needs at least one value in a and in b.")
    points = python_int("fcd_ks", "points", points, 2)
    check_positive("fcd_ks", "bandwidth", bandwidth)
    dtype = jnp.result_type(va.dtype, vb.dtype, float)
    va, vb = va.astype(dtype), vb.astype(dtype)
    low = jnp.minimum(jnp.min(va), jnp.min(vb))
    high = jnp.maximum(jnp.max(va), jnp.max(vb))
    z = low + (high - low) * jnp.linspace(0.0, 1.0, points, dtype=dtype)

    def soft_cdf(v):
        return jnp.mean(jax.nn.sigmoid((z[:, None] - v[None, :]) / bandwidth), axis=1)

    return jnp.max(jnp.abs(soft_cdf(va) - soft_cdf(vb)))
