"""Abstract base of noise."""

import abc

import equinox as eqx
import jax.numpy as jnp

from .. import _xla_tricks
from .._custom_types import Key, Param, State
from .._names import as_names


def standard_normal(key: Key, step, shape: tuple[int, ...], dtype):
    """The standard normal draw of step ``step``:
    ``jax.random.normal(jax.random.fold_in(key, step), shape, dtype)`` bit for bit, for
    every key implementation and either setting of ``jax_threefry_partitionable``."""
    z = _xla_tricks.fold_in_normal(key, step, shape, dtype)
    # Computed once: XLA:CPU would otherwise copy the draw's ~350 operations per element
    # into each of its consumers (the solver stages, the clipping, the history push).
    return _xla_tricks.materialise(z, step)


def to_names(apply_to: str | tuple[str, ...] | list[str] | None) -> tuple[str, ...] | None:
    """``apply_to`` as a tuple of state variable names; a string is one name."""
    return as_names(apply_to, "noise apply_to")


class AbstractNoise(eqx.Module):
    r"""Noise of a stochastic differential equation $dy = f\,dt + g(y)\, dW$.

    A noise gives the diffusion $g(y)$ on the state variables named in ``apply_to``
    (all of them when ``None``); other rows get no noise. The Wiener increments are
    counter-based: step ``i`` draws from ``jax.random.fold_in(key, i)``, so no
    ``[steps, ...]`` array is allocated, and the trajectory does not depend on how the
    time loop is split into blocks (remat strategies, continuation runs).
    """

    sigma: eqx.AbstractVar[Param]
    apply_to: eqx.AbstractVar[tuple[str, ...] | None]

    @abc.abstractmethod
    def diffusion(self, y: State) -> State:
        """``g(y)`` on the noisy rows, shape ``[len(rows), nodes]``; ``y`` holds those rows."""

    def rows(self, state_names: tuple[str, ...]) -> tuple[int, ...]:
        """Rows of the state that receive noise (``sigma``'s shape checked against them)."""
        if self.apply_to is None:
            rows = tuple(range(len(state_names)))
        else:
            unknown = [n for n in self.apply_to if n not in state_names]
            if unknown:
                raise ValueError(
                    f"{type(self).__name__}.apply_to names unknown state variable(s) "
                    f"{unknown}; state variables are {state_names}."
                )
            rows = tuple(state_names.index(n) for n in self.apply_to)
        self._check_sigma(len(rows), tuple(state_names[r] for r in rows), None)
        return rows

    def _check_sigma(self, k: int, names: tuple[str, ...] | None, n_nodes: int | None) -> None:
        """Trace-time check that ``sigma`` is a scalar, ``[k]`` (one value per noisy state
        variable) or ``[k, nodes]``; a size-1 axis broadcasts."""
        shape = jnp.shape(self.sigma)
        fits = len(shape) <= 2 and (len(shape) == 0 or shape[0] in (1, k))
        if fits and len(shape) == 2 and n_nodes is not None:
            fits = shape[1] in (1, n_nodes)
        if not fits:
            nodes = "nodes" if n_nodes is None else f"nodes = {n_nodes}"
            which = "" if names is None else f" {names}"
            raise ValueError(
                f"{type(self).__name__}.sigma has shape {shape}; it must be a scalar, "
                f"[{k}] (one value per noisy state variable{which}) or [{k}, {nodes}]."
            )

    def increment(self, key: Key, step, y: State, dt: float, rows: tuple[int, ...]) -> State:
        """The noise term ``g(y) * dW`` of step ``step``, with ``dW ~ N(0, dt)``."""
        # ``rows`` checked the leading axis against the variables' names; this, the nodes.
        self._check_sigma(len(rows), None, y.shape[1])
        idx = jnp.asarray(rows)
        z = standard_normal(key, step, (len(rows), y.shape[1]), y.dtype)
        dw = jnp.sqrt(jnp.asarray(dt, y.dtype)) * z
        g = self.diffusion(y[idx])
        if len(rows) == y.shape[0]:
            return g * dw
        return jnp.zeros_like(y).at[idx].set(g * dw)
