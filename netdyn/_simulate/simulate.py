"""``simulate``: where dynamics, couplings, graph, noise, solver and monitors meet."""

import equinox as eqx
import jax.numpy as jnp

from .._custom_types import Key
from .._monitor._base import AbstractMonitor
from .._network import Network
from .._parameterisation.input_gain import resolve_for_simulation
from .._remat.auto import Auto
from .._solution import SimulationState, Solution
from .._solver._base import AbstractSolver
from ._arguments import check_batch_last, check_parts, checked_arguments
from ._batched import make_batched_rule
from ._loop import boundary_loop
from ._setup import setup
from .choose_remat import choose_remat


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
    batch_last: bool | int = False,
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
      An ``nd.Auto`` budget is replaced by the strategy ``nd.choose_remat`` chooses for
      these arguments (compiling its candidates in every trace: call ``choose_remat``
      once yourself to reuse the choice).
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
    - ``batch_last``: how this call runs under ``jax.vmap`` (no effect on a single run).
      ``False``: the plain ``vmap`` of the single-network loop, which keeps the batch on
      the leading axis of every array. ``True``: when the batch shares its
      ``DelayGraph`` or ``SparseDelayGraph`` (weights and delays not batched: a sweep
      over other parameters, noise keys, histories, or a ``DelayGraph``'s per-target
      ``input_gain``), the batch-last loop, below. An integer ``B``: the batch-last loop
      from batches of ``B`` members on, the plain ``vmap`` below (what ``nd.FcLoss`` asks
      for its realisations: ``B = 8``). Nested ``vmap``s count as one batch of all their
      members (a population of parameter sets, each over noise realisations).

    **Returns**: a ``Solution``: ``sol[name]`` are the samples of each monitor,
    ``sol.ts[name]`` their times, ``sol.final`` the state to continue from.

    **Batches**: ``jax.vmap`` over any argument (parameters, keys, histories) batches the
    run. Under the plain ``vmap`` the delay buffer is ``[batch, rows, nodes, k]``: the
    delayed read of edge ``(i, j)``, ``x_j(t - d_ij)``, fetches ``B`` values one whole
    history apart, and the buffer's roll copies every history each step, so that
    throughput falls as the batch grows. With ``batch_last=True`` the buffer is
    ``[rows, nodes, k, batch]``, a ring (the new state is written in place, nothing is
    rolled): each delayed read fetches ``B`` contiguous values and the weighted sum
    ``sum_j W_ij v_ij`` is one pass over the edges with the shared weights, for the whole
    batch. On a CPU (84 nodes, float32, ``scripts/benchmarks/bench_batch.py``) that is
    about 1.7x the plain ``vmap``'s throughput at B = 8, 1.9x at B = 64 and 3.5x at
    B = 1024, but half of it at B = 1: leave small batches to the plain ``vmap``. Its
    results equal the plain ``vmap``'s to rounding, not bit for bit: the edge sums are
    added in another order. A batch whose graph is itself batched (sweeping weights or
    delays), or a network without delayed couplings, runs the plain ``vmap`` either way.
    Derivatives (``grad``, ``jvp``, of or under the ``vmap``) are those of the
    single-network loop, with its remat strategy, whatever ``batch_last``: only the
    forward value of a ``vmap`` that is not differentiated runs the batch-last loop.
    """
    check_batch_last(batch_last)
    check_parts(network, solver)
    return _simulate(resolve_for_simulation(network), solver, t0=t0, t1=t1, dt=dt,
                     monitors=monitors, key=key, history=history, batch_last=batch_last)


@eqx.filter_jit
def simulate_resolved(network: Network, solver: AbstractSolver, *, t0: float, t1: float,
                      dt: float, monitors: dict[str, AbstractMonitor] | None, key: Key | None,
                      history, batch_last: bool | int) -> Solution:
    """``simulate`` of a network already checked (``check_parts``) and resolved
    (``resolve_for_simulation``), for a caller that runs several simulations of one network
    and resolves it once (``FcLoss``: its burn-in and its run)."""
    return _simulate(network, solver, t0=t0, t1=t1, dt=dt, monitors=monitors, key=key,
                     history=history, batch_last=batch_last)


def _simulate(network, solver, *, t0, t1, dt, monitors, key, history,
              batch_last) -> Solution:
    """``simulate``'s body, for a checked and resolved ``network``."""
    if isinstance(solver.remat, Auto):
        # Chosen from the arguments' shapes and dtypes alone, never their (traced) values.
        args = dict(network=network, solver=solver, monitors=monitors, key=key, history=history)
        choice = choose_remat(**eqx.filter_eval_shape(lambda a: a, args), t0=t0, t1=t1, dt=dt)
        solver = eqx.tree_at(lambda s: s.remat, solver, choice.strategy)
    parts, carry, grid, schedule, start = setup(
        network, solver, t0=t0, t1=t1, dt=dt, monitors=monitors, key=key, history=history
    )
    dtype = start.y0.dtype
    n_steps, every = grid.n_steps, schedule.every

    def plain(parts, carry):
        final, stacked = parts.solver.remat.loop(parts.step(), parts.emit(), carry, n_steps,
                                                 every)
        # Not the step counter (see ``_loop``): the run adds ``n_steps`` to the input's.
        return (final.y, final.buffer, final.monitors), stacked

    if batch_last:
        (y, buffer, monitor_states), stacked = boundary_loop(
            plain, make_batched_rule(n_steps, every, 1 if batch_last is True else batch_last),
            parts, carry
        )
    else:
        (y, buffer, monitor_states), stacked = plain(parts, carry)
    ys, ts = schedule.collect(stacked, grid, not start.continuation, dtype)
    final = SimulationState(y, buffer, start.step0 + n_steps, monitor_states,
                            jnp.asarray(grid.t1, dtype))
    return Solution(ys, ts, final)
