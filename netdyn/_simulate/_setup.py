"""What ``simulate`` builds before its time loop: the loop's parts and initial carry.

Shared by ``simulate`` and ``choose_remat`` (which traces it with abstract arguments to
get the loop's structure), so that the loop ``Auto`` measures is the loop that runs.
"""

from typing import NamedTuple

import jax
import jax.numpy as jnp

from .._dynamics._base import coupled_indices
from .._solution import SimulationState
from .._stimulus._terms import StimulusTerms
from . import _buffer
from ._arguments import (
    TimeGrid,
    finite_parameters,
    split_couplings,
    time_grid,
)
from ._couplings import CouplingTerms
from ._initial import Initial, initial
from ._schedule import MonitorSchedule
from ._step import LoopParts


class Setup(NamedTuple):
    """The time loop's parts and initial carry, and what ``simulate`` needs after it."""

    parts: LoopParts
    carry: SimulationState
    grid: TimeGrid
    schedule: MonitorSchedule
    start: Initial


def setup(network, solver, *, t0, t1, dt, monitors, key, history) -> Setup:
    """Check ``simulate``'s arguments and build its loop (see ``simulate``); ``network``
    is already checked (``check_parts``) and resolved (``resolve_for_simulation``) by the
    caller, so that a loss running several simulations of one network resolves it once."""
    network = finite_parameters(network)
    grid = time_grid(t0, t1, dt)
    dynamics = network.dynamics
    # eqx.tree_at skips __check_init__: a model edited after construction is checked here.
    dynamics.__check_init__()
    graph = network.graph.validate()
    delayed, instantaneous = split_couplings(network, graph)
    cvar = coupled_indices(dynamics)
    rows = 0
    if delayed:
        rows = _buffer.n_rows(graph.max_delay, grid.dt, [c.interpolation for c in delayed])

    start = initial(history, network, graph.n_nodes, cvar, rows, grid)
    dtype = start.y0.dtype
    terms = CouplingTerms(
        graph,
        delayed,
        instantaneous,
        cvar,
        tuple(graph.delay_index(grid.dt, rows, c.interpolation) for c in delayed),
        (dynamics.n_coupling_inputs, graph.n_nodes),
    )
    terms.check_shapes(dynamics, start.y0, start.buffer)
    _check_vector_field(dynamics, start.y0, terms.shape, grid.t0)
    if network.noise is not None and key is None:
        raise ValueError("the network has noise: pass key=jax.random.key(...).")
    schedule = MonitorSchedule.build(monitors, dynamics, grid)

    stimuli = StimulusTerms.build(network.stimulus, dynamics.state_names, graph.n_nodes)

    parts = LoopParts(dynamics, network.noise, solver, terms, schedule, stimuli, key, start.step0,
                      grid.t0, grid.dt, dtype)
    carry = SimulationState(
        start.y0, start.buffer, start.step0, schedule.init(start.y0, grid.dt, start.monitors)
    )
    return Setup(parts, carry, grid, schedule, start)


def _check_vector_field(dynamics, y0, c_shape, t0) -> None:
    """The dynamics' parameters must broadcast to the network (per-region ones: [nodes])."""
    n_nodes = y0.shape[1]
    try:
        dy = jax.eval_shape(
            dynamics.vector_field, jnp.asarray(t0, y0.dtype), y0, jnp.zeros(c_shape, y0.dtype)
        )
    except (TypeError, ValueError) as e:
        raise ValueError(
            f"{type(dynamics).__name__} parameters do not fit a network of {n_nodes} nodes "
            f"(per-region parameters must have shape [nodes]): {e}"
        ) from e
    if dy.shape != y0.shape:
        raise ValueError(
            f"{type(dynamics).__name__}.vector_field returned shape {dy.shape}, expected "
            f"{y0.shape} (per-region parameters must have shape [nodes])."
        )
