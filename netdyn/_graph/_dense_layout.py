"""Abstract base of the graphs stored as dense ``[target, source]`` matrices."""

import equinox as eqx
import jax.numpy as jnp
from jaxtyping import Array, Float

from .._custom_types import Matrix
from . import _dense_ops
from ._base import AbstractGraph
from ._input_gain import with_gain


class AbstractDenseGraph(AbstractGraph):
    """A graph stored as dense ``[target, source]`` matrices (``DenseGraph``,
    ``DelayGraph``): every ordered pair of nodes is an edge, absent ones with weight 0.

    Edge values are ``[k, nodes, nodes]`` arrays, broadcast from ``[k, 1, nodes]``
    (source values) and ``[k, nodes, 1]`` (target values), so that a coupling that reads
    only its sources reduces to a matrix-vector product:

    $$ g_{k,i} = \\gamma_i \\sum_j W_{ij}\\, v_{k,ij}, $$

    with $\\gamma_i$ the optional per-target ``input_gain`` (1 without one).
    ``simulate`` puts an ``nd.InputScaling``'s gains $e^{g_i}$ there and the structural
    weights in ``weights``, so that reverse mode accumulates a ``[nodes]`` cotangent of
    the gains per step instead of a ``[nodes, nodes]`` one of $e^{g_i} W_{ij}$.
    """

    weights: eqx.AbstractVar[Matrix]
    input_gain: eqx.AbstractVar[Float[Array, " nodes"] | None]
    signed: eqx.AbstractVar[bool]

    @property
    def n_nodes(self) -> int:
        return jnp.shape(self.weights)[0]

    def source_values(self, x: Float[Array, "k nodes"]) -> Float[Array, "k 1 nodes"]:
        return _dense_ops.source_values(x)

    def target_values(self, x: Float[Array, "k nodes"]) -> Float[Array, "k nodes 1"]:
        return _dense_ops.target_values(x)

    def weighted_sum(self, v: Float[Array, "m ..."]) -> Float[Array, "m nodes"]:
        return with_gain(self.input_gain, _dense_ops.weighted_sum(self.weights, v), -1)
