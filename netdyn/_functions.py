"""Numerically safe forms of functions with removable singularities or overflow.

Written once here so that every model reads its transfer function through a form that is
finite, with finite derivatives, over the whole real line in float32 and float64.
"""

import jax
import jax.numpy as jnp

# |z| below which z / (1 - exp(-z)) is taken from its Taylor series (Bernoulli numbers).
# At 0.1 the first omitted term (z^10 / 47900160) is 2e-18 relative, below float64's
# resolution; above it the exact form's derivative loses at most ~20 ulp to cancellation.
_SERIES_BELOW = 1e-1


def z_over_one_minus_exp(z):
    r"""$g(z) = z / (1 - e^{-z})$, finite and smooth through its removable singularity.

    $g(0) = 1$, $g'(0) = 1/2$ and $g(z) \to z$ for $z \to \infty$, $g(z) \to 0$ for
    $z \to -\infty$. The naive quotient is $0/0$ when $z$ rounds to 0 (its derivative
    is NaN in a window around 0, widest in float32) and overflows for $z \ll 0$. This
    form uses the series $1 + z/2 + z^2/12 - z^4/720 + z^6/30240 - z^8/1209600$ for
    $|z| < 0.1$ and, elsewhere,

    $$ g(z) = \frac{|z|\, e^{\min(z, 0)}}{1 - e^{-|z|}}, $$

    which never exponentiates a positive number. Both branches are evaluated at safe
    arguments (the "double where"), so value and gradient are finite everywhere.
    """
    small = jnp.abs(z) < _SERIES_BELOW
    zs = jnp.where(small, _SERIES_BELOW, z)  # a safe, unused argument for the exact branch
    m = jnp.abs(zs)
    exact = m * jnp.exp(jnp.minimum(zs, 0.0)) / -jnp.expm1(-m)
    z2 = z * z
    series = 1.0 + 0.5 * z + z2 * (1 / 12 + z2 * (-1 / 720 + z2 * (1 / 30240 - z2 / 1209600)))
    return jnp.where(small, series, exact)


def logistic(x):
    r"""$1 / (1 + e^{-x})$ without overflow in value or gradient (``jax.nn.sigmoid``).

    The naive quotient overflows $e^{-x}$ for $x \ll 0$ and its gradient is then
    $\infty \cdot 0 = $ NaN.
    """
    return jax.nn.sigmoid(x)
