"""Dense graph without delays."""


import equinox as eqx
import jax.numpy as jnp
from jaxtyping import Array, Float

from .._custom_types import ArrayLike, Matrix
from ._base import AbstractGraph
from ._checks import check_square, check_weight_values, checked_weights
from ._dense_layout import AbstractDenseGraph
from ._input_gain import check_input_gain, checked_input_gain


class DenseGraph(AbstractDenseGraph):
    r"""A dense weighted graph without delays, ``weights[target, source]``.

    The coupling input of node ``i`` sums ``weights[i, j]`` times a function of the
    states of node ``j`` (the source) and, for some couplings, of node ``i``.

    **Arguments**:

    - ``weights``: ``[nodes, nodes]`` matrix, oriented ``[target, source]``.
    - ``signed``: allow negative weights (default ``False``: a negative weight is an error).
    - ``input_gain``: optional ``[nodes]`` gains $\gamma_i \ge 0$, each target's summed
      input scaled, $\gamma_i \sum_j W_{ij} v_{ij}$ (``simulate`` puts an
      ``nd.InputScaling``'s gains here; see ``AbstractDenseGraph``).

    Concrete weights are checked when the graph is built: NaN, infinite or (unless
    ``signed``) negative entries get a ``ValueError`` naming their ``[target, source]``
    positions; traced weights, and weights put in with ``eqx.tree_at``, are checked when
    ``simulate`` runs.
    """

    weights: Matrix
    input_gain: Float[Array, " nodes"] | None
    signed: bool = eqx.field(static=True)

    def __init__(self, weights: ArrayLike, *, signed: bool = False,
                 input_gain: ArrayLike | None = None):
        self.weights = jnp.asarray(weights)
        self.input_gain = None if input_gain is None else jnp.asarray(input_gain)
        self.signed = signed

    def __check_init__(self):
        check_square("weights", self.weights)
        check_weight_values("DenseGraph", self.weights, self.signed)
        check_input_gain("DenseGraph", self.input_gain, self.n_nodes)

    def validate(self) -> "AbstractGraph":
        check_square("weights", self.weights)
        check_input_gain("DenseGraph", self.input_gain, self.n_nodes)
        return eqx.tree_at(lambda g: (g.weights, g.input_gain), self,
                           (checked_weights(self.weights, self.signed),
                            checked_input_gain(self.input_gain)),
                           is_leaf=lambda x: x is None)
