"""Dense graph with conduction delays."""


import equinox as eqx
import jax.numpy as jnp
from jaxtyping import Array, Float

from .._custom_types import ArrayLike, History, Matrix, Scalar
from . import _dense_ops
from ._base import (
    AbstractBatchMinorGraph,
    AbstractGraph,
    DelayIndex,
    Interpolation,
    delays_from_lengths,
)
from ._checks import (
    check_delay_values,
    check_same_shape,
    check_square,
    check_weight_values,
    checked_delays,
    checked_weights,
    concrete_max,
    delay_rows,
)
from ._dense_layout import AbstractDenseGraph
from ._input_gain import check_input_gain, checked_input_gain, with_gain


class DelayGraph(AbstractDenseGraph, AbstractBatchMinorGraph):
    r"""A dense weighted graph with conduction delays, both ``[target, source]``.

    The delayed coupling input of node ``i`` reads the state of node ``j`` at
    ``t - delays[i, j]``. Delays are in ms; build them from tract lengths (mm) and a
    conduction speed (mm/ms) with ``DelayGraph.from_lengths``.

    **Arguments**:

    - ``weights``: ``[nodes, nodes]`` matrix, oriented ``[target, source]``.
    - ``delays``: ``[nodes, nodes]`` delays in ms, same orientation.
    - ``max_delay``: the largest delay the history buffer must hold (ms); computed from
      ``delays`` when omitted (then ``delays`` must be concrete, not traced).
    - ``signed``: allow negative weights.
    - ``input_gain``: optional ``[nodes]`` gains $\gamma_i \ge 0$, each target's summed
      input scaled, $\gamma_i \sum_j W_{ij} v_{ij}(t - d_{ij})$ (``simulate`` puts an
      ``nd.InputScaling``'s gains here; see ``AbstractDenseGraph``).

    Concrete weights and delays are checked when the graph is built: NaN or infinite
    entries, negative delays and (unless ``signed``) negative weights get a
    ``ValueError`` naming their ``[target, source]`` positions; traced values, and values
    put in with ``eqx.tree_at``, are checked when ``simulate`` runs.
    """

    weights: Matrix
    delays: Matrix
    input_gain: Float[Array, " nodes"] | None
    max_delay: float = eqx.field(static=True)
    signed: bool = eqx.field(static=True)

    def __init__(
        self,
        weights: ArrayLike,
        delays: ArrayLike,
        *,
        max_delay: float | None = None,
        signed: bool = False,
        input_gain: ArrayLike | None = None,
    ):
        self.weights = jnp.asarray(weights)
        self.delays = jnp.asarray(delays)
        self.input_gain = None if input_gain is None else jnp.asarray(input_gain)
        self.max_delay = concrete_max("delays", delays) if max_delay is None else float(max_delay)
        self.signed = signed

    def __check_init__(self):
        check_square("weights", self.weights)
        check_square("delays", self.delays)
        check_same_shape("delays", self.delays, "weights", self.weights)
        check_weight_values("DelayGraph", self.weights, self.signed)
        check_delay_values("DelayGraph", self.delays)
        check_input_gain("DelayGraph", self.input_gain, self.n_nodes)
        if not self.max_delay >= 0:
            raise ValueError(f"max_delay must be non-negative, got {self.max_delay}.")

    @classmethod
    def from_lengths(
        cls, weights: ArrayLike, lengths: ArrayLike, speed: float | Scalar, **kwargs
    ) -> "DelayGraph":
        """Build from tract lengths (mm) and a conduction speed (mm/ms): ``d = L / v``.

        ``speed`` may be traced (to differentiate with respect to it, with linear delay
        interpolation); then pass ``max_delay`` (ms), which fixes the history buffer size.
        """
        return cls(weights, delays_from_lengths(lengths, speed), **kwargs)

    def delay_index(self, dt: float, n_rows: int, interpolation: Interpolation) -> DelayIndex:
        rows, frac = delay_rows(jnp.asarray(self.delays), dt, n_rows, interpolation)
        return DelayIndex(rows, frac)

    def delayed_source_values(
        self, buffer: History, index: DelayIndex
    ) -> Float[Array, "k nodes nodes"]:
        return _dense_ops.delayed_source_values(buffer, index)

    def delayed_source_values_batched(
        self, window: Float[Array, "rows nodes k batch"], index: DelayIndex
    ) -> Float[Array, "k nodes nodes batch"]:
        return _dense_ops.delayed_source_values_batched(window, index)

    def weighted_sum_batched(
        self, v: Float[Array, "m ... batch"]
    ) -> Float[Array, "m nodes batch"]:
        return with_gain(self.input_gain, _dense_ops.weighted_sum_batched(self.weights, v), -2)

    def validate(self) -> "AbstractGraph":
        self.__check_init__()
        weights = checked_weights(jnp.asarray(self.weights), self.signed)
        delays = checked_delays(jnp.asarray(self.delays), self.max_delay)
        gain = checked_input_gain(self.input_gain)
        return eqx.tree_at(lambda g: (g.weights, g.delays, g.input_gain), self,
                           (weights, delays, gain), is_leaf=lambda x: x is None)
