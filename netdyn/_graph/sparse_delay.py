"""Sparse graph with conduction delays (thresholded connectomes)."""

import equinox as eqx
import jax
import jax.numpy as jnp
import numpy as np
from jaxtyping import Array, Float, Int

from .._custom_types import ArrayLike, History, Scalar
from . import _sparse_ops
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
    check_weight_values,
    checked_delays,
    checked_weights,
    concrete_max,
    delay_rows,
)
from ._sparse_layout import AbstractSparseGraph, edge_layout


class SparseDelayGraph(AbstractSparseGraph, AbstractBatchMinorGraph):
    r"""A sparse weighted graph with conduction delays, stored as a list of edges.

    Edge ``e`` goes from node ``sources[e]`` to node ``targets[e]`` with weight
    ``weights[e]`` and delay ``delays[e]`` (ms): the ``[target, source]`` entries of the
    dense matrices. The delayed coupling input of node ``i`` reads each source at
    ``t - d_e``:

    $$ g_{k,i}(t) = \sum_{e:\ \mathrm{targets}_e = i} w_e\, v_{k,e}\big(x(t - d_e)\big). $$

    Worth it on CPU for thresholded connectomes (10-30 % of the entries kept; on GPU and
    for dense matrices use ``DelayGraph``); see ``SparseGraph`` for the edge order and
    ``DelayGraph`` for the delay conventions (nearest ``rint(d / dt)`` or linear
    interpolation). The history buffer is sized by the largest delay *of the kept edges*
    (a dense ``DelayGraph``, like TVB, also counts the zero-weight entries).

    **Arguments**:

    - ``targets``, ``sources``: ``[edges]`` integer node indices (concrete arrays).
    - ``weights``: ``[edges]`` weights; ``delays``: ``[edges]`` delays in ms.
    - ``n_nodes``: number of nodes.
    - ``max_delay``: the largest delay the history buffer must hold (ms); computed from
      ``delays`` when omitted (then ``delays`` must be concrete).
    - ``signed``: allow negative weights.
    """

    targets: Int[Array, " edges"]
    sources: Int[Array, " edges"]
    weights: Float[Array, " edges"]
    delays: Float[Array, " edges"]
    chunk_index: Int[Array, "nodes chunks"]
    num_nodes: int = eqx.field(static=True)
    blocks: tuple[tuple[int, int], ...] = eqx.field(static=True)
    max_delay: float = eqx.field(static=True)
    signed: bool = eqx.field(static=True)

    def __init__(
        self,
        targets: ArrayLike,
        sources: ArrayLike,
        weights: ArrayLike,
        delays: ArrayLike,
        *,
        n_nodes: int,
        max_delay: float | None = None,
        signed: bool = False,
    ):
        self.targets, self.sources, values, self.blocks, self.chunk_index = edge_layout(
            targets, sources, n_nodes, weights=weights, delays=delays
        )
        self.weights, self.delays = values["weights"], values["delays"]
        self.num_nodes = int(n_nodes)
        self.max_delay = (
            concrete_max("delays", self.delays) if max_delay is None else float(max_delay)
        )
        self.signed = signed

    def __check_init__(self):
        _sparse_ops.check_shapes(
            "SparseDelayGraph", self.num_nodes, self.blocks, self.chunk_index,
            targets=self.targets, sources=self.sources, weights=self.weights,
            delays=self.delays,
        )
        check_weight_values("SparseDelayGraph", self.weights, self.signed,
                            (self.targets, self.sources))
        check_delay_values("SparseDelayGraph", self.delays, (self.targets, self.sources))
        if not self.max_delay >= 0:
            raise ValueError(f"max_delay must be non-negative, got {self.max_delay}.")

    @classmethod
    def from_dense(
        cls,
        weights: ArrayLike,
        delays: ArrayLike,
        *,
        threshold: float = 0.0,
        max_delay: float | None = None,
        signed: bool = False,
    ) -> "SparseDelayGraph":
        """Keep the entries of ``[target, source]`` matrices with ``weight > threshold``
        (``|weight| > threshold`` when ``signed``). ``weights`` must be concrete;
        ``delays`` (ms) may be traced if ``max_delay`` is given."""
        w = _sparse_ops.concrete_matrix("weights", weights)
        check_weight_values("SparseDelayGraph", w, signed)
        check_same_shape("delays", delays, "weights", w)
        targets, sources = _sparse_ops.select_edges(w, threshold, signed)
        if isinstance(delays, jax.core.Tracer):
            edge_delays = delays[targets, sources]
        else:
            edge_delays = np.asarray(delays)[targets, sources]
        return cls(
            targets, sources, jnp.asarray(weights)[targets, sources], edge_delays,
            n_nodes=w.shape[0], max_delay=max_delay, signed=signed,
        )

    @classmethod
    def from_lengths(
        cls, weights: ArrayLike, lengths: ArrayLike, speed: float | Scalar, **kwargs
    ) -> "SparseDelayGraph":
        """``from_dense`` with delays from tract lengths (mm) and a conduction speed
        (mm/ms): ``d = L / v``. ``speed`` may be traced (to differentiate with respect
        to it); then pass ``max_delay``."""
        return cls.from_dense(weights, delays_from_lengths(lengths, speed), **kwargs)

    def delay_index(self, dt: float, n_rows: int, interpolation: Interpolation) -> DelayIndex:
        rows, frac = delay_rows(self.delays, dt, n_rows, interpolation)
        return DelayIndex(rows, frac)

    def delayed_source_values(
        self, buffer: History, index: DelayIndex
    ) -> Float[Array, "k edges"]:
        return _sparse_ops.delayed_source_values(buffer, index, self.sources)

    def delayed_source_values_batched(
        self, window: Float[Array, "rows nodes k batch"], index: DelayIndex
    ) -> Float[Array, "k edges batch"]:
        return _sparse_ops.delayed_source_values_batched(window, index, self.sources)

    def weighted_sum_batched(
        self, v: Float[Array, "m edges batch"]
    ) -> Float[Array, "m nodes batch"]:
        return _sparse_ops.weighted_sum_batched(self.weights, v, self.blocks,
                                                self.chunk_index)

    def validate(self) -> "AbstractGraph":
        self.__check_init__()
        weights = checked_weights(self.weights, self.signed, (self.targets, self.sources),
                                  self.num_nodes)
        delays = checked_delays(self.delays, self.max_delay, (self.targets, self.sources),
                                self.num_nodes)
        sources = self._checked_sources()
        return eqx.tree_at(
            lambda g: (g.weights, g.delays, g.sources), self, (weights, delays, sources)
        )
