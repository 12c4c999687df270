"""Hyperbolic-tangent coupling (a sigmoid of each source, summed), instantaneous and delayed."""

import equinox as eqx
import jax.numpy as jnp
from jaxtyping import Array, Float

from .._custom_types import Param
from .._graph._base import Interpolation
from ._base import AbstractDelayedCoupling, AbstractInstantaneousCoupling


def _pre(x_j, b, midpoint, sigma):
    return 1.0 + jnp.tanh((b * x_j - midpoint) / sigma)


class HyperbolicTangent(AbstractInstantaneousCoupling):
    r"""Hyperbolic-tangent coupling without delays (TVB's ``HyperbolicTangent``): a
    sigmoid of every *source*, summed over afferents,

    $$ c_i = G \sum_j W_{ij}\,\Big(1 + \tanh\frac{b\, x_j - m}{\sigma}\Big), $$

    with weights ``W[target, source]``, one output row per coupled variable. The sigmoid
    acts on each edge (TVB's ``pre``), so a node without afferents receives 0. With
    ``G = QV_max / 2``, ``midpoint = VT`` and ``sigma = d_V`` each source sends its
    firing rate $Q_V(V_j)$ to ``LarterBreakspear`` (TVB's usual wiring of that model,
    on weights normalised by their in-strength, so that $c_i = \langle Q_V \rangle$).

    **Arguments** (defaults as TVB 2.10): ``G = 1`` (TVB's ``a``), ``b = 1`` (gain of the
    variable), ``midpoint`` $m = 0$, ``sigma`` $\sigma = 1$. ``b``, ``midpoint`` and
    ``sigma`` act on edges: keep them scalar.
    """

    G: Param = 1.0
    b: Param = 1.0
    midpoint: Param = 0.0
    sigma: Param = 1.0

    def pre(self, x_i: Float[Array, "k ..."], x_j: Float[Array, "k ..."]) -> Float[Array, "k ..."]:
        return _pre(x_j, self.b, self.midpoint, self.sigma)

    def post(self, gx: Float[Array, "k nodes"]) -> Float[Array, "k nodes"]:
        return self.G * gx


class DelayedHyperbolicTangent(AbstractDelayedCoupling):
    r"""Delayed hyperbolic-tangent coupling (TVB's ``HyperbolicTangent`` with delays):

    $$ c_i(t) = G \sum_j W_{ij}\,\Big(1 + \tanh\frac{b\, x_j(t - d_{ij}) - m}{\sigma}\Big), $$

    with weights ``W[target, source]``; see ``HyperbolicTangent``.

    **Arguments**: as ``HyperbolicTangent`` (defaults as TVB 2.10), plus ``interpolation``
    (``"nearest"`` or ``"linear"``, see ``AbstractDelayedCoupling``).
    """

    G: Param = 1.0
    b: Param = 1.0
    midpoint: Param = 0.0
    sigma: Param = 1.0
    interpolation: Interpolation = eqx.field(default="nearest", static=True)

    def pre(self, x_i: Float[Array, "k ..."], x_j: Float[Array, "k ..."]) -> Float[Array, "k ..."]:
        return _pre(x_j, self.b, self.midpoint, self.sigma)

    def post(self, gx: Float[Array, "k nodes"]) -> Float[Array, "k nodes"]:
        return self.G * gx
