"""Jansen-Rit sigmoidal coupling (sigmoid of y1 - y2 per edge), instantaneous and delayed."""

import equinox as eqx
from jaxtyping import Array, Float

from .._custom_types import Param
from .._functions import logistic
from .._graph._base import Interpolation
from ._base import AbstractDelayedCoupling, AbstractInstantaneousCoupling


def _pre(x_j, cmin, cmax, midpoint, r):
    if x_j.shape[0] != 2:
        raise ValueError(
            "SigmoidalJansenRit needs exactly two coupled variables (Jansen-Rit's y1 and "
            f"y2), got {x_j.shape[0]}."
        )
    v = x_j[0:1] - x_j[1:2]
    return cmin + (cmax - cmin) * logistic(r * (v - midpoint))


class SigmoidalJansenRit(AbstractInstantaneousCoupling):
    r"""Jansen-Rit coupling without delays (TVB's ``SigmoidalJansenRit``):

    $$ c_i = G \sum_j W_{ij}\left(c_{min} + \frac{c_{max} - c_{min}}
             {1 + \exp\big(r\,(m - (y_{1,j} - y_{2,j}))\big)}\right), $$

    with weights ``W[target, source]``: the firing rate of each *source* (the sigmoid of
    its pyramidal membrane potential $y_1 - y_2$) is summed over afferents. The dynamics
    must couple exactly two variables, in the order ``(y1, y2)``; the output has a
    **single row** (one coupling input), which TVB's ``JansenRit`` adds to the input of
    the excitatory interneurons (``dy4``).

    **Arguments** (defaults as TVB 2.10): ``G = 1`` (TVB's ``a``), ``cmin = 0``,
    ``cmax = 0.005`` (``2 nu_max``, 1/ms), ``midpoint`` $m = 6$ mV (``v0``), ``r = 0.56``
    1/mV. ``cmin``, ``cmax``, ``midpoint`` and ``r`` act on edges: keep them scalar.

    **Reference**: Jansen & Rit (1995), *Electroencephalogram and visual evoked potential
    generation in a mathematical model of coupled cortical columns*, Biol. Cybern.
    73:357-366.
    """

    G: Param = 1.0
    cmin: Param = 0.0
    cmax: Param = 2.0 * 0.0025
    midpoint: Param = 6.0
    r: Param = 0.56

    def pre(self, x_i: Float[Array, "k ..."], x_j: Float[Array, "k ..."]) -> Float[Array, "1 ..."]:
        return _pre(x_j, self.cmin, self.cmax, self.midpoint, self.r)

    def post(self, gx: Float[Array, "1 nodes"]) -> Float[Array, "1 nodes"]:
        return self.G * gx


class DelayedSigmoidalJansenRit(AbstractDelayedCoupling):
    r"""Delayed Jansen-Rit coupling (TVB's ``SigmoidalJansenRit`` with delays):

    $$ c_i(t) = G \sum_j W_{ij}\left(c_{min} + \frac{c_{max} - c_{min}}
             {1 + \exp\big(r\,(m - (y_{1,j} - y_{2,j})(t - d_{ij}))\big)}\right), $$

    with weights ``W[target, source]``; both $y_1$ and $y_2$ of the source are delayed by
    the same $d_{ij}$. One output row, see ``SigmoidalJansenRit``.

    **Arguments**: as ``SigmoidalJansenRit`` (defaults as TVB 2.10), plus ``interpolation``
    (``"nearest"`` or ``"linear"``, see ``AbstractDelayedCoupling``).

    **Reference**: Jansen & Rit (1995), Biol. Cybern. 73:357-366.
    """

    G: Param = 1.0
    cmin: Param = 0.0
    cmax: Param = 2.0 * 0.0025
    midpoint: Param = 6.0
    r: Param = 0.56
    interpolation: Interpolation = eqx.field(default="nearest", static=True)

    def pre(self, x_i: Float[Array, "k ..."], x_j: Float[Array, "k ..."]) -> Float[Array, "1 ..."]:
        return _pre(x_j, self.cmin, self.cmax, self.midpoint, self.r)

    def post(self, gx: Float[Array, "1 nodes"]) -> Float[Array, "1 nodes"]:
        return self.G * gx
