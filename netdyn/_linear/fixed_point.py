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

# Pseudo-transient continuation with switched evolution relaxation (Mulder & van Leer
# 1985; Kelley & Keyes 1998): implicit Euler steps of length h, from FIRST_STEP ms, with h
# scaled by the fall of the residual |F| at each step (h_{k+1} = h_k |F_{k-1}| / |F_k|),
# and by at least MIN_GROWTH, so that steps grow into Newton's method (h -> inf) as the
# state settles, and through a slow passage (the ghost of a saddle-node, where |F| falls by
# 0.2 % a step) within a few hundred steps. Implicit Euler
# follows the flow into the basin of the stable fixed point the start relaxes to, through
# slow passages too, where a plain Newton iteration from a far start can jump to another
# (e.g. a saddle between the branches of a bistable model).
FIRST_STEP = 1.0  # ms
MIN_GROWTH = 1.05
LONGEST_STEP = 1e12  # ms: Newton's method in effect
MAX_ITERATIONS = 1000


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
    eps = jnp.finfo(y0.dtype).eps
    tol = 10 * eps ** 0.75

    def norm(x):
        return jnp.max(jnp.abs(x))

    def step(carry):
        k, y, h, f_old, _ = carry
        f = drift(y)
        ratio = f_old / jnp.maximum(norm(f), jnp.finfo(y.dtype).tiny)
        h = jnp.clip(h * jnp.maximum(ratio, MIN_GROWTH), FIRST_STEP, LONGEST_STEP)
        # (I / h - J) dy = F: an implicit Euler step of length h.
        dy = jnp.linalg.solve(eye / h - jax.jacfwd(drift)(y), f)
        y_new = drift.clip(y + dy)
        return k + 1, y_new, h, norm(f), norm(y_new - y)

    def going(carry):
        k, y, h, _, dy = carry
        settled = (h >= LONGEST_STEP) & (dy <= tol * (1 + norm(y)))
        return (k < MAX_ITERATIONS) & ~settled

    one = jnp.ones((), y0.dtype)
    start = (0, y0, FIRST_STEP * one, norm(drift(y0)), jnp.inf * one)
    return jax.lax.while_loop(going, step, start)[1]


def fixed_point(drift: Drift, y0: Float[Array, " n"]) -> Float[Array, " n"]:
    r"""The fixed point $y^*$ of ``drift`` that the flow from ``y0`` relaxes to (implicit
    Euler steps that grow as the residual falls, ending in Newton's method), with derivatives by the
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
