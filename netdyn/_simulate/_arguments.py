"""Checks of ``simulate``'s arguments that fix the structure of the run.

Most of this runs at trace time on static values: the time grid (it sizes the loop), the
noise key, the kinds of the network's parts, and how its couplings split into delayed and
instantaneous ones. ``finite_parameters`` attaches the one runtime check of the
parameters' values, before the time loop.
"""

import dataclasses
import functools
import math
from typing import NamedTuple

import equinox as eqx
import jax
import jax.numpy as jnp
import numpy as np

from .._coupling._base import AbstractDelayedCoupling, AbstractInstantaneousCoupling
from .._graph._base import AbstractDelayGraph, AbstractGraph
from .._network import Network, parameter_arrays
from .._solution import SimulationState
from .._solver._base import AbstractSolver


class TimeGrid(NamedTuple):
    """The fixed-step time grid of a run: ``t0 + k dt`` for ``k = 0 .. n_steps``."""

    t0: float
    t1: float
    dt: float
    n_steps: int


# The global step counter is an int32 (it also drives counter-based noise): a run, and a
# chain of continuations, can take at most this many steps.
MAX_STEPS = 2**31 - 1


def whole_steps(name: str, duration: float, dt: float) -> int:
    """``duration / dt`` as an integer, or a ``ValueError`` naming ``name``."""
    if not math.isfinite(duration / dt):
        raise ValueError(f"{name} ({duration} ms) must be a finite number of steps of {dt} ms.")
    n = round(duration / dt)
    if n < 1 or abs(n * dt - duration) > 1e-9 * max(1.0, abs(duration)):
        raise ValueError(
            f"{name} ({duration} ms) is not a whole number of steps of dt = {dt} ms."
        )
    return n


def concrete_float(name: str, x) -> float:
    """``x`` as a finite Python float; traced values are refused (they fix array sizes)."""
    if isinstance(x, jax.core.Tracer):
        raise ValueError(f"{name} must be a Python number (it fixes array sizes), not traced.")
    x = float(x)
    if not math.isfinite(x):
        raise ValueError(f"{name} must be finite, got {x}.")
    return x


def time_grid(t0, t1, dt) -> TimeGrid:
    """Validate ``t0``, ``t1``, ``dt`` (ms) and count the steps between them."""
    t0 = concrete_float("t0", t0)
    t1 = concrete_float("t1", t1)
    dt = concrete_float("dt", dt)
    if not dt > 0:
        raise ValueError(f"dt must be positive, got {dt}.")
    if not t1 > t0:
        raise ValueError(f"t1 must be greater than t0, got t0={t0}, t1={t1}.")
    n_steps = whole_steps("the duration t1 - t0", t1 - t0, dt)
    if n_steps > MAX_STEPS:
        raise ValueError(
            f"the run from t0 = {t0} to t1 = {t1} ms at dt = {dt} ms has {n_steps:.3g} steps; "
            f"the step counter allows at most 2**31 - 1 = {MAX_STEPS} steps (in total over "
            "continuations). Use a shorter duration or a larger dt."
        )
    return TimeGrid(t0, t1, dt, n_steps)


def check_key(key) -> None:
    """A noise key must be one PRNG key: typed (``jax.random.key``, shape ``()``) or raw
    (``jax.random.PRNGKey`` or ``jax.random.key_data``: one ``uint32`` vector of the
    default implementation's key length)."""
    if key is None:
        return
    if _is_array(key):
        typed = jnp.issubdtype(key.dtype, jax.dtypes.prng_key)
        if typed and key.shape == ():
            return
        if not typed and key.dtype == np.uint32 and key.ndim == 1:
            _check_raw_key_length(key.shape)
            return
        got = f"an array of dtype {key.dtype} and shape {key.shape}"
    else:
        got = f"{type(key).__name__} {key!r}"
    raise ValueError(
        "key must be a single PRNG key, jax.random.key(seed) (or a legacy "
        f"jax.random.PRNGKey(seed)); got {got}. For several noise realisations, vmap "
        "over a batch of keys: jax.vmap(lambda k: nd.simulate(..., key=k))("
        "jax.random.split(key, n))."
    )


def _check_raw_key_length(shape: tuple[int, ...]) -> None:
    """A raw ``uint32`` key must hold the key data of JAX's default implementation."""
    impl = jax.config.jax_default_prng_impl
    want = jax.eval_shape(lambda: jax.random.key_data(jax.random.key(0))).shape
    if shape != want:
        raise ValueError(
            f"key: a raw uint32 key is the key data of the default PRNG implementation "
            f"({impl}), of shape {want}; got shape {shape}. Pass jax.random.key(seed), "
            "or wrap key data of another implementation: jax.random.wrap_key_data(data, "
            "impl=...)."
        )


def _is_array(x) -> bool:
    # ShapeDtypeStructs too: ``choose_remat`` takes the same arguments, abstract ones included.
    return isinstance(x, (jax.Array, np.ndarray, np.generic, jax.ShapeDtypeStruct))


