"""Abstract base of online monitors."""

import abc
from typing import Any

import equinox as eqx
from jaxtyping import Array, Float, PyTree

MonitorState = PyTree[Array]


class AbstractMonitor(eqx.Module):
    """An online observer of the simulation, run inside the time loop.

    ``update`` sees the state after every step; ``emit`` produces one sample every
    ``period`` ms (``None``: every step) and returns the state to continue with. Only
    emitted samples are stored, so a monitor with a long period costs no memory per step.
    ``variables`` selects the state variables the monitor sees (all when ``None``);
    ``update`` receives those rows only, in that order. ``warmup`` (ms): on a fresh run
    (not a continuation), ``simulate`` drops the samples whose period ends within
    ``warmup`` ms of ``t0`` (initial transients; the samples are still computed).
    """

    period: eqx.AbstractVar[float | None]
    variables: eqx.AbstractVar[tuple[str, ...] | None]
    warmup: eqx.AbstractVar[float]

    @abc.abstractmethod
    def init(self, y: Float[Array, "k nodes"], dt: float) -> MonitorState:
        """Monitor state at the start of a run, from the initial (selected) state."""

    @abc.abstractmethod
    def update(self, state: MonitorState, y: Float[Array, "k nodes"], dt: float) -> MonitorState:
        """Fold in the (selected) state after one step."""

    @abc.abstractmethod
    def emit(self, state: MonitorState, dt: float) -> tuple[MonitorState, Any]:
        """Produce a sample at the end of a period, and the state to continue with."""

    @abc.abstractmethod
    def sample_offset(self, period: float, dt: float) -> float:
        """Time of a sample relative to the end of its period (ms)."""

    def advance_every(self, dt: float) -> int:
        """Steps between calls of ``advance`` (1: never called; the default)."""
        return 1

    def advance(self, state: MonitorState, dt: float) -> MonitorState:
        """Work done every ``advance_every(dt)`` steps, after that step's ``update`` (a
        slow process integrated on a coarser step than the network's); the default does
        nothing."""
        return state


class AbstractSingleVariableMonitor(AbstractMonitor):
    """A monitor driven by exactly one state variable (the BOLD monitors).

    ``simulate`` checks ``variables`` against the model: with ``variables=None`` on a
    model of several state variables it refuses the run and suggests one of the model's
    own names (its first coupled variable).
    """
