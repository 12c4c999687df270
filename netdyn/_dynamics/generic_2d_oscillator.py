"""Generic two-dimensional oscillator (FitzHugh-Nagumo-like), as in TVB."""

from typing import ClassVar

import equinox as eqx
import jax.numpy as jnp

from .._custom_types import CouplingInput, Param, Scalar, State
from ._base import AbstractDynamics, constant_state


class Generic2dOscillator(AbstractDynamics):
    r"""Generic two-dimensional oscillator of TVB (``Generic2dOscillator``): a cubic
    nullcline for the fast variable $V$ and a configurable quadratic one for the slow
    variable $W$,

    $$
    \begin{aligned}
    \dot V &= d\,\tau\,\big(\alpha W - f V^3 + e V^2 + g V + \gamma I + \gamma c_0\big), \\
    \dot W &= \frac{d}{\tau}\,\big(a + b V + c V^2 - \beta W\big).
    \end{aligned}
    $$

    One coupling input $c_0$, built from $V$, enters $\dot V$ scaled by $\gamma$ (which
    scales the external current $I$ too). With the defaults the node is excitable
    (FitzHugh-Nagumo-like); ``a = 2`` gives a limit cycle.

    **Arguments** (defaults as TVB 2.10, all dimensionless, ``d`` acting as the inverse
    time scale in 1/ms): ``tau = 1.0``, ``I = 0.0``, ``a = -2.0``, ``b = -10.0``,
    ``c = 0.0``, ``d = 0.02``, ``e = 3.0``, ``f = 1.0``, ``g = 0.0``, ``alpha = 1.0``,
    ``beta = 1.0``, ``gamma = 1.0``. ``initial_V = 0.0``, ``initial_W = 0.0``: the
    constant state returned by ``initial_state`` (the origin; with the defaults the
    equilibrium is near $V \approx -0.189$, $W \approx -0.113$).

    **References**: Sanz-Leon, Knock, Spiegler, Jirsa (2015), *Mathematical framework for
    large-scale brain network modeling in The Virtual Brain*, NeuroImage 111:385-430;
    FitzHugh (1961), *Impulses and physiological states in theoretical models of nerve
    membrane*, Biophys. J. 1:445-466.
    """

    tau: Param = 1.0
    I: Param = 0.0  # noqa: E741  (TVB's name)
    a: Param = -2.0
    b: Param = -10.0
    c: Param = 0.0
    d: Param = 0.02
    e: Param = 3.0
    f: Param = 1.0
    g: Param = 0.0
    alpha: Param = 1.0
    beta: Param = 1.0
    gamma: Param = 1.0
    initial_V: Param = 0.0
    initial_W: Param = 0.0
    coupled_variables: tuple[str, ...] = eqx.field(default=("V",), static=True)

    state_names: ClassVar[tuple[str, ...]] = ("V", "W")
    state_bounds: ClassVar[dict[str, tuple[float, float]]] = {}
    n_coupling_inputs: ClassVar[int] = 1

    def vector_field(self, t: Scalar, y: State, c: CouplingInput) -> State:
        V, W = y[0], y[1]
        V2 = V * V
        dV = (
            self.d
            * self.tau
            * (
                self.alpha * W
                - self.f * V2 * V
                + self.e * V2
                + self.g * V
                + self.gamma * self.I
                + self.gamma * c[0]
            )
        )
        dW = self.d * (self.a + self.b * V + self.c * V2 - self.beta * W) / self.tau
        return jnp.stack([dV, dW])

    def initial_state(self, n_nodes: int) -> State:
        return constant_state((self.initial_V, self.initial_W), n_nodes)
