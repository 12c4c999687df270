"""Coombes-Byrne next-generation neural mass with instantaneous synapses, as in TVB."""

import math
from typing import ClassVar

import equinox as eqx
import jax.numpy as jnp

from .._custom_types import CouplingInput, Param, Scalar, State
from ._base import AbstractDynamics, constant_state


class CoombesByrne2D(AbstractDynamics):
    r"""Next-generation neural mass of Coombes & Byrne (2019) with an instantaneous
    synapse (TVB's ``CoombesByrne2D``): the exact (Ott-Antonsen) mean field of an
    infinite population of quadratic integrate-and-fire (theta) neurons with
    Lorentzian-distributed excitabilities, written in the population firing rate $r$ and
    mean membrane potential $V$. The Kuramoto order parameter $Z$ of the theta phases,
    the population's synchrony, follows from them by the conformal map
    $Z = (1 - W^*) / (1 + W^*)$ with $W = \pi r + i V$. The synaptic conductance is
    proportional to the rate, $g = \kappa \pi r$ (no synaptic dynamics):

    $$
    \begin{aligned}
    \dot r &= \frac{\Delta}{\pi} + 2 V r - \kappa \pi r^2, \\
    \dot V &= V^2 - \pi^2 r^2 + \eta + \kappa \pi r\,(v_{syn} - V) + c_0,
    \end{aligned}
    $$

    with $r$ clipped to $[0, \infty)$ (TVB's ``state_variable_boundaries``). The shunting
    term $-g r = -\kappa \pi r^2$ is TVB's code (its docstring writes $-g r^2$). Both states
    are coupled, as in TVB (``cvar = [r, V]``, two coupling inputs), but only $c_0$,
    built from $r$, enters the model, added to $\dot V$; $c_1$, built from $V$, is unused.
    Use ``nd.DelayedLinear`` (TVB's ``Linear``, its default coupling, with which the
    fixtures were made): $c_0 = G \sum_j W_{ij} r_j(t - d_{ij})$, the delayed rates of the
    afferent regions, as an input current. Noise acts on both ``r`` and ``V`` (TVB's
    default: every state variable).

    Time is dimensionless in the paper (the membrane time constant is 1); netdyn reads it
    as ms, as TVB does. With the defaults an isolated region relaxes, through a damped
    oscillation, to a stable focus at $r \approx 0.185$, $V \approx -0.571$. Heun needs
    $\Delta t \le 0.005$ ms: over 100 ms of a delayed 5-node network from a random start
    ($r \in [0.05, 1]$, $V \in [-2, 1]$) it stays within 6e-4 of a run at $\Delta t / 10$
    (measured; 0.01 ms gives 1.5e-3 and 0.02 ms 5.9e-3, the error coming from the fast
    initial transient of $V$).

    **Arguments** (names and defaults as TVB 2.10; all dimensionless): ``Delta = 1.0``
    ($\Delta$, half-width of the Lorentzian distribution of excitabilities), ``v_syn =
    -4.0`` (synaptic reversal potential), ``k = 1.0`` ($\kappa$, local synaptic coupling
    strength), ``eta = 2.0`` ($\eta$, centre of the excitability distribution). Any of
    them may be a ``[nodes]`` array, or a parameterisation (``nd.MapParameter``, ...).
    ``initial_r = 0.185``, ``initial_V = -0.571``: the constant initial state (next to the
    stable focus of the defaults).

    **References**: Coombes & Byrne (2019), *Next generation neural mass models*, in
    Corinto & Torcini (eds.), *Nonlinear Dynamics in Computational Neuroscience*, PoliTO
    Springer Series, pp. 1-16; Montbrió, Pazó & Roxin (2015), *Macroscopic description
    for networks of spiking neurons*, Phys. Rev. X 5:021028.
    """

    Delta: Param = 1.0
    v_syn: Param = -4.0
    k: Param = 1.0
    eta: Param = 2.0
    initial_r: Param = 0.185
    initial_V: Param = -0.571
    coupled_variables: tuple[str, ...] = eqx.field(default=("r", "V"), static=True)

    state_names: ClassVar[tuple[str, ...]] = ("r", "V")
    state_bounds: ClassVar[dict[str, tuple[float, float]]] = {"r": (0.0, math.inf)}
    n_coupling_inputs: ClassVar[int] = 2

    def vector_field(self, t: Scalar, y: State, c: CouplingInput) -> State:
        r, V = y[0], y[1]
        g = self.k * math.pi * r  # the synaptic conductance
        dr = self.Delta / math.pi + 2.0 * V * r - g * r
        dV = V * V - math.pi**2 * r * r + self.eta + g * (self.v_syn - V) + c[0]
        return jnp.stack([dr, dV])

    def initial_state(self, n_nodes: int) -> State:
        return constant_state((self.initial_r, self.initial_V), n_nodes)
