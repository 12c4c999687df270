"""Sigmoidal coupling (sigmoid of the weighted sum), instantaneous and delayed."""

import equinox as eqx
from jaxtyping import Array, Float

from .._custom_types import Param
from .._functions import logistic
from .._graph._base import Interpolation
from ._base import AbstractDelayedCoupling, AbstractInstantaneousCoupling


def _sigmoid(gx, cmin, cmax, midpoint, a, sigma):
    return cmin + (cmax - cmin) * logistic(a * ((gx - midpoint) / sigma))


class Sigmoidal(AbstractInstantaneousCoupling):
    r"""Sigmoid of the weighted sum, without delays (TVB's ``Sigmoidal``):

    $$ c_i = c_{min} + \frac{c_{max} - c_{min}}
             {1 + \exp\!\big(-a\,(\sum_j W_{ij} x_j - m) / \sigma\big)}, $$

    with weights ``W[target, source]``. The sigmoid acts on the weighted sum (``post``),
    so a node without afferents receives $c_{min} + (c_{max} - c_{min}) / (1 + e^{a m /
    \sigma})$, not zero.

    **Arguments** (defaults as TVB 2.10): ``cmin = -1``, ``cmax = 1``, ``midpoint`` $m = 0$,
    ``a = 1`` (gain), ``sigma = 230``. TVB notes that ``a = pi / sqrt(3)`` makes the
    sigmoid's slope match a normal distribution of standard deviation ``sigma``.
    """

    cmin: Param = -1.0
    cmax: Param = 1.0
    midpoint: Param = 0.0
    a: Param = 1.0
    sigma: Param = 230.0

    def pre(self, x_i: Float[Array, "k ..."], x_j: Float[Array, "k ..."]) -> Float[Array, "k ..."]:
        return x_j

    def post(self, gx: Float[Array, "k nodes"]) -> Float[Array, "k nodes"]:
        return _sigmoid(gx, self.cmin, self.cmax, self.midpoint, self.a, self.sigma)


class DelayedSigmoidal(AbstractDelayedCoupling):
    r"""Sigmoid of the delayed weighted sum (TVB's ``Sigmoidal`` with delays):

    $$ c_i(t) = c_{min} + \frac{c_{max} - c_{min}}
                {1 + \exp\!\big(-a\,(\sum_j W_{ij} x_j(t - d_{ij}) - m) / \sigma\big)}, $$

    with weights ``W[target, source]``.

    **Arguments**: as ``Sigmoidal`` (defaults as TVB 2.10), plus ``interpolation``
    (``"nearest"`` or ``"linear"``, see ``AbstractDelayedCoupling``).
    """

    cmin: Param = -1.0
    cmax: Param = 1.0
    midpoint: Param = 0.0
    a: Param = 1.0
    sigma: Param = 230.0
    interpolation: Interpolation = eqx.field(default="nearest", static=True)

    def pre(self, x_i: Float[Array, "k ..."], x_j: Float[Array, "k ..."]) -> Float[Array, "k ..."]:
        return x_j

    def post(self, gx: Float[Array, "k nodes"]) -> Float[Array, "k nodes"]:
        return _sigmoid(gx, self.cmin, self.cmax, self.midpoint, self.a, self.sigma)
