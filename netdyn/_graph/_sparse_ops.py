"""Edge layout ``[k, edges]`` shared by the sparse graphs, and its scatter-free sum.

The edges are stored in *binary chunks*: the in-edges of a target with in-degree
``d = sum_b 2^b`` are split into one run of ``2^b`` consecutive edges for every set bit
``b``; the runs of equal length are stored together, longest first. The weighted sum is
then a reshape-and-sum per chunk length (``blocks``, static) followed by a gather of at
most ``log2(max degree) + 1`` partial sums per node (``chunk_index``). This avoids a
scatter-add (``jax.ops.segment_sum``), which on CPU costs 2-3x more per edge than the
gather that brings the edge values in (``benchmarks/sparse.md``), and needs no padding.
"""

import equinox as eqx
import jax
import jax.numpy as jnp
import numpy as np
from jaxtyping import Array, Float, Int

from .. import _xla_tricks
from ._base import DelayIndex
from ._checks import check_real
from ._reads import read_rows


def concrete_indices(name: str, x) -> np.ndarray:
    """A concrete 1-D integer index array, with a clear error for traced input."""
    if isinstance(x, jax.core.Tracer):
        raise ValueError(
            f"{name} are traced (built inside jit/vmap/grad); the graph's structure must be "
            "concrete: build the graph outside the transformed function."
        )
    x = np.asarray(x)
    if x.ndim != 1 or not (np.issubdtype(x.dtype, np.integer) or x.size == 0):
        raise ValueError(f"{name} must be a 1-D integer array, got {x.dtype}{list(x.shape)}.")
    return x.astype(np.int64)


def concrete_matrix(name: str, x) -> np.ndarray:
    """A concrete, real square matrix (edges are chosen from its values: the caller
    checks them, ``check_weight_values``, since a NaN entry would be dropped silently)."""
    if isinstance(x, jax.core.Tracer):
        raise ValueError(
            f"{name} are traced (built inside jit/vmap/grad); from_dense chooses the edges from "
            "their values, so it needs concrete weights: build the graph outside."
        )
    x = np.asarray(x)
    if x.ndim != 2 or x.shape[0] != x.shape[1]:
        raise ValueError(f"{name} must be a square [nodes, nodes] matrix, got shape {x.shape}.")
    check_real(name, x)
    return x


def select_edges(weights: np.ndarray, threshold: float, signed: bool):
    """``(targets, sources)`` of the entries with ``weight > threshold`` (``|weight|`` if
    ``signed``), from a ``[target, source]`` matrix."""
    magnitude = np.abs(weights) if signed else weights
    return np.nonzero(magnitude > threshold)


def chunk_layout(targets: np.ndarray, sources: np.ndarray, n_nodes: int):
    """Edge permutation, static ``blocks`` ``((count, length), ...)`` and ``chunk_index``.

    ``chunk_index[i]`` lists the chunks of target ``i``; missing entries point at an extra
    zero partial sum (index ``n_chunks``).
    """
    for name, x in (("targets", targets), ("sources", sources)):
        if x.size and (x.min() < 0 or x.max() >= n_nodes):
            raise ValueError(f"{name} must lie in [0, {n_nodes}), got [{x.min()}, {x.max()}].")
    by_target = np.lexsort((sources, targets))
    degree = np.bincount(targets, minlength=n_nodes)
    start = np.concatenate([[0], np.cumsum(degree)])
    taken = np.zeros(n_nodes, np.int64)
    perm, blocks, chunks = [], [], [[] for _ in range(n_nodes)]
    n_chunks = 0
    top = int(degree.max()).bit_length() if targets.size else 0
    for b in reversed(range(top)):
        length = 1 << b
        nodes = np.nonzero(degree & length)[0]
        for i in nodes:
            first = start[i] + taken[i]
            perm.append(by_target[first : first + length])
            taken[i] += length
            chunks[i].append(n_chunks)
            n_chunks += 1
        if nodes.size:
            blocks.append((int(nodes.size), length))
    width = max((len(c) for c in chunks), default=0)
    chunk_index = np.full((n_nodes, width), n_chunks, np.int32)
    for i, c in enumerate(chunks):
        chunk_index[i, : len(c)] = c
    perm = np.concatenate(perm) if perm else np.zeros(0, np.int64)
    return perm, tuple(blocks), chunk_index


def gather_edges(
    x: Float[Array, "k nodes"], nodes: Int[Array, " edges"]
) -> Float[Array, "k edges"]:
    # The producer of ``x`` (a solver stage) would be recomputed once per edge. The token,
    # a node index, is non-negative: ``validate`` rules out negative ones.
    if nodes.shape[0]:
        x = _xla_tricks.materialise(x, nodes[0])
    return x[:, nodes]


def weighted_sum(
    weights: Float[Array, " edges"],
    v: Float[Array, "m edges"],
    blocks: tuple[tuple[int, int], ...],
    chunk_index: Int[Array, "nodes chunks"],
) -> Float[Array, "m nodes"]:
    wv = weights[None] * v
    partial = [chunk.sum(axis=-1) for chunk in _chunks(wv, blocks)]
    partial.append(jnp.zeros((wv.shape[0], 1), wv.dtype))
    return jnp.concatenate(partial, axis=-1)[:, chunk_index].sum(axis=-1)


