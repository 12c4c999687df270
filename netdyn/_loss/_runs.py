"""The simulated runs behind ``nd.FcLoss`` and ``nd.Chained``: one realisation's burn-in
and measured run, and the realisations together."""

import dataclasses
import math

import equinox as eqx
import jax
import jax.numpy as jnp
from jaxtyping import Array, Float

from .._custom_types import Key
from .._network import Network
from .._simulate.simulate import simulate_resolved
from .._solution import SimulationState

# Members (realisations, times those of any ``vmap`` around the loss) from which the
# forward pass runs the batch-last loop
BATCH_LAST = 8


def restartable(state: SimulationState) -> tuple[SimulationState, jax.Array]:
    """A state to start a run from, with zeros in place of a diverged one (NaN or inf),
    and whether it was finite: the run from a diverged state is then NaN, as a diverged
    run's own signal is, and a fit sees a non-finite loss instead of a runtime error."""
    finite = state.is_finite()
    state = eqx.tree_at(lambda s: s.y, state, jnp.where(finite, state.y, 0))
    if state.buffer is not None:
        state = eqx.tree_at(lambda s: s.buffer, state, jnp.where(finite, state.buffer, 0))
    return state, finite


def frozen(tree):
    """``tree`` with every inexact array behind ``stop_gradient``: no tape, no tangent."""
    return jax.tree.map(
        lambda x: jax.lax.stop_gradient(x) if eqx.is_inexact_array(x) else x, tree
    )


def burn_in_length(loss, ms: float) -> float:
    """A burn-in of ``ms`` rounded up to whole periods of ``loss.monitor`` (of ``dt``
    without one); 0 stays 0 (``nd.whole_periods`` keeps at least one period)."""
    period = loss.monitor.period if loss.monitor.period is not None else loss.dt
    return math.ceil(ms / period - 1e-9) * period


def burnt_in(loss, network: Network, key: Key | None, history: SimulationState | None,
             burn_in: float) -> SimulationState:
    """The state after ``burn_in`` ms (whole periods) of ``loss``'s simulation from
    ``history`` (``None``: the initial state), its monitor having seen them."""
    return simulate_resolved(network, loss.solver, t0=0.0, t1=burn_in, dt=loss.dt,
                             monitors={"signal": loss.monitor}, key=key, history=history,
                             batch_last=BATCH_LAST).final


def measured_run(loss, network: Network, key: Key | None, start: SimulationState | None,
                 burn_in: float) -> tuple[Float[Array, "time nodes"], SimulationState]:
    """One realisation of ``loss`` (an ``nd.FcLoss``) on a resolved, checked ``network``:
    ``burn_in`` ms (whole periods) from ``start`` (``None``: the initial state), then the
    measured run of ``loss.duration`` ms, continuing it exactly (same noise stream).

    Returns its signal ``[samples, nodes]`` (NaN if ``start`` or the burn-in's end is not
    finite) and the run's end state without its clock (``t=None``), so that a later run
    may start from it at ``t0 = 0``."""
    monitors = {"signal": loss.monitor}
    t0, history, finite = 0.0, None, None
    if start is not None:
        history, finite = restartable(start)
    # The realisations run under ``vmap``: from BATCH_LAST members, the forward pass runs
    # the batch-last loop (``simulate(batch_last=BATCH_LAST)``; gradients never do), which
    # pays from about 8 members on (``benchmarks/batch.md``). The members counted are those
    # of every ``vmap`` around the loss too (a population of candidates x realisations).
    if burn_in > 0:
        freeze = (lambda tree: tree) if loss.burn_in_gradient else frozen
        warm = burnt_in(loss, freeze(network), key, history, burn_in)
        t0, (history, warm_finite) = burn_in, restartable(freeze(warm))
        finite = warm_finite if finite is None else finite & warm_finite
    sol = simulate_resolved(network, loss.solver, t0=t0, t1=t0 + loss.duration, dt=loss.dt,
                            monitors=monitors, key=key, history=history,
                            batch_last=BATCH_LAST)
    x = sol["signal"] if finite is None else jnp.where(finite, sol["signal"], jnp.nan)
    end = dataclasses.replace(sol.final, t=None)
    return (x.reshape(x.shape[0], -1) if x.ndim == 3 else x), end


def over_realisations(realisations: int, run, key: Key | None, *args):
    """``run(key_b, *args_b)`` for every realisation ``b`` (each of ``args`` with a leading
    axis over realisations), stacked on a leading axis: with one realisation or no
    ``key``, ``key`` itself; with more, ``fold_in(key, b)``, under ``vmap``."""
    if key is None or realisations == 1:
        return jax.tree.map(lambda x: x[None], run(key, *jax.tree.map(lambda a: a[0], args)))
    keys = jax.vmap(lambda b: jax.random.fold_in(key, b))(jnp.arange(realisations))
    return jax.vmap(run)(keys, *args)
