"""Montbrio-Pazo-Roxin mean field of quadratic integrate-and-fire neurons."""

import math
from typing import ClassVar

import equinox as eqx
import jax.numpy as jnp

from .._custom_types import CouplingInput, Param, Scalar, State
from ._base import AbstractDynamics, constant_state


class MontbrioPazoRoxin(AbstractDynamics):
    r"""Exact mean field of an infinite population of all-to-all coupled quadratic
    integrate-and-fire neurons with Lorentzian-distributed excitabilities (Montbrió, Pazó
    & Roxin 2015), as TVB's ``MontbrioPazoRoxin``: firing rate $r$ and mean membrane
    potential $V$,

    $$
    \begin{aligned}
    \dot r &= \frac{1}{\tau}\Big(\frac{\Delta}{\pi \tau} + 2 V r\Big), \\
    \dot V &= \frac{1}{\tau}\big(V^2 - \pi^2 \tau^2 r^2 + \eta + J \tau r + I
              + c_r c_0 + c_v c_1\big),
    \end{aligned}
    $$

    with $r$ clipped to $[0, \infty)$. Both states are coupled (two coupling inputs):
    $c_0$ is built from $r$ and $c_1$ from $V$, and both enter $\dot V$ only, weighted
    by $c_r$ and $c_v$.

    **Arguments** (defaults as TVB 2.10; time in ms): ``tau = 1.0`` characteristic time,
    ``I = 0.0`` external current, ``Delta = 1.0`` half-width of the excitability
    distribution, ``J = 15.0`` mean synaptic weight, ``eta = -5.0`` mean excitability,
    ``cr = 1.0`` and ``cv = 0.0`` weights of the coupling through $r$ and $V$. (TVB's
    ``Gamma`` does not enter its equations and is not a field.) ``initial_r = 0.1``,
    ``initial_V = -2.0``: the constant state returned by ``initial_state``, next to the
    stable low-activity equilibrium ($r \approx 0.081$, $V \approx -1.96$) of the
    defaults, which also have a high-activity focus near $r \approx 1.03$,
    $V \approx -0.154$.

    **Reference**: Montbrió, Pazó, Roxin (2015), *Macroscopic description for networks
    of spiking neurons*, Phys. Rev. X 5(2):021028.
    """

    tau: Param = 1.0
    I: Param = 0.0  # noqa: E741  (TVB's name)
    Delta: Param = 1.0
    J: Param = 15.0
    eta: Param = -5.0
    cr: Param = 1.0
    cv: Param = 0.0
    initial_r: Param = 0.1
    initial_V: Param = -2.0
    coupled_variables: tuple[str, ...] = eqx.field(default=("r", "V"), static=True)

    state_names: ClassVar[tuple[str, ...]] = ("r", "V")
    state_bounds: ClassVar[dict[str, tuple[float, float]]] = {"r": (0.0, math.inf)}
    n_coupling_inputs: ClassVar[int] = 2

    def vector_field(self, t: Scalar, y: State, c: CouplingInput) -> State:
        r, V = y[0], y[1]
        tau = self.tau
        dr = (self.Delta / (math.pi * tau) + 2.0 * V * r) / tau
        dV = (
            V * V
            - math.pi**2 * tau * tau * r * r
            + self.eta
            + self.J * tau * r
            + self.I
            + self.cr * c[0]
            + self.cv * c[1]
        ) / tau
        return jnp.stack([dr, dV])

    def initial_state(self, n_nodes: int) -> State:
        return constant_state((self.initial_r, self.initial_V), n_nodes)
