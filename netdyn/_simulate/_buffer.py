"""The delay history buffer of the time loop.

Layout ``[rows, nodes, k]``: time-major with the newest state in the last row, and the
coupled variables on the trailing axis. The buffer is *rolled* every step (the oldest row
drops out, the new state enters at the end), so that delayed reads use loop-invariant
indices: a ring buffer indexed by ``(step - delay) % rows`` makes reverse mode save an
index array of the size of the graph for every step.
"""

import math

import jax.numpy as jnp
from jaxtyping import Array, Float


def n_rows(max_delay: float, dt: float, interpolations) -> int:
    """Rows needed to read delays up to ``max_delay`` ms at step ``dt``."""
    steps = max_delay / dt
    rows = 1
    for interpolation in interpolations:
        if interpolation == "linear":
            rows = max(rows, math.floor(steps + 1e-9) + 2)
        else:
            rows = max(rows, round(steps) + 1)
    return rows


def constant(x: Float[Array, "k nodes"], rows: int) -> Float[Array, "rows nodes k"]:
    """A buffer holding ``x`` at every row (constant past)."""
    return jnp.broadcast_to(x.T[None], (rows,) + x.T.shape)


def from_states(states: Float[Array, "rows k nodes"]) -> Float[Array, "rows nodes k"]:
    """A buffer from past states, oldest first."""
    return jnp.swapaxes(states, 1, 2)


def push(buffer: Float[Array, "rows nodes k"], x: Float[Array, "k nodes"]):
    """Drop the oldest row and append ``x`` as the newest."""
    return jnp.concatenate([buffer[1:], x.T[None]], axis=0)
