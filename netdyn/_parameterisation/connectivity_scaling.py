"""Effective connectivity: the structural weights scaled per region's input or per edge."""

import jax.numpy as jnp
from jaxtyping import Array, ArrayLike, Float

from ._base import AbstractParameterisation


def _array_or_parameterisation(x):
    return x if isinstance(x, AbstractParameterisation) else jnp.asarray(x, dtype=float)


def _check(name, weights, log_gain, gain_shape):
    if jnp.ndim(weights) != 2 or jnp.shape(weights)[0] != jnp.shape(weights)[1]:
        raise ValueError(f"{name} weights must be a square [target, source] matrix, got "
                         f"shape {jnp.shape(weights)}.")
    if isinstance(log_gain, AbstractParameterisation):
        return  # its value's shape is checked when it is resolved
    n = jnp.shape(weights)[0]
    expected = gain_shape(n)
    if jnp.shape(log_gain) != expected:
        raise ValueError(f"{name} log_gain must have shape {expected} for {n} nodes, got "
                         f"{jnp.shape(log_gain)}.")


class InputScaling(AbstractParameterisation):
    r"""Structural weights ``W[target, source]`` with each region's input scaled:

    $$ W^{\mathrm{eff}}_{ij} = e^{g_i}\, W_{ij}. $$

    A region's gain $e^{g_i}$ scales all it receives (its in-strength), positive for
    any $g_i$. Put it in place of a graph's weights: ``eqx.tree_at(lambda n:
    n.graph.weights, net, nd.InputScaling(net.graph.weights, jnp.zeros(n)))``.

    **Arguments**: ``weights`` ``[nodes, nodes]``, ``log_gain`` ``[nodes]`` (or a
    parameterisation of it, e.g. ``nd.MapParameter(0.0, maps, relative=False)``: gains
    along a few maps).
    """

    weights: Float[Array, "nodes nodes"]
    log_gain: Float[Array, " nodes"] | AbstractParameterisation

    def __init__(self, weights: ArrayLike, log_gain: ArrayLike | AbstractParameterisation):
        self.weights = jnp.asarray(weights, dtype=float)
        self.log_gain = _array_or_parameterisation(log_gain)

    def __check_init__(self):
        _check("InputScaling", self.weights, self.log_gain, lambda n: (n,))

    def value(self) -> Float[Array, "nodes nodes"]:
        return jnp.exp(self.log_gain)[:, None] * self.weights


class EdgeScaling(AbstractParameterisation):
    r"""Structural weights ``W[target, source]`` with each edge scaled:

    $$ W^{\mathrm{eff}}_{ij} = e^{g_{ij}}\, W_{ij}, $$

    so the structural connectome's mask is kept: an absent connection ($W_{ij} = 0$)
    stays absent and its $g_{ij}$ gets no gradient. Effective connectivity estimated
    on the structural scaffold (as in Gilson et al. 2016, with a positive gain).

    **Arguments**: ``weights`` ``[nodes, nodes]``, ``log_gain`` ``[nodes, nodes]``.
    """

    weights: Float[Array, "nodes nodes"]
    log_gain: Float[Array, "nodes nodes"] | AbstractParameterisation

    def __init__(self, weights: ArrayLike, log_gain: ArrayLike | AbstractParameterisation):
        self.weights = jnp.asarray(weights, dtype=float)
        self.log_gain = _array_or_parameterisation(log_gain)

    def __check_init__(self):
        _check("EdgeScaling", self.weights, self.log_gain, lambda n: (n, n))

    def value(self) -> Float[Array, "nodes nodes"]:
        return jnp.exp(self.log_gain) * self.weights
