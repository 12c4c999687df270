"""Abstract base of the graphs stored as edge lists, and the edge order they share."""

import equinox as eqx
import jax.numpy as jnp
from jaxtyping import Array, Float, Int

from .._custom_types import ArrayLike
from . import _sparse_ops
from ._base import AbstractGraph


class AbstractSparseGraph(AbstractGraph):
    r"""A graph stored as a list of edges (``SparseGraph``, ``SparseDelayGraph``).

    Edge ``e`` goes from node ``sources[e]`` to node ``targets[e]`` with weight
    ``weights[e]``; edge values are ``[k, edges]`` arrays, and the weighted sum runs over
    the in-edges of each node only:

    $$ g_{k,i} = \sum_{e:\ \mathrm{targets}_e = i} w_e\, v_{k,e}. $$

    The edges are stored in the order ``edge_layout`` gives them (by target, in chunks of
    equal in-degree: ``blocks`` and ``chunk_index``), which the weighted sum needs; the
    structure is fixed once built.
    """

    targets: eqx.AbstractVar[Int[Array, " edges"]]
    sources: eqx.AbstractVar[Int[Array, " edges"]]
    weights: eqx.AbstractVar[Float[Array, " edges"]]
    chunk_index: eqx.AbstractVar[Int[Array, "nodes chunks"]]
    num_nodes: eqx.AbstractVar[int]
    blocks: eqx.AbstractVar[tuple[tuple[int, int], ...]]
    signed: eqx.AbstractVar[bool]

    @property
    def n_nodes(self) -> int:
        return self.num_nodes

    @property
    def n_edges(self) -> int:
        """Number of stored edges."""
        return jnp.shape(self.weights)[0]

    def source_values(self, x: Float[Array, "k nodes"]) -> Float[Array, "k edges"]:
        return _sparse_ops.gather_edges(x, self.sources)

    def target_values(self, x: Float[Array, "k nodes"]) -> Float[Array, "k edges"]:
        return _sparse_ops.gather_edges(x, self.targets)

    def weighted_sum(self, v: Float[Array, "m edges"]) -> Float[Array, "m nodes"]:
        return _sparse_ops.weighted_sum(self.weights, v, self.blocks, self.chunk_index)

    def _checked_sources(self) -> Int[Array, " edges"]:
        """``sources`` with runtime checks of the edge structure attached (for ``validate``)."""
        return _sparse_ops.checked_structure(
            self.targets, self.sources, self.blocks, self.chunk_index, self.num_nodes
        )


def edge_layout(targets: ArrayLike, sources: ArrayLike, n_nodes: int, **values: ArrayLike):
    """Edges reordered for the weighted sum: ``(targets, sources, values, blocks,
    chunk_index)``, ``values`` (e.g. ``weights=``, ``delays=``) permuted alike.

    ``targets`` and ``sources`` must be concrete integer arrays, all of one ``[edges]``
    shape with the ``values``.
    """
    t = _sparse_ops.concrete_indices("targets", targets)
    s = _sparse_ops.concrete_indices("sources", sources)
    values = {name: jnp.asarray(v) for name, v in values.items()}
    shapes = [t.shape, s.shape, *(jnp.shape(v) for v in values.values())]
    if any(shape != t.shape for shape in shapes):
        names = ["targets", "sources", *values]
        raise ValueError(
            f"{', '.join(names[:-1])} and {names[-1]} must share one [edges] shape, got "
            f"{', '.join(map(str, shapes[:-1]))} and {shapes[-1]}."
        )
    perm, blocks, chunk_index = _sparse_ops.chunk_layout(t, s, int(n_nodes))
    return (
        jnp.asarray(t[perm], jnp.int32),
        jnp.asarray(s[perm], jnp.int32),
        {name: v[perm] for name, v in values.items()},
        blocks,
        jnp.asarray(chunk_index),
    )
