"""The initial carry of the time loop, from ``simulate``'s ``history`` argument."""

from typing import NamedTuple

import jax.numpy as jnp
import numpy as np

from .._solution import SimulationState
from . import _buffer
from ._rows import take_rows


class Initial(NamedTuple):
    """Where a run starts: the state ``y0``, the delay buffer (``None`` without delayed
    couplings), the global step counter, the previous run's monitor states (``{}`` on a
    fresh run) and whether the run continues a ``SimulationState``."""

    y0: jnp.ndarray
    buffer: jnp.ndarray | None
    step0: jnp.ndarray
    monitors: dict
    continuation: bool


def initial(history, dynamics, n_nodes: int, cvar: tuple[int, ...], rows: int) -> Initial:
    """Interpret ``history`` (see ``simulate``) for a buffer of ``rows`` rows (0: none)."""
    y_shape = (len(dynamics.state_names), n_nodes)
    if isinstance(history, SimulationState):
        _check_shape(history.y, y_shape, dynamics)
        return _continuation(history, n_nodes, cvar, rows)
    if history is None:
        y0, past = jnp.asarray(dynamics.initial_state(n_nodes)), None
    else:
        y0, past = _past_states(jnp.asarray(history), y_shape, rows)
    _check_shape(y0, y_shape, dynamics)
    y0 = _floating(y0)
    buffer = None
    if rows:
        if past is None:
            buffer = _buffer.constant(take_rows(y0, cvar), rows)
        else:
            buffer = _buffer.from_states(past[-rows:, np.asarray(cvar)]).astype(y0.dtype)
    return Initial(y0, buffer, jnp.zeros((), jnp.int32), {}, False)


def _past_states(past, y_shape, rows):
    """``history`` given as an array: one state, or past states oldest first."""
    if past.ndim == 2:
        return past, None
    if past.ndim == 3:
        if past.shape[1:] != y_shape or past.shape[0] < max(rows, 1):
            raise ValueError(
                f"history has shape {past.shape}, expected [rows >= {max(rows, 1)}, "
                f"states = {y_shape[0]}, nodes = {y_shape[1]}]."
            )
        return past[-1], past
    raise ValueError(
        f"history has shape {past.shape}, expected [states, nodes] = {y_shape} or "
        f"[rows, states, nodes]."
    )


def _continuation(state: SimulationState, n_nodes, cvar, rows) -> Initial:
    """Continue a previous run exactly: its state, buffer, step counter and monitors."""
    y0 = _floating(jnp.asarray(state.y))
    buffer = None
    if rows:
        expected = (rows, n_nodes, len(cvar))
        if state.buffer is None or state.buffer.shape != expected:
            got = None if state.buffer is None else state.buffer.shape
            raise ValueError(
                f"history: the SimulationState's buffer has shape {got}, this run needs "
                f"{expected} (same graph, dt and coupled variables)."
            )
        buffer = state.buffer.astype(y0.dtype)
    step0 = jnp.asarray(state.step, jnp.int32)
    return Initial(y0, buffer, step0, state.monitors, True)


def _check_shape(y0, y_shape, dynamics):
    if y0.shape != y_shape:
        raise ValueError(
            f"initial state has shape {y0.shape}, but {type(dynamics).__name__} on "
            f"{y_shape[1]} nodes needs [states, nodes] = {y_shape}."
        )


def _floating(y0):
    return y0 if jnp.issubdtype(y0.dtype, jnp.floating) else y0.astype(float)
