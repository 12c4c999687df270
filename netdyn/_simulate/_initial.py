"""The initial carry of the time loop, from ``simulate``'s ``history`` argument."""

import dataclasses
import functools
from typing import NamedTuple

import equinox as eqx
import jax
import jax.numpy as jnp
import numpy as np

from .._solution import SimulationState
from . import _buffer
from ._arguments import MAX_STEPS, TimeGrid
from ._buffer import take_rows


class Initial(NamedTuple):
    """Where a run starts: the state ``y0``, the delay buffer (``None`` without delayed
    couplings), the global step counter, the previous run's monitor states (``{}`` on a
    fresh run) and whether the run continues a ``SimulationState``."""

    y0: jnp.ndarray
    buffer: jnp.ndarray | None
    step0: jnp.ndarray
    monitors: dict
    continuation: bool


def initial(history, network, n_nodes: int, cvar: tuple[int, ...], rows: int,
            grid: TimeGrid) -> Initial:
    """Interpret ``history`` (see ``simulate``) for a buffer of ``rows`` rows (0: none).

    The state's dtype is ``run_dtype``'s; the values taken from ``history`` get one
    runtime check (finite) before the time loop.
    """
    dynamics = network.dynamics
    y_shape = (len(dynamics.state_names), n_nodes)
    if isinstance(history, SimulationState):
        _check_shape(history.y, y_shape, dynamics)
        return _continuation(history, network, n_nodes, cvar, rows, grid)
    if history is None:
        y0, past = jnp.asarray(dynamics.initial_state(n_nodes)), None
    else:
        # Real numbers only: checked before tracing (``checked_arguments``).
        y0, past = _past_states(jnp.asarray(history), y_shape, rows)
    _check_shape(y0, y_shape, dynamics)
    dtype = run_dtype(network, y0)
    y0 = y0.astype(dtype)
    buffer = None
    if past is not None:
        past = past[-max(rows, 1):].astype(dtype)
        past = eqx.error_if(past, ~jnp.all(jnp.isfinite(past)), "history contains NaN or inf.")
        y0 = past[-1]
    elif history is not None:
        y0 = eqx.error_if(y0, ~jnp.all(jnp.isfinite(y0)), "history contains NaN or inf.")
    if rows:
        if past is None:
            buffer = _buffer.constant(take_rows(y0, cvar), rows)
        else:
            buffer = _buffer.from_states(past[-rows:, np.asarray(cvar)])
    return Initial(y0, buffer, jnp.zeros((), jnp.int32), {}, False)


def run_dtype(network, y0) -> np.dtype:
    """The dtype of the state and the delay buffer.

    The promotion of the initial state's dtype (from ``history``, or the dynamics'
    ``initial_state``; integers do not count) with the floating-point arrays of the
    dynamics, the couplings and the graph. A ``float32`` history for a ``float64``
    network (x64 on) is therefore run in ``float64``, and the time loop's carry keeps one
    dtype; for a ``float32`` run, make the network's arrays ``float32`` too (or leave x64
    off).
    """
    parts = (network.dynamics, network.coupling, network.graph)
    dtypes = [a.dtype for a in jax.tree.leaves(parts) if eqx.is_inexact_array(a)]
    if jnp.issubdtype(y0.dtype, jnp.floating):
        dtypes.append(y0.dtype)
    if not dtypes:
        return jnp.result_type(float)
    # The promotion lattice only: mixed arrays themselves stay under the user's setting.
    with jax.numpy_dtype_promotion("standard"):
        return np.dtype(functools.reduce(jnp.promote_types, dtypes))


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


def _continuation(state: SimulationState, network, n_nodes, cvar, rows, grid) -> Initial:
    """Continue a previous run exactly: its state, buffer, step counter and monitors."""
    y0 = jnp.asarray(state.y)
    dtype = run_dtype(network, y0)
    y0 = y0.astype(dtype)
    buffer = None
    if rows:
        expected = (rows, n_nodes, len(cvar))
        if state.buffer is None or state.buffer.shape != expected:
            got = None if state.buffer is None else state.buffer.shape
            raise ValueError(
                f"history: the SimulationState's buffer has shape {got}, this run needs "
                f"{expected} (same graph, dt and coupled variables)."
            )
        buffer = state.buffer.astype(dtype)
    # Checked after the cast: a float64 value too large for float32 becomes inf here.
    finite = dataclasses.replace(state, y=y0, buffer=buffer).is_finite()
    y0, buffer = eqx.error_if(
        (y0, buffer), ~finite,
        "history: the SimulationState contains NaN or inf (did the previous run diverge?).",
    )
    step0 = jnp.asarray(state.step, jnp.int32)
    step0 = eqx.error_if(
        step0, step0 > MAX_STEPS - grid.n_steps,
        f"history: continuing this SimulationState by {grid.n_steps} steps takes the step "
        f"counter past 2**31 - 1 = {MAX_STEPS}; a chain of continuations can take at most "
        "that many steps in total.",
    )
    if state.t is not None:
        t = jnp.asarray(state.t)
        # A t0 within a thousandth of a step is the same grid point (rounding of t0).
        tol = 1e-3 * grid.dt + 4 * float(jnp.finfo(t.dtype).eps) * abs(grid.t0)
        step0 = eqx.error_if(
            step0, jnp.abs(t - jnp.asarray(grid.t0, t.dtype)) > tol,
            f"history: this SimulationState ended at another time than t0 = {grid.t0} ms; "
            "continue with t0 = the previous run's t1 (state.t).",
        )
    return Initial(y0, buffer, step0, state.monitors, True)


def _check_shape(y0, y_shape, dynamics):
    if y0.shape != y_shape:
        raise ValueError(
            f"initial state has shape {y0.shape}, but {type(dynamics).__name__} on "
            f"{y_shape[1]} nodes needs [states, nodes] = {y_shape}."
        )
