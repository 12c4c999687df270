"""Supercritical Hopf normal form (Stuart-Landau oscillator)."""

from typing import ClassVar

import equinox as eqx
import jax.numpy as jnp

from .._custom_types import CouplingInput, Param, Scalar, State
from ._base import AbstractDynamics, constant_state


class SupHopf(AbstractDynamics):
    r"""Normal form of a supercritical Hopf bifurcation in Cartesian coordinates, the
    Stuart-Landau oscillator (TVB's ``SupHopf``):

    $$
    \begin{aligned}
    \dot x &= (a - x^2 - y^2)\, x - \omega\, y + c_0, \\
    \dot y &= (a - x^2 - y^2)\, y + \omega\, x + c_1.
    \end{aligned}
    $$

    For $a < 0$ the origin is a stable focus (damped oscillations); for $a > 0$ every
    trajectory except the origin converges to the limit cycle of radius $\sqrt a$, run
    at angular frequency $\omega$ (rad/ms). Both states are coupled (two coupling inputs):
    $c_0$, built from ``x``, is added to $\dot x$ and $c_1$, built from ``y``, to
    $\dot y$. With ``Linear`` coupling this is TVB's additive coupling; ``Difference``
    gives the diffusive form $\sum_j W_{ij}(x_j - x_i)$ of Deco et al. (2017).

    **Arguments** (defaults as TVB 2.10): ``a = -0.5`` bifurcation parameter,
    ``omega = 1.0`` angular frequency (rad/ms). ``initial_x = 0.1``, ``initial_y = 0.0``:
    the constant state returned by ``initial_state``, slightly off the origin so that
    an uncoupled node with $a > 0$ leaves the unstable equilibrium.

    **References**: Kuznetsov (2013), *Elements of applied bifurcation theory*, Springer;
    Deco, Kringelbach, Jirsa, Ritter (2017), *The dynamics of resting fluctuations in the
    brain: metastability and its dynamical cortical core*, Sci. Rep. 7:3095.
    """

    a: Param = -0.5
    omega: Param = 1.0
    initial_x: Param = 0.1
    initial_y: Param = 0.0
    coupled_variables: tuple[str, ...] = eqx.field(default=("x", "y"), static=True)

    state_names: ClassVar[tuple[str, ...]] = ("x", "y")
    state_bounds: ClassVar[dict[str, tuple[float, float]]] = {}
    n_coupling_inputs: ClassVar[int] = 2

    def vector_field(self, t: Scalar, y: State, c: CouplingInput) -> State:
        x, v = y[0], y[1]
        growth = self.a - x * x - v * v
        dx = growth * x - self.omega * v + c[0]
        dv = growth * v + self.omega * x + c[1]
        return jnp.stack([dx, dv])

    def initial_state(self, n_nodes: int) -> State:
        return constant_state((self.initial_x, self.initial_y), n_nodes)
