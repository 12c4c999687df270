"""Bounded parameters: bijections from the real line onto a parameter's range."""

import abc

import equinox as eqx
import jax
import jax.numpy as jnp
import numpy as np
from jaxtyping import Array, Float

from .._custom_types import ArrayLike


class AbstractTransform(eqx.Module):
    r"""A smooth bijection $x = T(u)$ from an unconstrained value $u \in \mathbb{R}$
    (what the optimizer updates) onto a parameter's physical range (what the model sees).

    ``fit`` optimizes $u$ and builds the model from $T(u)$, so every iterate stays in
    range whatever the step size. Transforms act element-wise: one transform serves a
    scalar or a per-region vector.
    """

    @abc.abstractmethod
    def forward(self, u: Float[Array, "*shape"]) -> Float[Array, "*shape"]:
        """Physical value $x = T(u)$ of the unconstrained value ``u``."""

    @abc.abstractmethod
    def inverse(self, x: Float[Array, "*shape"]) -> Float[Array, "*shape"]:
        """Unconstrained value $u = T^{-1}(x)$; ``x`` must lie strictly inside the range."""

    @abc.abstractmethod
    def range(self) -> tuple[float, float]:
        """The open interval ``(lower, upper)`` of physical values (``±inf`` if unbounded)."""

    def check(self, name: str, x: ArrayLike) -> None:
        """``ValueError`` naming ``name`` unless every value of ``x`` is finite and strictly
        in range."""
        lo, hi = self.range()
        x = np.asarray(x, dtype=float)
        if not np.isfinite(x).all():
            first = x.ravel()[np.argmax(~np.isfinite(x).ravel())]
            raise ValueError(
                f"the initial value of {name} is not finite ({first}, "
                f"{int((~np.isfinite(x)).sum())} value(s)): a fit starts from finite values."
            )
        bad = ~((x > lo) & (x < hi))
        if bad.any():
            first = np.asarray(x).ravel()[np.argmax(bad.ravel())]
            raise ValueError(
                f"bounds: the initial value of {name} must lie strictly inside ({lo}, {hi}) "
                f"for {type(self).__name__}, got {first} ({int(bad.sum())} value(s) outside)."
            )


class Identity(AbstractTransform):
    r"""No bounds: $x = u$."""

    def forward(self, u: Float[Array, "*shape"]) -> Float[Array, "*shape"]:
        return u

    def inverse(self, x: Float[Array, "*shape"]) -> Float[Array, "*shape"]:
        return x

    def range(self) -> tuple[float, float]:
        return (-np.inf, np.inf)


def _as_bound(name: str, value) -> float:
    if isinstance(value, jax.core.Tracer):
        raise ValueError(f"{name} must be a Python number, not a traced value.")
    value = float(value)
    if np.isnan(value):
        raise ValueError(f"{name} must not be NaN.")
    return value


class Positive(AbstractTransform):
    r"""A parameter above ``lower`` (default 0): the softplus

    $$ x = \ell + \log(1 + e^{u}), \qquad u = y + \log(1 - e^{-y}),\ y = x - \ell. $$

    Far above $\ell$ a step in $u$ moves $x$ by the same amount; near $\ell$,
    $x - \ell \approx e^{u}$, so small parameters move on a log scale and never cross
    $\ell$. (In floating point, $u < -745$ rounds $x$ to $\ell$ itself.)
    """

    lower: float = eqx.field(default=0.0, static=True)

    def __check_init__(self):
        lower = _as_bound("Positive lower", self.lower)
        if not np.isfinite(lower):
            raise ValueError(f"Positive lower must be finite, got {lower}.")

    def forward(self, u: Float[Array, "*shape"]) -> Float[Array, "*shape"]:
        return self.lower + jax.nn.softplus(u)

    def inverse(self, x: Float[Array, "*shape"]) -> Float[Array, "*shape"]:
        y = x - self.lower
        return y + jnp.log(-jnp.expm1(-y))

    def range(self) -> tuple[float, float]:
        return (self.lower, np.inf)


class Interval(AbstractTransform):
    r"""A parameter in the interval $(\ell, h)$ = ``(lower, upper)``: the scaled sigmoid

    $$ x = \ell + (h - \ell)\,\sigma(u), \quad \sigma(u) = \frac{1}{1 + e^{-u}}, \qquad
       u = \log p - \log(1 - p),\ p = \frac{x - \ell}{h - \ell}. $$

    Mathematically open; in floating point $|u| \gtrsim 37$ (float64) rounds $x$ to an
    end point, so the values stay in the closed interval $[\ell, h]$.
    """

    lower: float = eqx.field(static=True)
    upper: float = eqx.field(static=True)

    def __check_init__(self):
        lower = _as_bound("Interval lower", self.lower)
        upper = _as_bound("Interval upper", self.upper)
        if not (np.isfinite(lower) and np.isfinite(upper) and lower < upper):
            raise ValueError(
                f"Interval needs finite lower < upper, got lower={lower}, upper={upper}."
            )

    def forward(self, u: Float[Array, "*shape"]) -> Float[Array, "*shape"]:
        return self.lower + (self.upper - self.lower) * jax.nn.sigmoid(u)

    def inverse(self, x: Float[Array, "*shape"]) -> Float[Array, "*shape"]:
        p = (x - self.lower) / (self.upper - self.lower)
        return jnp.log(p) - jnp.log1p(-p)

    def range(self) -> tuple[float, float]:
        return (self.lower, self.upper)
