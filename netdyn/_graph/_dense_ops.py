"""Edge layout ``[k, target, source]`` shared by the dense graphs."""

import jax.numpy as jnp
from jaxtyping import Array, Float

from ._base import DelayIndex


def source_values(x: Float[Array, "k nodes"]) -> Float[Array, "k 1 nodes"]:
    return x[:, None, :]


def target_values(x: Float[Array, "k nodes"]) -> Float[Array, "k nodes 1"]:
    return x[:, :, None]


def weighted_sum(weights, v: Float[Array, "m ..."]) -> Float[Array, "m nodes"]:
    n_targets, n_sources = v.shape[-2:]
    if n_targets == 1:  # depends on the source only: a matrix-vector product
        return jnp.einsum("ij,kj->ki", weights, v[..., 0, :])
    if n_sources == 1:  # depends on the target only
        return jnp.sum(weights, axis=1) * v[..., 0]
    return jnp.einsum("ij,kij->ki", weights, v)


def delayed_source_values(
    buffer: Float[Array, "rows nodes k"], index: DelayIndex
) -> Float[Array, "k nodes nodes"]:
    # Constant (loop-invariant) indices keep the backward pass free of per-step index
    # residuals; the trailing ``k`` axis makes each gathered element a contiguous slice.
    n = buffer.shape[1]
    cols = jnp.arange(n)[None, :]
    x = buffer[index.rows, cols]
    if index.frac is not None:
        older = buffer[index.rows - 1, cols]
        x = x + index.frac[..., None] * (older - x)
    return jnp.moveaxis(x, -1, 0)
