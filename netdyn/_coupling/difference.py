"""Difference (diffusive) coupling, instantaneous and delayed."""

import equinox as eqx
from jaxtyping import Array, Float

from .._custom_types import Param
from .._graph._base import Interpolation
from ._base import AbstractDelayedCoupling, AbstractInstantaneousCoupling


class Difference(AbstractInstantaneousCoupling):
    r"""Difference (diffusive) coupling without delays (TVB's ``Difference``):

    $$ c_i = G \sum_j W_{ij}\,(x_j - x_i), $$

    with weights ``W[target, source]``. Each coupled variable gives one coupling input.

    **Arguments**: ``G`` global coupling strength (TVB's ``a``, default 0.1 as TVB).
    """

    G: Param = 0.1

    def pre(self, x_i: Float[Array, "k ..."], x_j: Float[Array, "k ..."]) -> Float[Array, "k ..."]:
        return x_j - x_i

    def post(self, gx: Float[Array, "k nodes"]) -> Float[Array, "k nodes"]:
        return self.G * gx


class DelayedDifference(AbstractDelayedCoupling):
    r"""Delayed difference coupling (TVB's ``Difference`` on a connectivity with delays):

    $$ c_i(t) = G \sum_j W_{ij}\,\big(x_j(t - d_{ij}) - x_i(t)\big), $$

    with weights ``W[target, source]``; the target's own value is not delayed (as TVB).

    **Arguments**: ``G`` global coupling strength (TVB's ``a``, default 0.1),
    ``interpolation`` (``"nearest"`` or ``"linear"``, see ``AbstractDelayedCoupling``).
    """

    G: Param = 0.1
    interpolation: Interpolation = eqx.field(default="nearest", static=True)

    def pre(self, x_i: Float[Array, "k ..."], x_j: Float[Array, "k ..."]) -> Float[Array, "k ..."]:
        return x_j - x_i

    def post(self, gx: Float[Array, "k nodes"]) -> Float[Array, "k nodes"]:
        return self.G * gx
