"""Linear node: a damped linear unit, TVB's ``Linear`` model."""

from typing import ClassVar

import equinox as eqx
import jax.numpy as jnp

from .._custom_types import CouplingInput, Param, Scalar, State
from ._base import AbstractDynamics, constant_state


class LinearDynamics(AbstractDynamics):
    r"""A damped linear node (TVB's ``Linear`` model; named ``LinearDynamics`` here because
    ``nd.Linear`` is the coupling, TVB's ``coupling.Linear``):

    $$ \dot x = \gamma\, x + c_0 . $$

    One state, ``x``, coupled to the other nodes (``cvar = [x]``); the coupling input
    $c_0$ is simply added. With ``Linear(G=g)`` coupling on weights $W$ and no delays the
    network is $\dot x = A x$ with $A = \mathrm{diag}(\gamma) + g W$, stable when every
    eigenvalue of $A$ has a negative real part; for $g W \ge 0$ delays do not change that
    (a positive system), and it holds when the damping outweighs each node's input,
    $-\gamma_i > g \sum_j W_{ij}$. With additive noise of intensity $\sigma$ on every
    node the stationary covariance $\Sigma$ of the delay-free network solves the Lyapunov
    equation $A \Sigma + \Sigma A^\top + \sigma^2 I = 0$: the analytically tractable
    reference for functional connectivity. Noise acts on ``x`` (as in TVB).

    Heun is stable for $|\gamma|\, \Delta t < 2$: with the default $\gamma = -10$ (a
    0.1 ms time constant) use $\Delta t \le 0.1$ ms.

    **Arguments** (defaults as TVB 2.10): ``gamma = -10.0`` (1/ms), the damping rate
    (TVB's range is $[-100, 0]$); it may be a ``[nodes]`` array, or a parameterisation
    (``nd.MapParameter``, ...). ``initial_x = 0.0``: the constant state returned by
    ``initial_state`` (the equilibrium of an isolated node).

    **References**: Sanz-Leon, Knock, Spiegler, Jirsa (2015), *Mathematical framework for
    large-scale brain network modeling in The Virtual Brain*, NeuroImage 111:385-430;
    Gardiner (2009), *Stochastic methods*, 4th ed., Springer (the multivariate
    Ornstein-Uhlenbeck process and its stationary covariance).
    """

    gamma: Param = -10.0
    initial_x: Param = 0.0
    coupled_variables: tuple[str, ...] = eqx.field(default=("x",), static=True)

    state_names: ClassVar[tuple[str, ...]] = ("x",)
    state_bounds: ClassVar[dict[str, tuple[float, float]]] = {}
    n_coupling_inputs: ClassVar[int] = 1

    def vector_field(self, t: Scalar, y: State, c: CouplingInput) -> State:
        return jnp.stack([self.gamma * y[0] + c[0]])

    def initial_state(self, n_nodes: int) -> State:
        return constant_state((self.initial_x,), n_nodes)
