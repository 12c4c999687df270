"""Dense graph without delays."""


import equinox as eqx
import jax.numpy as jnp

from .._custom_types import ArrayLike, Matrix
from ._base import AbstractGraph
from ._checks import check_square, check_weight_values, checked_weights
from ._dense_layout import AbstractDenseGraph


class DenseGraph(AbstractDenseGraph):
    """A dense weighted graph without delays, ``weights[target, source]``.

    The coupling input of node ``i`` sums ``weights[i, j]`` times a function of the
    states of node ``j`` (the source) and, for some couplings, of node ``i``.

    **Arguments**:

    - ``weights``: ``[nodes, nodes]`` matrix, oriented ``[target, source]``.
    - ``signed``: allow negative weights (default ``False``: a negative weight is an error).

    Concrete weights are checked when the graph is built: NaN, infinite or (unless
    ``signed``) negative entries get a ``ValueError`` naming their ``[target, source]``
    positions; traced weights, and weights put in with ``eqx.tree_at``, are checked when
    ``simulate`` runs.
    """

    weights: Matrix
    signed: bool = eqx.field(static=True)

    def __init__(self, weights: ArrayLike, *, signed: bool = False):
        self.weights = jnp.asarray(weights)
        self.signed = signed

    def __check_init__(self):
        check_square("weights", self.weights)
        check_weight_values("DenseGraph", self.weights, self.signed)

    def validate(self) -> "AbstractGraph":
        check_square("weights", self.weights)
        return eqx.tree_at(lambda g: g.weights, self, checked_weights(self.weights, self.signed))
