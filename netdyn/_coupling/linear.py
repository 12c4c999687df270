"""Linear coupling, instantaneous and delayed."""

import equinox as eqx
from jaxtyping import Array, Float

from .._custom_types import Param
from .._graph._base import Interpolation
from ._base import AbstractDelayedCoupling, AbstractInstantaneousCoupling


class Linear(AbstractInstantaneousCoupling):
    r"""Linear coupling without delays: $c_i = G \sum_j W_{ij} x_j + b$ (TVB's ``Linear``).

    **Arguments**: ``G`` global coupling strength (TVB's ``a``), ``b`` offset.
    """

    G: Param = 1.0
    b: Param = 0.0

    def pre(self, x_i: Float[Array, "k ..."], x_j: Float[Array, "k ..."]) -> Float[Array, "k ..."]:
        return x_j

    def post(self, gx: Float[Array, "k nodes"]) -> Float[Array, "k nodes"]:
        return self.G * gx + self.b


class DelayedLinear(AbstractDelayedCoupling):
    r"""Delayed linear coupling: $c_i(t) = G \sum_j W_{ij} x_j(t - d_{ij}) + b$.

    TVB's ``Linear`` coupling on a connectivity with tract lengths.

    **Arguments**: ``G`` global coupling strength, ``b`` offset, ``interpolation``
    (``"nearest"`` or ``"linear"``, see ``AbstractDelayedCoupling``).
    """

    G: Param = 1.0
    b: Param = 0.0
    interpolation: Interpolation = eqx.field(default="nearest", static=True)

    def pre(self, x_i: Float[Array, "k ..."], x_j: Float[Array, "k ..."]) -> Float[Array, "k ..."]:
        return x_j

    def post(self, gx: Float[Array, "k nodes"]) -> Float[Array, "k nodes"]:
        return self.G * gx + self.b
