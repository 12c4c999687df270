"""``simulate``: where dynamics, couplings, graph, noise, solver and monitors meet."""

import equinox as eqx
import jax
import jax.numpy as jnp

from .._custom_types import Key
from .._dynamics._base import coupled_indices
from .._monitor._base import AbstractMonitor
from .._network import Network
from .._parameterisation._base import resolve_parameters
from .._solution import SimulationState, Solution
from .._solver._base import AbstractSolver
from .._stimulus._terms import StimulusTerms
from . import _buffer
from ._arguments import (
    check_parts,
    checked_arguments,
    finite_parameters,
    split_couplings,
    time_grid,
)
from ._batched import make_batched_rule
from ._couplings import CouplingTerms
from ._initial import initial
from ._loop import boundary_loop
from ._schedule import MonitorSchedule
from ._step import LoopParts


@checked_arguments
@eqx.filter_jit
def simulate(
    network: Network,
    solver: AbstractSolver,
    *,
    t0: float,
    t1: float,
    dt: float,
    monitors: dict[str, AbstractMonitor] | None = None,
    key: Key | None = None,
    history=None,
) -> Solution:
    """Simulate ``network`` from ``t0`` to ``t1`` (ms) with fixed steps ``dt`` (ms).

    Step ``n -> n + 1`` reads every delayed coupling once, from the states at
    ``t_n - d_ij`` (nearest step ``rint(d / dt)`` or linear interpolation), and evaluates
    the instantaneous couplings and the network's stimuli at every solver stage (stimuli
    at the stage's time). The step uses noise ``fold_in(key, global_step)``.

    **Arguments**:

    - ``network``: the ``Network``. Parameterisations in it (``nd.MapParameter``,
      ``nd.FeedbackInhibition``, ...) are replaced by their values first.
    - ``solver``: an ``AbstractSolver``; its ``remat`` strategy organises the time loop.
    - ``t0``, ``t1``, ``dt``: Python numbers; ``t1 - t0`` must be a whole number of steps.
    - ``monitors``: ``{name: AbstractMonitor}``. Every period must be a whole number of
      steps and divide the duration.
    - ``key``: one JAX PRNG key (``jax.random.key(seed)``), required when the network
      has noise; for several realisations, ``jax.vmap`` over a batch of keys.
    - ``history``: the initial condition. ``None``: the dynamics' ``initial_state``,
      constant over the past. An array ``[states, nodes]``: that state, constant over the
      past. An array ``[rows, states, nodes]``: past states, oldest first, the last row
      being the state at ``t0`` (at least as many rows as the history buffer needs; extra
      older rows are ignored). A ``SimulationState`` (``sol.final`` of a previous run):
      continue that run exactly, from ``t0`` = its ``t1``, with the same monitors (see
      ``SimulationState``). Values must be finite (a runtime error otherwise); the
      state's dtype is the history's promoted with the network's floating-point arrays.

    **Returns**: a ``Solution``: ``sol[name]`` are the samples of each monitor,
    ``sol.ts[name]`` their times, ``sol.final`` the state to continue from.

    **Batches**: ``jax.vmap`` over any argument (parameters, keys, histories) runs one
    batched loop. When a batch of 8 or more shares its ``DelayGraph`` or
    ``SparseDelayGraph`` (weights and delays not batched), that loop keeps the batch on
    the trailing axis of the delay buffer, so that throughput does not fall as the batch
    grows; its results equal the plain ``vmap``'s to rounding (the edge sums are added in
    another order). Derivatives, and batches over the graph itself, use the plain
    ``vmap`` of the single-network loop.
    """
    check_parts(network, solver)
    network = finite_parameters(resolve_parameters(network))
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
    schedule = MonitorSchedule.build(monitors, dynamics.state_names, grid)

    stimuli = StimulusTerms.build(network.stimulus, dynamics.state_names, graph.n_nodes)

    parts = LoopParts(network, solver, terms, schedule, stimuli, key, start.step0,
                      grid.t0, grid.dt, dtype)
    carry = SimulationState(
        start.y0, start.buffer, start.step0, schedule.init(start.y0, grid.dt, start.monitors)
    )
    n_steps, every = grid.n_steps, schedule.every

    def plain(parts, carry):
        final, stacked = parts.solver.remat.loop(parts.step(), parts.emit(), carry, n_steps,
                                                 every)
        # Not the step counter: see ``_loop``.
        return (final.y, final.buffer, final.monitors), stacked

    (y, buffer, monitor_states), stacked = boundary_loop(
        plain, make_batched_rule(n_steps, every), parts, carry
    )
    ys, ts = schedule.collect(stacked, grid, not start.continuation, dtype)
    final = SimulationState(y, buffer, start.step0 + n_steps, monitor_states,
                            jnp.asarray(grid.t1, dtype))
    return Solution(ys, ts, final)


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
