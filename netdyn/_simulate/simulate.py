"""``simulate``: where dynamics, couplings, graph, noise, solver and monitors meet."""

import math

import equinox as eqx
import jax
import jax.numpy as jnp
import numpy as np
from jax.ad_checkpoint import checkpoint_name

from . import _history
from ._coupling._base import AbstractDelayedCoupling, AbstractInstantaneousCoupling
from ._custom_types import Key
from ._dynamics._base import clip_to_bounds, coupled_indices
from ._graph._base import AbstractDelayGraph
from ._monitor._base import AbstractMonitor
from ._network import Network
from ._solution import SimulationState, Solution
from ._solver._base import AbstractSolver


def _whole_steps(name: str, duration: float, dt: float) -> int:
    n = round(duration / dt)
    if n < 1 or abs(n * dt - duration) > 1e-9 * max(1.0, abs(duration)):
        raise ValueError(
            f"{name} ({duration} ms) is not a whole number of steps of dt = {dt} ms."
        )
    return n


def _concrete_float(name: str, x) -> float:
    if isinstance(x, jax.core.Tracer):
        raise ValueError(f"{name} must be a Python number (it fixes array sizes), not traced.")
    x = float(x)
    if not math.isfinite(x):
        raise ValueError(f"{name} must be finite, got {x}.")
    return x


def _take_rows(y, rows: tuple[int, ...]):
    if rows == tuple(range(rows[0], rows[0] + len(rows))):
        return y[rows[0] : rows[0] + len(rows)]
    return y[np.asarray(rows)]