def check_history_kind(history) -> None:
    """``history`` arrays must hold real numbers (checked before tracing: JAX cannot even
    trace an array of strings)."""
    if history is None:
        return
    name = "history"
    if isinstance(history, SimulationState):
        name, history = "history (SimulationState.y)", history.y
    try:
        dtype = history.dtype if _is_array(history) else np.asarray(history).dtype
    except (TypeError, ValueError) as e:
        raise ValueError(
            f"{name} must be an array of real numbers or a SimulationState, got "
            f"{type(history).__name__}: {e}"
        ) from e
    if not (jnp.issubdtype(dtype, jnp.floating) or np.dtype(dtype).kind in "biu"):
        raise ValueError(
            f"{name} must hold real numbers ([states, nodes] or [rows, states, nodes]), or "
            f"be a SimulationState; got an array of dtype {dtype} (netdyn does not drop "
            "imaginary parts)."
        )


def checked_arguments(simulate):
    """Wrap ``simulate``'s JIT-compiled body with the checks of ``history`` and ``key``
    that must run before tracing (``eqx.filter_jit`` fails on a string array with a
    message about abstract arrays)."""

    @functools.wraps(simulate, updated=())
    def wrapper(*args, **kwargs):
        check_history_kind(kwargs.get("history"))
        check_key(kwargs.get("key"))
        return simulate(*args, **kwargs)

    return wrapper


def check_batch_last(batch_last) -> None:
    """``simulate``'s ``batch_last``: ``True``, ``False`` or a positive whole number of
    members (the smallest batch that runs the batch-last loop)."""
    if isinstance(batch_last, bool):
        return
    if not isinstance(batch_last, int) or batch_last < 1:
        raise ValueError(f"batch_last must be True, False or a positive number of members "
                         f"(the smallest batch to run batch-last), got {batch_last!r}.")


def check_parts(network, solver) -> None:
    """Refuse a ``network`` or ``solver`` of the wrong kind."""
    if not isinstance(network, Network):
        raise ValueError(f"network must be a netdyn.Network, got {type(network).__name__}.")
    if not isinstance(solver, AbstractSolver):
        raise ValueError(f"solver must be an AbstractSolver, got {type(solver).__name__}.")


def finite_parameters(network: Network) -> Network:
    """``network`` whose dynamics, coupling and noise parameters are checked to be finite.

    Concrete values (Python numbers, static under ``jit``) are checked now, with a
    ``ValueError``; arrays get one runtime check (``eqx.branched_error_if``) before the
    time loop, whose message names the first non-finite parameter, e.g.
    ``ReducedWongWang.w``. A NaN parameter would otherwise give an all-NaN run.
    """
    # Lists put in with eqx.tree_at after construction (Network converts the others).
    parts = {"dynamics": parameter_arrays(network.dynamics),
             "coupling": parameter_arrays(network.coupling),
             "noise": parameter_arrays(network.noise)}
    names, arrays, places = [], [], []
    flat = {}
    for field, part in parts.items():
        leaves, treedef = jax.tree_util.tree_flatten_with_path(part)
        flat[field] = (treedef, [leaf for _, leaf in leaves])
        for i, (path, leaf) in enumerate(leaves):
            name = _parameter_name(part, path)
            if isinstance(leaf, (bool, int)):
                continue
            if isinstance(leaf, (float, np.floating)):
                if not math.isfinite(leaf):
                    raise ValueError(f"{name} must be finite, got {leaf}.")
            elif eqx.is_inexact_array(leaf):
                names.append(name)
                arrays.append(leaf)
                places.append((field, i))
    if not arrays:
        return dataclasses.replace(network, **parts)
    bad = jnp.stack([~jnp.all(jnp.isfinite(a)) for a in arrays])
    msgs = tuple(f"{name} contains NaN or inf." for name in names)
    arrays = eqx.branched_error_if(arrays, jnp.any(bad), jnp.argmax(bad), msgs)
    for (field, i), a in zip(places, arrays):
        flat[field][1][i] = a
    rebuilt = {field: jax.tree_util.tree_unflatten(*flat[field]) for field in parts}
    return dataclasses.replace(network, **rebuilt)


def _parameter_name(part, path) -> str:
    # ``coupling`` may be a tuple of couplings: name the coupling, not the tuple.
    if isinstance(part, tuple) and path and isinstance(path[0], jax.tree_util.SequenceKey):
        part, path = part[path[0].idx], path[1:]
    return type(part).__name__ + jax.tree_util.keystr(path)


def split_couplings(network: Network, graph: AbstractGraph) -> tuple[tuple, tuple]:
    """The network's couplings as (delayed, instantaneous), checked against the graph."""
    couplings = network.couplings
    delayed = tuple(c for c in couplings if isinstance(c, AbstractDelayedCoupling))
    instantaneous = tuple(c for c in couplings if isinstance(c, AbstractInstantaneousCoupling))
    unknown = [c for c in couplings if c not in delayed + instantaneous]
    if unknown:
        raise ValueError(
            f"coupling(s) {[type(c).__name__ for c in unknown]} must derive from "
            "AbstractInstantaneousCoupling or AbstractDelayedCoupling."
        )
    if delayed and not isinstance(graph, AbstractDelayGraph):
        raise ValueError(
            f"delayed coupling(s) {[type(c).__name__ for c in delayed]} need a graph with "
            f"delays (AbstractDelayGraph), got {type(graph).__name__}."
        )
    for c in delayed:
        # eqx.tree_at skips __check_init__, so a coupling edited after construction is
        # validated here again.
        c.__check_init__()
    return delayed, instantaneous
