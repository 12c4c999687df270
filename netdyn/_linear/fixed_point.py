r"""Fixed points of a network's delay-free drift, with implicit derivatives.

At a constant state the delays change nothing: $y^*$ with
$f\big(y^*, c(y^*)\big) = 0$, $c$ the coupling input every node receives when the coupled
variables hold their values at $y^*$ everywhere in the past.
"""

import equinox as eqx
import jax
import jax.numpy as jnp
from jaxtyping import Array, Float

from .._dynamics._base import clip_to_bounds, coupled_indices
from .._parameterisation.feedback_inhibition import steady_coupling_input

# Pseudo-transient continuation: implicit Euler steps whose length grows geometrically from
# FIRST_STEP ms (10x a step) up to Newton's (an infinite step) after about 16 of them, then
# a few more plain Newton steps. Implicit Euler follows the flow into the basin of the
# stable fixed point the start relaxes to, where a plain Newton iteration from a far start
# can jump to another (e.g. the high-activity branch of a bistable model).
FIRST_STEP = 1.0
GROWTH = 10.0
ITERATIONS = 24


class Drift(eqx.Module):
    """The network's drift $F(y) = f(0, y, c(y))$ without delays and without noise, on
    the flattened state ``[states * nodes]`` (state-major: row ``s`` of the state is
    ``y[s * nodes:(s + 1) * nodes]``)."""

    network: eqx.Module

    @property
    def shape(self) -> tuple[int, int]:
        dynamics = self.network.dynamics
        return len(dynamics.state_names), self.network.graph.n_nodes

    def __call__(self, y: Float[Array, " n"]) -> Float[Array, " n"]:
        dynamics = self.network.dynamics
        state = y.reshape(self.shape)
        x = state[jnp.asarray(coupled_indices(dynamics))]
        c = steady_coupling_input(self.network, x)
        return dynamics.vector_field(jnp.zeros((), y.dtype), state, c).reshape(-1)

    def clip(self, y: Float[Array, " n"]) -> Float[Array, " n"]:
        """``y`` with the bounded state variables clipped, as the solvers do."""
        return clip_to_bounds(self.network.dynamics, y.reshape(self.shape)).reshape(-1)


def _relax(drift: Drift, y0: Float[Array, " n"]) -> Float[Array, " n"]:
    eye = jnp.eye(y0.size, dtype=y0.dtype)

    def step(k, y):
        f, jac = drift(y), jax.jacfwd(drift)(y)
        h = jnp.where(k < ITERATIONS - 4, FIRST_STEP * GROWTH ** k.astype(y.dtype), jnp.inf)
        # (I / h - J) dy = F: an implicit Euler step of length h, Newton's for h = inf.
        dy = jnp.linalg.solve(eye / h - jac, f)
        return drift.clip(y + dy)

    return jax.lax.fori_loop(0, ITERATIONS, step, y0)


def fixed_point(drift: Drift, y0: Float[Array, " n"]) -> Float[Array, " n"]:
    r"""The fixed point $y^*$ of ``drift`` that the flow from ``y0`` relaxes to (implicit
    Euler steps of growing length, ending in Newton's method), with derivatives by the
    implicit function theorem (``jax.lax.custom_root``): $\partial y^* = -J^{-1}
    \partial F$, $J = \partial F / \partial y$ at $y^*$; no derivative passes through the
    iterations. Check convergence with ``drift(y*)``."""

    def solve(f, guess):
        del f  # the same function as drift, without the closed-over parameters' tangents
        return _relax(jax.lax.stop_gradient(drift), guess)

    def tangent_solve(g, b):
        return jnp.linalg.solve(jax.jacfwd(g)(b), b)

    return jax.lax.custom_root(lambda y: drift(y), jax.lax.stop_gradient(y0), solve,
                               tangent_solve)
