"""Dense graph without delays."""


import equinox as eqx
import jax.numpy as jnp
from jaxtyping import Array, ArrayLike, Float

from .._custom_types import Matrix
from . import _dense_ops
from ._base import AbstractGraph
from ._checks import check_square, checked_weights


class DenseGraph(AbstractGraph):
    """A dense weighted graph without delays, ``weights[target, source]``.

    The coupling input of node ``i`` sums ``weights[i, j]`` times a function of the
    states of node ``j`` (the source) and, for some couplings, of node ``i``.

    **Arguments**:

    - ``weights``: ``[nodes, nodes]`` matrix, oriented ``[target, source]``.
    - ``signed``: allow negative weights (default ``False``: a negative weight is an error).
    """

    weights: Matrix
    signed: bool = eqx.field(static=True)

    def __init__(self, weights: ArrayLike, *, signed: bool = False):
        self.weights = jnp.asarray(weights)
        self.signed = signed

    def __check_init__(self):
        check_square("weights", self.weights)

    @property
    def n_nodes(self) -> int:
        return jnp.shape(self.weights)[0]

    def source_values(self, x: Float[Array, "k nodes"]) -> Float[Array, "k 1 nodes"]:
        return _dense_ops.source_values(x)

    def target_values(self, x: Float[Array, "k nodes"]) -> Float[Array, "k nodes 1"]:
        return _dense_ops.target_values(x)

    def weighted_sum(self, v: Float[Array, "m ..."]) -> Float[Array, "m nodes"]:
        return _dense_ops.weighted_sum(self.weights, v)

    def validate(self) -> "AbstractGraph":
        check_square("weights", self.weights)
        return eqx.tree_at(lambda g: g.weights, self, checked_weights(self.weights, self.signed))