def _monitor_rows(name: str, monitor: AbstractMonitor, state_names) -> tuple[int, ...]:
    if monitor.variables is None:
        return tuple(range(len(state_names)))
    unknown = [v for v in monitor.variables if v not in state_names]
    if unknown or not monitor.variables:
        raise ValueError(
            f"monitor {name!r}: unknown variable(s) {list(monitor.variables)}; "
            f"state variables are {state_names}."
        )
    return tuple(state_names.index(v) for v in monitor.variables)


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
    the instantaneous couplings at every solver stage. The step uses noise
    ``fold_in(key, global_step)``.

    **Arguments**:

    - ``network``: the ``Network``.
    - ``solver``: an ``AbstractSolver``; its ``remat`` strategy organises the time loop.
    - ``t0``, ``t1``, ``dt``: Python numbers; ``t1 - t0`` must be a whole number of steps.
    - ``monitors``: ``{name: AbstractMonitor}``. Every period must be a whole number of
      steps and divide the duration.
    - ``key``: a JAX PRNG key, required when the network has noise.
    - ``history``: the initial condition. ``None``: the dynamics' ``initial_state``,
      constant over the past. An array ``[states, nodes]``: that state, constant over the
      past. An array ``[rows, states, nodes]``: past states, oldest first, the last row
      being the state at ``t0`` (at least as many rows as the history buffer needs; extra
      older rows are ignored). A ``SimulationState`` (``sol.final`` of a previous run):
      continue that run exactly.

    **Returns**: a ``Solution``: ``sol[name]`` are the samples of each monitor,
    ``sol.ts[name]`` their times, ``sol.final`` the state to continue from.
    """
    if not isinstance(network, Network):
        raise ValueError(f"network must be a netdyn.Network, got {type(network).__name__}.")
    if not isinstance(solver, AbstractSolver):
        raise ValueError(f"solver must be an AbstractSolver, got {type(solver).__name__}.")
    t0 = _concrete_float("t0", t0)
    t1 = _concrete_float("t1", t1)
    dt = _concrete_float("dt", dt)
    if not dt > 0:
        raise ValueError(f"dt must be positive, got {dt}.")
    if not t1 > t0:
        raise ValueError(f"t1 must be greater than t0, got t0={t0}, t1={t1}.")
    n_steps = _whole_steps("the duration t1 - t0", t1 - t0, dt)

    dynamics = network.dynamics
    dynamics.__check_init__()
    state_names = dynamics.state_names
    cvar = coupled_indices(dynamics)
    graph = network.graph.validate()
    n_nodes = graph.n_nodes
    couplings = network.couplings
    delayed = tuple(c for c in couplings if isinstance(c, AbstractDelayedCoupling))
    instantaneous = tuple(c for c in couplings if isinstance(c, AbstractInstantaneousCoupling))
    if delayed and not isinstance(graph, AbstractDelayGraph):
        raise ValueError(
            f"delayed coupling(s) {[type(c).__name__ for c in delayed]} need a graph with "
            f"delays (AbstractDelayGraph), got {type(graph).__name__}."
        )
    for c in delayed:
        c.__check_init__()
    unknown = [c for c in couplings if c not in delayed + instantaneous]
    if unknown:
        raise ValueError(
            f"coupling(s) {[type(c).__name__ for c in unknown]} must derive from "
            "AbstractInstantaneousCoupling or AbstractDelayedCoupling."
        )

    # Initial condition.
    rows = 0
    if delayed:
        rows = _history.n_rows(graph.max_delay, dt, [c.interpolation for c in delayed])
    y_shape = (len(state_names), n_nodes)
    step0 = jnp.zeros((), jnp.int32)
    previous_monitors = {}
    buffer = None
    if history is None:
        y0 = jnp.asarray(dynamics.initial_state(n_nodes))
        past = None
    elif isinstance(history, SimulationState):
        y0 = jnp.asarray(history.y)
        step0 = jnp.asarray(history.step, jnp.int32)
        previous_monitors = history.monitors
        if delayed:
            if history.buffer is None or history.buffer.shape != (rows, n_nodes, len(cvar)):
                got = None if history.buffer is None else history.buffer.shape
                raise ValueError(
                    f"history: the SimulationState's buffer has shape {got}, this run needs "
                    f"{(rows, n_nodes, len(cvar))} (same graph, dt and coupled variables)."
                )
            buffer = history.buffer
        past = None
    else:
        past = jnp.asarray(history)
        if past.ndim == 2:
            y0, past = past, None
        elif past.ndim == 3:
            if past.shape[1:] != y_shape or past.shape[0] < max(rows, 1):
                raise ValueError(
                    f"history has shape {past.shape}, expected [rows >= {max(rows, 1)}, "
                    f"states = {y_shape[0]}, nodes = {y_shape[1]}]."
                )
            y0 = past[-1]
        else:
            raise ValueError(
                f"history has shape {past.shape}, expected [states, nodes] = {y_shape} or "
                f"[rows, states, nodes]."
            )
    if y0.shape != y_shape:
        raise ValueError(
            f"initial state has shape {y0.shape}, but {type(dynamics).__name__} on "
            f"{n_nodes} nodes needs [states, nodes] = {y_shape}."
        )
    if not jnp.issubdtype(y0.dtype, jnp.floating):
        y0 = y0.astype(float)
    dtype = y0.dtype
    if delayed and buffer is None:
        if past is None:
            buffer = _history.constant(_take_rows(y0, cvar), rows)
        else:
            buffer = _history.from_states(past[-rows:, np.asarray(cvar)])
    if buffer is not None:
        buffer = buffer.astype(dtype)
    indices = tuple(graph.delay_index(dt, rows, c.interpolation) for c in delayed)

    # Couplings.
    def term(c, xi, xj):
        return c.post(graph.weighted_sum(c.pre(xi, xj)))

    def delayed_terms(y, buf):
        xi = graph.target_values(_take_rows(y, cvar))
        return [
            term(c, xi, graph.delayed_source_values(buf, index))
            for c, index in zip(delayed, indices)
        ]

    def instantaneous_terms(y):
        x = _take_rows(y, cvar)
        xi, xj = graph.target_values(x), graph.source_values(x)
        return [term(c, xi, xj) for c in instantaneous]

    def total(terms, start=None):
        for t in terms:
            start = t if start is None else start + t
        return start

    expected_c = (dynamics.n_coupling_inputs, n_nodes)
    try:
        shapes = jax.eval_shape(
            lambda y, buf: delayed_terms(y, buf) + instantaneous_terms(y), y0, buffer
        )
    except (TypeError, ValueError) as e:
        raise ValueError(f"the couplings cannot be evaluated on this network: {e}") from e
    for c, out in zip(delayed + instantaneous, shapes):
        if out.shape != expected_c:
            raise ValueError(
                f"{type(c).__name__} produces coupling input of shape {out.shape}, but "
                f"{type(dynamics).__name__} reads [inputs, nodes] = {expected_c}."
            )
    try:
        dy = jax.eval_shape(
            dynamics.vector_field, jnp.asarray(t0, dtype), y0, jnp.zeros(expected_c, dtype)
        )
    except (TypeError, ValueError) as e:
        raise ValueError(
            f"{type(dynamics).__name__} parameters do not fit a network of {n_nodes} nodes "
            f"(per-region parameters must have shape [nodes]): {e}"
        ) from e
    if dy.shape != y_shape:
        raise ValueError(
            f"{type(dynamics).__name__}.vector_field returned shape {dy.shape}, expected "
            f"{y_shape} (per-region parameters must have shape [nodes])."
        )

    # Noise.
    noise = network.noise
    noise_rows = ()
    if noise is not None:
        if key is None:
            raise ValueError("the network has noise: pass key=jax.random.key(...).")
        noise_rows = noise.rows(state_names)

    # Monitors.
    monitors = {} if monitors is None else dict(monitors)
    periods = {}
    monitor_rows = {}
    for name, m in monitors.items():
        if not isinstance(m, AbstractMonitor):
            raise ValueError(f"monitor {name!r} is not an AbstractMonitor: {type(m).__name__}.")
        if m.period is None:
            periods[name] = 1
        else:
            if not m.period > 0:
                raise ValueError(f"monitor {name!r}: period must be positive, got {m.period}.")
            periods[name] = _whole_steps(f"monitor {name!r} period", m.period, dt)
        if n_steps % periods[name]:
            raise ValueError(
                f"the duration ({t1 - t0} ms) is not a whole number of periods of monitor "
                f"{name!r} ({periods[name] * dt} ms)."
            )
        monitor_rows[name] = _monitor_rows(name, m, state_names)
    every = math.gcd(*periods.values()) if periods else n_steps
    mstates = {}
    for name, m in monitors.items():
        fresh = m.init(_take_rows(y0, monitor_rows[name]), dt)
        old = previous_monitors.get(name)
        same = old is not None and jax.tree.structure(old) == jax.tree.structure(fresh)
        mstates[name] = old if same else fresh

    clip = lambda y: clip_to_bounds(dynamics, y)  # noqa: E731

    # The solver stages are node-wise and cheap next to the delayed gather: recomputing
    # them in the backward pass keeps the per-step residuals to the step's inputs (state,
    # delayed coupling input, noise term) instead of every intermediate of every stage.
    @jax.checkpoint
    def advance(t, y, c_delayed, noise_term):
        def drift(t, y):
            c = total(instantaneous_terms(y), c_delayed)
            if c is None:
                c = jnp.zeros(expected_c, dtype)
            return dynamics.vector_field(t, y, c)

        return solver.step(drift, t, y, dt, noise_term, clip)

    def step(carry: SimulationState) -> SimulationState:
        y, buf, i = carry.y, carry.buffer, carry.step
        t = t0 + (i - step0).astype(dtype) * dt
        c_delayed = total(delayed_terms(y, buf))
        if c_delayed is not None:
            c_delayed = checkpoint_name(c_delayed, "coupling")
        noise_term = None
        if noise is not None:
            noise_term = noise.increment(key, i, y, dt, noise_rows)
        y1 = checkpoint_name(advance(t, y, c_delayed, noise_term), "state")
        if buf is not None:
            buf = checkpoint_name(_history.push(buf, _take_rows(y1, cvar)), "history")
        ms = {
            name: m.update(carry.monitors[name], _take_rows(y1, monitor_rows[name]), dt)
            for name, m in monitors.items()
        }
        ms = checkpoint_name(ms, "monitor")
        return SimulationState(y1, buf, i + 1, ms)

    def emit(carry: SimulationState):
        ms, samples = {}, {}
        for name, m in monitors.items():
            state, sample = m.emit(carry.monitors[name], dt)
            if periods[name] != every:
                due = (carry.step - step0) % periods[name] == 0
                state = jax.tree.map(
                    lambda new, old: jnp.where(due, new, old), state, carry.monitors[name]
                )
            ms[name], samples[name] = state, sample
        return SimulationState(carry.y, carry.buffer, carry.step, ms), samples

    carry = SimulationState(y0, buffer, step0, mstates)
    final, stacked = solver.remat.loop(step, emit, carry, n_steps, every)

    ys, ts = {}, {}
    fresh_run = not isinstance(history, SimulationState)
    for name, m in monitors.items():
        r = periods[name] // every
        period = periods[name] * dt
        n_samples = n_steps // periods[name]
        # Warm-up counts from the start of a fresh run; a continuation keeps every sample.
        drop = math.floor(m.warmup / period + 1e-9) if fresh_run else 0
        if drop >= n_samples:
            raise ValueError(
                f"monitor {name!r}: warmup ({m.warmup} ms) leaves no sample of the "
                f"{n_samples} in this run (period {period} ms)."
            )
        ys[name] = jax.tree.map(
            lambda s, r=r, drop=drop: s[r - 1 :: r][drop:], stacked[name]
        )
        ends = t0 + period * np.arange(drop + 1, n_samples + 1)
        ts[name] = jnp.asarray(ends + m.sample_offset(period, dt), dtype)
    return Solution(ys, ts, final)

