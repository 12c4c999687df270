"""Sparse graph without delays (thresholded connectomes)."""

import equinox as eqx
import jax.numpy as jnp
from jaxtyping import Array, Float, Int

from .._custom_types import ArrayLike
from . import _sparse_ops
from ._base import AbstractGraph
from ._checks import check_weight_values, checked_weights
from ._sparse_layout import AbstractSparseGraph, edge_layout


class SparseGraph(AbstractSparseGraph):
    r"""A sparse weighted graph without delays, stored as a list of edges.

    Edge ``e`` goes from node ``sources[e]`` to node ``targets[e]`` with weight
    ``weights[e]``: the ``[target, source]`` entry of the dense matrix, and the coupling
    input of node ``i`` sums over its in-edges only,

    $$ g_{k,i} = \sum_{e:\ \mathrm{targets}_e = i} w_e\, v_{k,e}. $$

    Worth it on CPU for thresholded connectomes (10-30 % of the entries kept: 1.3-3.6x
    faster forward, 1.0-2.5x faster gradients than the dense layout at 84 and 400 nodes,
    see ``benchmarks/sparse.md``); for a dense matrix, and on GPU at a few hundred nodes
    (where both layouts are bound by kernel launches), use ``DenseGraph``. Build with
    ``SparseGraph.from_dense(weights, threshold=...)`` or from edge lists. The constructor
    reorders the edges into the layout the weighted sum needs
    (``netdyn/_graph/_sparse_ops.py``): read ``targets``, ``sources`` and ``weights``
    together, and replace ``weights`` with ``eqx.tree_at`` in that order. The structure
    (which edges exist) is fixed: gradients and fits move existing edges only.

    **Arguments**:

    - ``targets``, ``sources``: ``[edges]`` integer node indices (concrete arrays).
    - ``weights``: ``[edges]`` weights.
    - ``n_nodes``: number of nodes.
    - ``signed``: allow negative weights.
    """

    targets: Int[Array, " edges"]
    sources: Int[Array, " edges"]
    weights: Float[Array, " edges"]
    chunk_index: Int[Array, "nodes chunks"]
    num_nodes: int = eqx.field(static=True)
    blocks: tuple[tuple[int, int], ...] = eqx.field(static=True)
    signed: bool = eqx.field(static=True)

    def __init__(
        self,
        targets: ArrayLike,
        sources: ArrayLike,
        weights: ArrayLike,
        *,
        n_nodes: int,
        signed: bool = False,
    ):
        self.targets, self.sources, values, self.blocks, self.chunk_index = edge_layout(
            targets, sources, n_nodes, weights=weights
        )
        self.weights = values["weights"]
        self.num_nodes = int(n_nodes)
        self.signed = signed

    def __check_init__(self):
        _sparse_ops.check_shapes(
            "SparseGraph", self.num_nodes, self.blocks, self.chunk_index,
            targets=self.targets, sources=self.sources, weights=self.weights,
        )
        check_weight_values("SparseGraph", self.weights, self.signed,
                            (self.targets, self.sources))

    @classmethod
    def from_dense(
        cls, weights: ArrayLike, *, threshold: float = 0.0, signed: bool = False
    ) -> "SparseGraph":
        """Keep the entries of a ``[target, source]`` matrix with ``weight > threshold``
        (``|weight| > threshold`` when ``signed``). ``weights`` must be concrete."""
        w = _sparse_ops.concrete_matrix("weights", weights)
        check_weight_values("SparseGraph", w, signed)
        targets, sources = _sparse_ops.select_edges(w, threshold, signed)
        return cls(
            targets, sources, jnp.asarray(weights)[targets, sources],
            n_nodes=w.shape[0], signed=signed,
        )

    def validate(self) -> "AbstractGraph":
        self.__check_init__()
        weights = checked_weights(self.weights, self.signed, (self.targets, self.sources),
                                  self.num_nodes)
        sources = self._checked_sources()
        return eqx.tree_at(lambda g: (g.weights, g.sources), self, (weights, sources))
