"""Abstract base of noise."""

import abc

import equinox as eqx
import jax
import jax.numpy as jnp

from .._custom_types import Key, Param, State


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
        """Rows of the state that receive noise."""
        if self.apply_to is None:
            return tuple(range(len(state_names)))
        unknown = [n for n in self.apply_to if n not in state_names]
        if unknown:
            raise ValueError(
                f"{type(self).__name__}.apply_to names unknown state variable(s) {unknown}; "
                f"state variables are {state_names}."
            )
        return tuple(state_names.index(n) for n in self.apply_to)

    def increment(self, key: Key, step, y: State, dt: float, rows: tuple[int, ...]) -> State:
        """The noise term ``g(y) * dW`` of step ``step``, with ``dW ~ N(0, dt)``."""
        idx = jnp.asarray(rows)
        z = jax.random.normal(jax.random.fold_in(key, step), (len(rows), y.shape[1]), y.dtype)
        dw = jnp.sqrt(jnp.asarray(dt, y.dtype)) * z
        g = self.diffusion(y[idx])
        if len(rows) == y.shape[0]:
            return g * dw
        return jnp.zeros_like(y).at[idx].set(g * dw)
