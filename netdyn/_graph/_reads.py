"""Delayed reads from a history buffer viewed as ``[rows * nodes, width]``."""

import jax.numpy as jnp


def read_rows(flat_buffer, flat, n_nodes: int, frac):
    """Rows ``flat`` of ``flat_buffer`` (``[rows * nodes, width]``), each moved towards the
    next-older row (``n_nodes`` back) by ``frac`` (linear interpolation; ``None``:
    nearest). ``flat`` must lie in the buffer, and at least one row back for linear reads.
    """
    x = flat_buffer.at[flat].get(mode="promise_in_bounds")
    if frac is not None:
        older = jnp.maximum(flat - n_nodes, 0)
        x_older = flat_buffer.at[older].get(mode="promise_in_bounds")
        x = x + frac[..., None].astype(x.dtype) * (x_older - x)
    return x
