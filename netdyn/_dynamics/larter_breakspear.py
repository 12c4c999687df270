"""Larter-Breakspear conductance-based neural mass (Breakspear, Terry & Friston 2003), as in
TVB."""

from typing import ClassVar

import equinox as eqx
import jax.numpy as jnp

from .._custom_types import CouplingInput, Param, Scalar, State
from ._base import AbstractDynamics, constant_state


def _gate(x, threshold, width):
    r"""The fraction of open channels (or the normalised rate)
    $\tfrac12 \big(1 + \tanh((x - T) / \delta)\big)$."""
    return 0.5 * (1.0 + jnp.tanh((x - threshold) / width))


class LarterBreakspear(AbstractDynamics):
    r"""Larter-Breakspear model (TVB's ``LarterBreakspear``): a Morris-Lecar-type
    conductance-based mean field of a cortical column (Larter et al. 1999; Breakspear,
    Terry & Friston 2003), with the mean membrane potential $V$ of the pyramidal cells,
    the fraction $W$ of open potassium channels and the mean membrane potential $Z$ of
    the inhibitory interneurons. The voltage-gated fractions of open channels and the
    mean firing rates are

    $$
    \begin{aligned}
    m_{ion} &= \tfrac12 \Big(1 + \tanh\frac{V - T_{ion}}{\delta_{ion}}\Big)
              \quad (ion = Ca, Na, K), \\
    Q_V &= \tfrac12 Q_{V,max} \Big(1 + \tanh\frac{V - V_T}{\delta_V}\Big), \qquad
    Q_Z = \tfrac12 Q_{Z,max} \Big(1 + \tanh\frac{Z - Z_T}{\delta_Z}\Big),
    \end{aligned}
    $$

    and, with the time scale $s$ (``t_scale``),

    $$
    \begin{aligned}
    \dot V / s &= -\big(g_{Ca} + r_{NMDA}\, a_{ee} [(1 - C) Q_V + C c_0]\big)\,
                  m_{Ca} (V - V_{Ca})
                  - g_K W (V - V_K) - g_L (V - V_L) \\
               &\quad - \big(g_{Na} m_{Na} + a_{ee} [(1 - C) Q_V + C c_0]\big)\,
                  (V - V_{Na}) - a_{ie} Z Q_Z + a_{ne} I_{ext}, \\
    \dot W / s &= \phi\, \frac{m_K - W}{\tau_K}, \\
    \dot Z / s &= b\, \big(a_{ni} I_{ext} + a_{ei} V Q_V\big).
    \end{aligned}
    $$

    The excitatory synapses (AMPA, and NMDA in the ratio $r_{NMDA}$, on the calcium
    channels) see a mix of the column's own firing rate $Q_V$, weight $1 - C$, and of the
    rate its afferents send, $c_0 = \langle Q_V \rangle$, weight $C$. Only $V$ is
    coupled (``cvar = [V]``, one coupling input), and TVB passes $c_0$ to the equations
    as it comes from the coupling function: **the coupling must deliver firing rates**.
    TVB's usual wiring (its Larter-Breakspear demos) is ``HyperbolicTangent(a = 0.5
    QV_max, midpoint = VT, sigma = d_V)`` on weights normalised by their in-strength
    (rows summing to 1), which makes $c_0$ the weighted mean of $Q_V(V_j(t - d_{ij}))$
    over the afferents; in netdyn that is ``nd.DelayedHyperbolicTangent(G=0.5 * QV_max,
    midpoint=VT, sigma=d_V)`` (``nd.HyperbolicTangent`` without delays), with which the
    TVB fixtures were made. ``nd.DelayedLinear`` would feed raw potentials in place of
    rates. No state bounds (TVB clips none). Noise acts on ``V``, ``W`` and ``Z`` (TVB's
    default: every state variable).

    With the defaults ($\delta_V = 0.65 > 0.59$) an isolated column is chaotic
    (Breakspear et al. 2003: a fixed point for $\delta_V < 0.55$, limit cycles up to
    0.59). Heun needs $\Delta t \le 0.05$ ms: over 40 ms of a delayed 5-node network
    it stays within 9e-4 of a run at $\Delta t / 10$ (measured; 0.1 ms gives 2e-3, and
    TVB's demos' 0.2 ms, stable but coarse, 9e-3). On the chaotic attractor any two
    step sizes separate over hundreds of ms (a 1e-10 perturbation grows to about 1e-5
    in 400 ms), so only statistics of long runs are comparable.

    **Arguments** (names and defaults as TVB 2.10; everything dimensionless and
    normalised, time in ms as in TVB): conductances ``gCa = 1.1``, ``gK = 2.0``,
    ``gL = 0.5``, ``gNa = 6.7``; Nernst potentials ``VCa = 1.0``, ``VK = -0.7``,
    ``VL = -0.5``, ``VNa = 0.53``; channel thresholds ``TCa = -0.01``, ``TK = 0.0``,
    ``TNa = 0.3`` and their spreads ``d_Ca = 0.15``, ``d_K = 0.3``, ``d_Na = 0.15``;
    ``phi = 0.7`` (temperature scaling of the K relaxation), ``tau_K = 1.0`` (ms, K
    relaxation time); synaptic strengths ``aee = 0.4`` (excitatory to excitatory),
    ``aei = 2.0`` (excitatory to inhibitory), ``aie = 2.0`` (inhibitory to excitatory),
    ``ane = 1.0`` and ``ani = 0.4`` (non-specific input to excitatory / inhibitory);
    ``rNMDA = 0.25`` (ratio of NMDA to AMPA receptors); ``Iext = 0.3`` (subcortical
    input); ``b = 0.1`` (time-scale factor of the inhibitory population); ``C = 0.1``
    (share of the afferent input in the excitatory synapses); firing thresholds
    ``VT = 0.0``, ``ZT = 0.0`` and their spreads ``d_V = 0.65``, ``d_Z = 0.7``; maximal
    firing rates ``QV_max = 1.0``, ``QZ_max = 1.0`` (kHz in TVB's docs); ``t_scale =
    1.0`` (time-scale factor). Any of them may be a ``[nodes]`` array, or a
    parameterisation (``nd.MapParameter``, ...). ``initial_V = 0.0``, ``initial_W =
    0.0``, ``initial_Z = 0.0``: the constant initial state.

    **References**: Breakspear, Terry & Friston (2003), *Modulation of excitatory synaptic
    coupling facilitates synchronization and complex dynamics in a biophysical model of
    neuronal dynamics*, Network: Comput. Neural Syst. 14:703-732; Larter, Speelman &
    Worth (1999), *A coupled ordinary differential equation lattice model for the
    simulation of epileptic seizures*, Chaos 9(3):795-804; Honey, Kötter, Breakspear &
    Sporns (2007), *Network structure of cerebral cortex shapes functional connectivity
    on multiple time scales*, PNAS 104:10240-10245.
    """

    gCa: Param = 1.1
    gK: Param = 2.0
    gL: Param = 0.5
    phi: Param = 0.7
    gNa: Param = 6.7
    TK: Param = 0.0
    TCa: Param = -0.01
    TNa: Param = 0.3
    VCa: Param = 1.0
    VK: Param = -0.7
    VL: Param = -0.5
    VNa: Param = 0.53
    d_K: Param = 0.3
    tau_K: Param = 1.0
    d_Na: Param = 0.15
    d_Ca: Param = 0.15
    aei: Param = 2.0
    aie: Param = 2.0
    b: Param = 0.1
    C: Param = 0.1
    ane: Param = 1.0
    ani: Param = 0.4
    aee: Param = 0.4
    Iext: Param = 0.3
    rNMDA: Param = 0.25
    VT: Param = 0.0
    d_V: Param = 0.65
    ZT: Param = 0.0
    d_Z: Param = 0.7
    QV_max: Param = 1.0
    QZ_max: Param = 1.0
    t_scale: Param = 1.0
    initial_V: Param = 0.0
    initial_W: Param = 0.0
    initial_Z: Param = 0.0
    coupled_variables: tuple[str, ...] = eqx.field(default=("V",), static=True)

    state_names: ClassVar[tuple[str, ...]] = ("V", "W", "Z")
    state_bounds: ClassVar[dict[str, tuple[float, float]]] = {}
    n_coupling_inputs: ClassVar[int] = 1

    def vector_field(self, t: Scalar, y: State, c: CouplingInput) -> State:
        V, W, Z = y[0], y[1], y[2]
        m_Ca = _gate(V, self.TCa, self.d_Ca)
        m_Na = _gate(V, self.TNa, self.d_Na)
        m_K = _gate(V, self.TK, self.d_K)
        QV = self.QV_max * _gate(V, self.VT, self.d_V)
        QZ = self.QZ_max * _gate(Z, self.ZT, self.d_Z)
        # the excitatory drive: the column's own rate and its afferents' (c_0)
        drive = (1.0 - self.C) * QV + self.C * c[0]
        dV = (
            -(self.gCa + self.rNMDA * self.aee * drive) * m_Ca * (V - self.VCa)
            - self.gK * W * (V - self.VK)
            - self.gL * (V - self.VL)
            - (self.gNa * m_Na + self.aee * drive) * (V - self.VNa)
            - self.aie * Z * QZ
            + self.ane * self.Iext
        )
        dW = self.phi * (m_K - W) / self.tau_K
        dZ = self.b * (self.ani * self.Iext + self.aei * V * QV)
        return jnp.stack([self.t_scale * dV, self.t_scale * dW, self.t_scale * dZ])

    def initial_state(self, n_nodes: int) -> State:
        return constant_state((self.initial_V, self.initial_W, self.initial_Z), n_nodes)
