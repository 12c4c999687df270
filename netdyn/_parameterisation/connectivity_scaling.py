"""Effective connectivity: the structural weights scaled per region's input or per edge."""

from typing import ClassVar

import equinox as eqx
import jax.numpy as jnp
from jaxtyping import Array, Float

from .._custom_types import ArrayLike
from ._base import AbstractParameterisation


class AbstractConnectivityScaling(AbstractParameterisation):
    """Structural weights ``W[target, source]`` times positive gains ``exp(log_gain)``;
    the subclasses say which axes the gains span (``gain_axes``: 1, one per target region,
    or 2, one per edge)."""

    weights: eqx.AbstractVar[Float[Array, "nodes nodes"]]
    log_gain: eqx.AbstractVar[Float[Array, "..."] | AbstractParameterisation]
    gain_axes: eqx.AbstractClassVar[int]

    def __check_init__(self):
        name = type(self).__name__
        w = self.weights
        if jnp.ndim(w) != 2 or jnp.shape(w)[0] != jnp.shape(w)[1]:
            raise ValueError(f"{name} weights must be a square [target, source] matrix, got "
                             f"shape {jnp.shape(w)}.")
        if isinstance(self.log_gain, AbstractParameterisation):
            return  # its value's shape is checked when it is resolved
        n = jnp.shape(w)[0]
        expected = (n,) * self.gain_axes
        if jnp.shape(self.log_gain) != expected:
            raise ValueError(f"{name} log_gain must have shape {expected} for {n} nodes, "
                             f"got {jnp.shape(self.log_gain)}.")


def _arrays(weights, log_gain):
    """The weights as a float array, the log-gains too unless a parameterisation."""
    gain = (log_gain if isinstance(log_gain, AbstractParameterisation) else
            jnp.asarray(log_gain, dtype=float))
    return jnp.asarray(weights, dtype=float), gain


class InputScaling(AbstractConnectivityScaling):
    r"""Structural weights ``W[target, source]`` with each region's input scaled:

    $$ W^{\mathrm{eff}}_{ij} = e^{g_i}\, W_{ij}. $$

    A region's gain $e^{g_i}$ scales all it receives (its in-strength), positive for
    any $g_i$. Put it in place of a graph's weights: ``eqx.tree_at(lambda n:
    n.graph.weights, net, nd.InputScaling(net.graph.weights, jnp.zeros(n)))``.

    ``value()`` (and ``nd.resolve_parameters``) give $W^{\mathrm{eff}}$. In a dense
    graph's weights, ``nd.simulate`` and ``nd.FcLoss`` keep $W$ as the graph's weights
    and $e^{g_i}$ as its ``input_gain``, applied after each step's weighted sum: the
    same coupling input, for which reverse mode carries a cotangent per region instead
    of one per edge (``benchmarks/input_gain.md``).

    **Arguments**: ``weights`` ``[nodes, nodes]``, ``log_gain`` ``[nodes]`` (or a
    parameterisation of it, e.g. ``nd.MapParameter(0.0, maps, relative=False)``: gains
    along a few maps).
    """

    weights: Float[Array, "nodes nodes"]
    log_gain: Float[Array, " nodes"] | AbstractParameterisation
    gain_axes: ClassVar[int] = 1

    def __init__(self, weights: ArrayLike, log_gain: ArrayLike | AbstractParameterisation):
        self.weights, self.log_gain = _arrays(weights, log_gain)

    def value(self) -> Float[Array, "nodes nodes"]:
        return jnp.exp(self.log_gain)[:, None] * self.weights


class EdgeScaling(AbstractConnectivityScaling):
    r"""Structural weights ``W[target, source]`` with each edge scaled:

    $$ W^{\mathrm{eff}}_{ij} = e^{g_{ij}}\, W_{ij}, $$

    so the structural connectome's mask is kept: an absent connection ($W_{ij} = 0$)
    stays absent and its $g_{ij}$ gets no gradient. Effective connectivity estimated
    on the structural scaffold (as in Gilson et al. 2016, with a positive gain).

    **Arguments**: ``weights`` ``[nodes, nodes]``, ``log_gain`` ``[nodes, nodes]``.
    """

    weights: Float[Array, "nodes nodes"]
    log_gain: Float[Array, "nodes nodes"] | AbstractParameterisation
    gain_axes: ClassVar[int] = 2

    def __init__(self, weights: ArrayLike, log_gain: ArrayLike | AbstractParameterisation):
        self.weights, self.log_gain = _arrays(weights, log_gain)

    def value(self) -> Float[Array, "nodes nodes"]:
        return jnp.exp(self.log_gain) * self.weights
