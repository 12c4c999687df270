"""Two-population (excitatory-inhibitory) Reduced Wong-Wang neural mass (Deco et al. 2014)."""

from typing import ClassVar

import equinox as eqx
import jax.numpy as jnp

from .._custom_types import CouplingInput, Param, Scalar, State
from .._functions import z_over_one_minus_exp
from ._base import AbstractDynamics, constant_state


def transfer(a, b, d, x):
    r"""The Wong-Wang population transfer function $H(x) = \frac{a x - b}{1 - e^{-d(a x -
    b)}}$ (rate in Hz for input current ``x`` in nA), through the form of
    ``z_over_one_minus_exp`` that is finite at its removable singularity $a x = b$."""
    return z_over_one_minus_exp(d * (a * x - b)) / d


class ReducedWongWangExcInh(AbstractDynamics):
    r"""Reduced Wong-Wang model with an excitatory and an inhibitory population per region
    (Deco et al. 2014; TVB's ``ReducedWongWangExcInh``):

    $$
    \begin{aligned}
    x_E &= w_p J_N S_E - J_i S_I + W_E I_o + G J_N c + I_{ext}, &
    \dot S_E &= -\frac{S_E}{\tau_E} + (1 - S_E)\, \gamma_E H_E(x_E), \\
    x_I &= J_N S_E - S_I + W_I I_o + \lambda G J_N c, &
    \dot S_I &= -\frac{S_I}{\tau_I} + \gamma_I H_I(x_I),
    \end{aligned}
    $$

    with $H_p(x) = (a_p x - b_p) / (1 - \exp(-d_p (a_p x - b_p)))$ the population rate in
    Hz (evaluated through a form finite at its removable singularity), $S_E$ (NMDA) and
    $S_I$ (GABA) synaptic gating variables clipped to $[0, 1]$, and $c$ the coupling input
    built from $S_E$ (TVB's ``cvar = [S_e]``). As in TVB the model scales the coupling by
    its own ``G`` and by $J_N$: with ``DelayedLinear(G=g)`` the long-range current is
    $G\, g\, J_N \sum_j W_{ij} S_{E,j}(t - d_{ij})$. ``J_i`` (the local inhibitory weight)
    is usually set per region by feedback inhibition control (``nd.FeedbackInhibition``),
    which keeps each region's excitatory rate near 3 Hz.

    **Arguments** (names, defaults and units as TVB 2.10; time in ms, currents in nA,
    rates in Hz): ``a_e = 310`` (n/C), ``b_e = 125`` (Hz), ``d_e = 0.16`` (s),
    ``gamma_e = 0.641e-3`` (per ms per Hz: $\gamma_E H_E$ is per ms), ``tau_e = 100`` (ms),
    ``w_p = 1.4`` (recurrent excitation), ``J_N = 0.15`` (nA), ``W_e = 1.0``,
    ``a_i = 615`` (n/C), ``b_i = 177`` (Hz), ``d_i = 0.087`` (s), ``gamma_i = 1e-3``,
    ``tau_i = 10`` (ms), ``J_i = 1.0`` (nA), ``W_i = 0.7``, ``I_o = 0.382`` (nA),
    ``I_ext = 0`` (nA), ``G = 2.0`` (the model's coupling scale), ``lamda = 0`` (how much
    of the long-range input reaches the inhibitory population). Any of them may be a
    ``[nodes]`` array, or a parameterisation (``nd.MapParameter``, ...).
    ``initial_S_e = 0.16``, ``initial_S_i = 0.04``: the constant initial state (close to
    the 3 Hz state of an isolated region under feedback inhibition control).

    **References**: Deco, Ponce-Alvarez, Hagmann, Romani, Mantini, Corbetta (2014), *How
    local excitation-inhibition ratio impacts the whole brain dynamics*, J. Neurosci.
    34(23):7886-7898; Wong & Wang (2006), J. Neurosci. 26(4):1314-1328.
    """

    a_e: Param = 310.0
    b_e: Param = 125.0
    d_e: Param = 0.160
    gamma_e: Param = 0.641 / 1000
    tau_e: Param = 100.0
    w_p: Param = 1.4
    J_N: Param = 0.15
    W_e: Param = 1.0
    a_i: Param = 615.0
    b_i: Param = 177.0
    d_i: Param = 0.087
    gamma_i: Param = 1.0 / 1000
    tau_i: Param = 10.0
    J_i: Param = 1.0
    W_i: Param = 0.7
    I_o: Param = 0.382
    I_ext: Param = 0.0
    G: Param = 2.0
    lamda: Param = 0.0
    initial_S_e: Param = 0.16
    initial_S_i: Param = 0.04
    coupled_variables: tuple[str, ...] = eqx.field(default=("S_e",), static=True)

    state_names: ClassVar[tuple[str, ...]] = ("S_e", "S_i")
    state_bounds: ClassVar[dict[str, tuple[float, float]]] = {
        "S_e": (0.0, 1.0),
        "S_i": (0.0, 1.0),
    }
    n_coupling_inputs: ClassVar[int] = 1

    def vector_field(self, t: Scalar, y: State, c: CouplingInput) -> State:
        S_e, S_i = y[0], y[1]
        long_range = self.G * self.J_N * c[0]
        x_e = self.w_p * self.J_N * S_e - self.J_i * S_i + self.W_e * self.I_o + (
            long_range + self.I_ext)
        x_i = self.J_N * S_e - S_i + self.W_i * self.I_o + self.lamda * long_range
        dS_e = -S_e / self.tau_e + (1.0 - S_e) * self.gamma_e * self.rate_e(x_e)
        dS_i = -S_i / self.tau_i + self.gamma_i * self.rate_i(x_i)
        return jnp.stack([dS_e, dS_i])

    def rate_e(self, x_e):
        """The excitatory rate $H_E(x_E)$ in Hz."""
        return transfer(self.a_e, self.b_e, self.d_e, x_e)

    def rate_i(self, x_i):
        """The inhibitory rate $H_I(x_I)$ in Hz."""
        return transfer(self.a_i, self.b_i, self.d_i, x_i)

    def initial_state(self, n_nodes: int) -> State:
        return constant_state((self.initial_S_e, self.initial_S_i), n_nodes)
