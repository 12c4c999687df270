"""The delay history buffer of the time loop.

Layout ``[rows, nodes, k]``: time-major with the newest state in the last row, and the
coupled variables on the trailing axis. The buffer is *rolled* every step (the oldest row
drops out, the new state enters at the end), so that delayed reads use loop-invariant
indices: a ring buffer indexed by ``(step - delay) % rows`` makes reverse mode save an
index array of the size of the graph for every step.
"""

import math

import jax
import jax.numpy as jnp
import numpy as np
from jaxtyping import Array, Float


def take_rows(y, rows: tuple[int, ...]):
    """``y[rows]`` (rows of a ``[states, nodes]`` array: the state variables a buffer or
    monitor keeps), as a slice when the rows are contiguous (cheaper to differentiate)."""
    if rows == tuple(range(rows[0], rows[0] + len(rows))):
        return y[rows[0] : rows[0] + len(rows)]
    return y[np.asarray(rows)]


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


# A ring buffer for the batched forward loop (``_batched``), which is never differentiated
# (reverse mode runs the rolled buffer above): rolling a batch of histories would copy
# all of them every step. The ring holds ``2 * rows`` rows, each state written twice
# (rows ``p`` and ``p + rows``), so that the history after ``i`` steps of the loop is the
# contiguous window ``ring[p : p + rows]`` with ``p = i % rows``, oldest first: the rolled
# buffer.


def ring_from_rolled(buffer):
    """The ring holding the rolled ``buffer`` (oldest row first) before the first step
    (``p = 0``: the buffer itself, twice)."""
    return jnp.concatenate([buffer, buffer], axis=0)


def ring_window(ring, step):
    """The rolled buffer (``[rows, ...]``, oldest first) held by ``ring`` after ``step``
    steps."""
    rows = ring.shape[0] // 2
    return jax.lax.dynamic_slice_in_dim(ring, step % rows, rows, axis=0)


def ring_push(ring, step, x):
    """The ring after ``step + 1`` steps: ``x`` (one row) replaces the oldest row of the
    window."""
    rows = ring.shape[0] // 2
    p = step % rows
    ring = jax.lax.dynamic_update_slice_in_dim(ring, x[None], p, axis=0)
    return jax.lax.dynamic_update_slice_in_dim(ring, x[None], p + rows, axis=0)
