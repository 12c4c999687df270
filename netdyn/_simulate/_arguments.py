"""Checks of ``simulate``'s arguments that fix the structure of the run.

Everything here runs at trace time on static values: the time grid (it sizes the loop),
the kinds of the network's parts, and how its couplings split into delayed and
instantaneous ones.
"""

import math
from typing import NamedTuple

import jax

from .._coupling._base import AbstractDelayedCoupling, AbstractInstantaneousCoupling
from .._graph._base import AbstractDelayGraph, AbstractGraph
from .._network import Network
from .._solver._base import AbstractSolver


class TimeGrid(NamedTuple):
    """The fixed-step time grid of a run: ``t0 + k dt`` for ``k = 0 .. n_steps``."""

    t0: float
    t1: float
    dt: float
    n_steps: int


def whole_steps(name: str, duration: float, dt: float) -> int:
    """``duration / dt`` as an integer, or a ``ValueError`` naming ``name``."""
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
    return TimeGrid(t0, t1, dt, whole_steps("the duration t1 - t0", t1 - t0, dt))


def check_parts(network, solver) -> None:
    """Refuse a ``network`` or ``solver`` of the wrong kind."""
    if not isinstance(network, Network):
        raise ValueError(f"network must be a netdyn.Network, got {type(network).__name__}.")
    if not isinstance(solver, AbstractSolver):
        raise ValueError(f"solver must be an AbstractSolver, got {type(solver).__name__}.")


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