def _chunks(wv: Float[Array, "m edges ..."], blocks: tuple[tuple[int, int], ...]):
    """The edge values of each block as ``[m, count, length, ...]``: ``count`` chunks of
    ``length`` consecutive edges (one target each; ``chunk_layout``'s order)."""
    offset = 0
    for count, length in blocks:
        chunk = wv[:, offset : offset + count * length]
        yield chunk.reshape(chunk.shape[:1] + (count, length) + chunk.shape[2:])
        offset += count * length


def delayed_source_values(
    buffer: Float[Array, "rows nodes k"], index: DelayIndex, sources: Int[Array, " edges"]
) -> Float[Array, "k edges"]:
    # Loop-invariant flat indices (hoisted out of the time loop): one gather of a
    # contiguous ``k``-slice per edge from the buffer viewed as ``[rows * nodes, k]``.
    n_rows, n_nodes, k = buffer.shape
    flat = jnp.clip(index.rows * n_nodes + sources, 0, n_rows * n_nodes - 1)
    return read_rows(buffer.reshape(n_rows * n_nodes, k), flat, n_nodes, index.frac).T


def check_shapes(graph_name: str, n_nodes: int, blocks, chunk_index, **edge_arrays) -> None:
    """Trace-time checks of the edge arrays and the chunk layout."""
    if n_nodes < 1:
        raise ValueError(f"{graph_name}: n_nodes must be positive, got {n_nodes}.")
    n_edges = sum(count * length for count, length in blocks)
    for name, x in edge_arrays.items():
        if jnp.shape(x) != (n_edges,):
            raise ValueError(
                f"{graph_name}: {name} has shape {jnp.shape(x)}, expected [edges] = ({n_edges},)."
            )
        check_real(f"{graph_name} {name}", x)
    if jnp.ndim(chunk_index) != 2 or jnp.shape(chunk_index)[0] != n_nodes:
        raise ValueError(
            f"{graph_name}: chunk_index has shape {jnp.shape(chunk_index)}, expected "
            f"[nodes = {n_nodes}, chunks]."
        )


def checked_structure(targets, sources, blocks, chunk_index, n_nodes: int):
    """Runtime checks that the edge indices are in range and follow the chunk layout
    (they can be replaced with ``eqx.tree_at``); returns ``sources``."""
    n_chunks = sum(count for count, _ in blocks)
    sources = eqx.error_if(
        sources,
        jnp.any((sources < 0) | (sources >= n_nodes)),
        f"sparse graph: sources must lie in [0, {n_nodes}).",
    )
    # Every chunk is one target; chunk_index must list exactly the chunks of each node.
    heads, offset = [], 0
    consistent = jnp.array(True)
    for count, length in blocks:
        chunk = targets[offset : offset + count * length].reshape(count, length)
        consistent = consistent & jnp.all(chunk == chunk[:, :1])
        heads.append(chunk[:, 0])
        offset += count * length
    heads.append(jnp.full((1,), -1, targets.dtype))
    owner = jnp.concatenate(heads)[chunk_index]
    nodes = jnp.arange(n_nodes, dtype=owner.dtype)[:, None]
    listed = (chunk_index == n_chunks) | (owner == nodes)
    counted = jnp.sum(chunk_index < n_chunks) == n_chunks
    return eqx.error_if(
        sources,
        ~(consistent & jnp.all(listed) & counted),
        "sparse graph: targets do not follow the graph's chunk layout; rebuild the graph "
        "with its constructor instead of replacing targets/sources with eqx.tree_at.",
    )


def delayed_source_values_batched(
    window: Float[Array, "rows nodes k batch"], index: DelayIndex, sources: Int[Array, " edges"]
) -> Float[Array, "k edges batch"]:
    # ``delayed_source_values`` with the batch on the trailing axis: one contiguous
    # ``[k * batch]`` row per edge.
    n_rows, n_nodes, k, batch = window.shape
    flat = jnp.clip(index.rows * n_nodes + sources, 0, n_rows * n_nodes - 1)
    x = read_rows(window.reshape(n_rows * n_nodes, k * batch), flat, n_nodes, index.frac)
    return jnp.moveaxis(x.reshape(-1, k, batch), 1, 0)


def weighted_sum_batched(
    weights: Float[Array, " edges"],
    v: Float[Array, "m edges batch"],
    blocks: tuple[tuple[int, int], ...],
    chunk_index: Int[Array, "nodes chunks"],
) -> Float[Array, "m nodes batch"]:
    # ``weighted_sum`` with the batch on the trailing axis: sums over the middle axis.
    wv = weights[None, :, None] * v
    m, _, batch = wv.shape
    partial = [_xla_tricks.pairwise_sum(chunk, axis=2) for chunk in _chunks(wv, blocks)]
    partial.append(jnp.zeros((m, 1, batch), wv.dtype))
    per_node = jnp.concatenate(partial, axis=1)[:, chunk_index]  # [m, nodes, chunks, B]
    return _xla_tricks.pairwise_sum(per_node, axis=2)
