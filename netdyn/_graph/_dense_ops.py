"""Edge layout ``[k, target, source]`` shared by the dense graphs."""

import jax
import jax.numpy as jnp
from jax.custom_derivatives import SymbolicZero
from jaxtyping import Array, Float

from .. import _xla_tricks
from ._base import DelayIndex
from ._reads import read_rows


def source_values(x: Float[Array, "k nodes"]) -> Float[Array, "k 1 nodes"]:
    return x[:, None, :]


def target_values(x: Float[Array, "k nodes"]) -> Float[Array, "k nodes 1"]:
    return x[:, :, None]


def weighted_sum(weights, v: Float[Array, "m ..."]) -> Float[Array, "m nodes"]:
    n_targets, n_sources = v.shape[-2:]
    if n_targets == 1:  # depends on the source only: a matrix-vector product
        return jnp.einsum("ij,kj->ki", weights, v[..., 0, :])
    if n_sources == 1:  # depends on the target only
        return _xla_tricks.row_sums(weights)[None] * v[..., 0]
    return _edge_sums(weights, v)


@jax.custom_jvp
def _edge_sums(weights, v):
    return _xla_tricks.row_sums(weights[None] * v)


def _edge_sums_jvp(primals, tangents):
    weights, v = primals
    d_weights, d_v = tangents
    out = _xla_tricks.row_sums(weights[None] * v)
    terms = []
    if not isinstance(d_v, SymbolicZero):
        terms.append(_xla_tricks.row_sums(weights[None] * d_v))
    if not isinstance(d_weights, SymbolicZero):
        terms.append(_xla_tricks.row_sums(d_weights[None] * v))
    if not terms:
        return out, SymbolicZero(jax.typeof(out).to_tangent_aval())
    # Reverse mode computes the sums' cotangent once per node, not once per edge.
    return out, _xla_tricks.materialise_linear(sum(terms[1:], terms[0]))


_edge_sums.defjvp(_edge_sums_jvp, symbolic_zeros=True)


def _flat_rows(index_rows, n_rows: int, n_nodes: int):
    """Positions of ``buffer[rows, j]`` in the buffer viewed as ``[rows * nodes, k]``."""
    flat = index_rows * n_nodes + jnp.arange(n_nodes, dtype=index_rows.dtype)[None]
    # Loop-invariant (hoisted out of the time loop by XLA), and it makes the unchecked
    # gather below safe whatever the delays.
    return jnp.clip(flat, 0, n_rows * n_nodes - 1)


def delayed_source_values(
    buffer: Float[Array, "rows nodes k"], index: DelayIndex
) -> Float[Array, "k nodes nodes"]:
    # The indices are loop-invariant, so reverse mode saves no per-step index array. The
    # gather reads the buffer as ``[rows * nodes, k]`` with one flat index per edge: on
    # CPU ~1.5x faster than the 2-D index ``buffer[rows, cols]`` (nearest; ~1.7x with
    # linear interpolation). Keep the trailing ``k`` axis: a scalar gather from a 1-D
    # view is as fast with traced indices but ~5x slower when XLA sees constant ones.
    # See ``benchmarks/forward_micro.md``.
    n_rows, n_nodes, k = buffer.shape
    flat = _flat_rows(index.rows, n_rows, n_nodes)
    x = read_rows(buffer.reshape(n_rows * n_nodes, k), flat, n_nodes, index.frac)
    return jnp.moveaxis(x, -1, 0)


def delayed_source_values_batched(
    window: Float[Array, "rows nodes k batch"], index: DelayIndex
) -> Float[Array, "k nodes nodes batch"]:
    # ``delayed_source_values`` with the batch on the trailing axis: each edge reads one
    # contiguous ``[k * batch]`` row of the buffer viewed as ``[rows * nodes, k * batch]``.
    n_rows, n_nodes, k, batch = window.shape
    flat = _flat_rows(index.rows, n_rows, n_nodes)
    x = read_rows(window.reshape(n_rows * n_nodes, k * batch), flat, n_nodes, index.frac)
    return jnp.moveaxis(x.reshape(x.shape[:-1] + (k, batch)), -2, 0)


def weighted_sum_batched(weights, v: Float[Array, "m t s batch"]) -> Float[Array, "m nodes batch"]:
    n_targets, n_sources = v.shape[-3:-1]
    if n_targets == 1:  # sources only: one matrix product for the whole batch
        m, _, n, batch = v.shape
        x = jnp.moveaxis(v[:, 0], 1, 0).reshape(n, m * batch)
        return jnp.moveaxis((weights @ x).reshape(-1, m, batch), 1, 0)
    if n_sources == 1:
        return _xla_tricks.row_sums(weights)[None, :, None] * v[:, :, 0]
    return _xla_tricks.pairwise_sum(weights[None, :, :, None] * v, axis=2)
