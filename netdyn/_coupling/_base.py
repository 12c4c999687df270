"""Abstract bases of couplings between nodes."""

import abc

import equinox as eqx
from jaxtyping import Array, Float

from .._graph._base import Interpolation


class AbstractCoupling(eqx.Module):
    r"""A coupling between nodes, in TVB's pre/post form:

    $$ c_i = \mathrm{post}\Big(\sum_j W_{ij}\, \mathrm{pre}(x_i, x_j)\Big), $$

    with ``W[target, source]`` the graph's weights, ``x_i`` the coupled variables of the
    target and ``x_j`` those of the source (delayed by ``d_ij`` for delayed couplings).
    ``pre`` acts elementwise on edge values whose leading axis is the coupled variable;
    ``post`` acts on the ``[inputs, nodes]`` sums. The result is added to the dynamics'
    coupling input.
    """

    @abc.abstractmethod
    def pre(self, x_i: Float[Array, "k ..."], x_j: Float[Array, "k ..."]) -> Float[Array, "m ..."]:
        """Per-edge transform of the target (``x_i``) and source (``x_j``) values."""

    @abc.abstractmethod
    def post(self, gx: Float[Array, "m nodes"]) -> Float[Array, "inputs nodes"]:
        """Per-node transform of the weighted sum."""


class AbstractInstantaneousCoupling(AbstractCoupling):
    """A coupling without delays, evaluated at every solver stage."""


class AbstractDelayedCoupling(AbstractCoupling):
    """A coupling through the graph's conduction delays, read once per step (as TVB).

    ``interpolation`` (static): ``"nearest"`` reads the state at the nearest whole step,
    ``rint(d / dt)`` (TVB's convention); ``"linear"`` interpolates linearly between the two
    neighbouring steps, so that gradients with respect to delays (and conduction speed)
    are non-zero.
    """

    interpolation: eqx.AbstractVar[Interpolation]

    def __check_init__(self):
        if self.interpolation not in ("nearest", "linear"):
            raise ValueError(
                f"{type(self).__name__}: interpolation must be 'nearest' or 'linear', "
                f"got {self.interpolation!r}."
            )
