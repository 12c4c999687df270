"""Wilson-Cowan excitatory-inhibitory rate model (Wilson & Cowan 1972), as in TVB."""

from typing import ClassVar

import equinox as eqx
import jax.numpy as jnp

from .._custom_types import CouplingInput, Param, Scalar, State
from .._functions import logistic
from ._base import AbstractDynamics, constant_state


class WilsonCowan(AbstractDynamics):
    r"""Wilson-Cowan model: the mean activities of an excitatory ($E$) and an inhibitory
    ($I$) population per region (Wilson & Cowan 1972, eqs. 11-12; TVB's ``WilsonCowan``):

    $$
    \begin{aligned}
    x_E &= \alpha_E\,(c_{ee} E - c_{ei} I + P - \theta_E + c_0), &
    \tau_E \dot E &= -E + (k_E - r_E E)\, \mathcal S_E(x_E), \\
    x_I &= \alpha_I\,(c_{ie} E - c_{ii} I + Q - \theta_I), &
    \tau_I \dot I &= -I + (k_I - r_I I)\, \mathcal S_I(x_I),
    \end{aligned}
    $$

    with the logistic response $\mathcal S_p(x) = c_p\,\big(\sigma(a_p (x - b_p)) -
    \sigma(-a_p b_p)\big)$, $\sigma(z) = 1 / (1 + e^{-z})$, shifted so that
    $\mathcal S_p(0) = 0$ (``shift_sigmoid = True``, TVB's default: $E = I = 0$ is then
    the resting state without input), or $\mathcal S_p(x) = c_p\, \sigma(a_p (x - b_p))$
    (``shift_sigmoid = False``). $k_p$ bounds the response and $r_p$ is the refractory
    term. With the defaults an isolated region is bistable: besides the resting state
    there is an active state at $E \approx 0.46$, $I \approx 0.24$.

    Both states are coupled, as in TVB (``cvar = [E, I]``, two coupling inputs), but
    only $c_0$, built from $E$, enters the model, inside $x_E$ (scaled by $\alpha_E$);
    $c_1$, built from $I$, is unused (TVB's docstring adds the coupling to $x_I$ too; its
    code does not). Noise acts on both ``E`` and ``I`` (as in TVB). No state bounds (TVB
    clips none). The time scales are $\tau_E, \tau_I = 10$ ms: Heun at $\Delta t = 0.1$
    ms is ample.

    **Arguments** (names and defaults as TVB 2.10; time in ms, everything else
    dimensionless): coupling coefficients ``c_ee = 12.0`` (E to E), ``c_ei = 4.0`` (I to
    E), ``c_ie = 13.0`` (E to I), ``c_ii = 11.0`` (I to I); time constants ``tau_e =
    10.0``, ``tau_i = 10.0`` (ms); response slopes ``a_e = 1.2``, ``a_i = 1.0``, positions
    of their maximum slope ``b_e = 2.8``, ``b_i = 4.0``, amplitudes ``c_e = 1.0``, ``c_i =
    1.0``; thresholds ``theta_e = 0.0``, ``theta_i = 0.0``; refractory terms ``r_e =
    1.0``, ``r_i = 1.0``; maximal responses ``k_e = 1.0``, ``k_i = 1.0``; external inputs
    ``P = 0.0`` (to E), ``Q = 0.0`` (to I); input gains ``alpha_e = 1.0``, ``alpha_i =
    1.0``. Any of them may be a ``[nodes]`` array, or a parameterisation
    (``nd.MapParameter``, ...). ``shift_sigmoid = True`` (static): subtract
    $\sigma(-a_p b_p)$. ``initial_E = 0.0``, ``initial_I = 0.0``: the constant initial
    state (the resting state).

    **References**: Wilson & Cowan (1972), *Excitatory and inhibitory interactions in
    localized populations of model neurons*, Biophys. J. 12(1):1-24; Wilson & Cowan
    (1973), *A mathematical theory of the functional dynamics of cortical and thalamic
    nervous tissue*, Kybernetik 13(2):55-80.
    """

    c_ee: Param = 12.0
    c_ei: Param = 4.0
    c_ie: Param = 13.0
    c_ii: Param = 11.0
    tau_e: Param = 10.0
    tau_i: Param = 10.0
    a_e: Param = 1.2
    b_e: Param = 2.8
    c_e: Param = 1.0
    theta_e: Param = 0.0
    a_i: Param = 1.0
    b_i: Param = 4.0
    theta_i: Param = 0.0
    c_i: Param = 1.0
    r_e: Param = 1.0
    r_i: Param = 1.0
    k_e: Param = 1.0
    k_i: Param = 1.0
    P: Param = 0.0
    Q: Param = 0.0
    alpha_e: Param = 1.0
    alpha_i: Param = 1.0
    initial_E: Param = 0.0
    initial_I: Param = 0.0
    shift_sigmoid: bool = eqx.field(default=True, static=True)
    coupled_variables: tuple[str, ...] = eqx.field(default=("E", "I"), static=True)

    state_names: ClassVar[tuple[str, ...]] = ("E", "I")
    state_bounds: ClassVar[dict[str, tuple[float, float]]] = {}
    n_coupling_inputs: ClassVar[int] = 2

    def vector_field(self, t: Scalar, y: State, c: CouplingInput) -> State:
        E, I = y[0], y[1]  # noqa: E741  (TVB's name)
        x_e = self.alpha_e * (self.c_ee * E - self.c_ei * I + self.P - self.theta_e + c[0])
        x_i = self.alpha_i * (self.c_ie * E - self.c_ii * I + self.Q - self.theta_i)
        s_e = self.response(self.a_e, self.b_e, self.c_e, x_e)
        s_i = self.response(self.a_i, self.b_i, self.c_i, x_i)
        dE = (-E + (self.k_e - self.r_e * E) * s_e) / self.tau_e
        dI = (-I + (self.k_i - self.r_i * I) * s_i) / self.tau_i
        return jnp.stack([dE, dI])

    def response(self, a, b, amplitude, x):
        r"""The population response $\mathcal S(x)$ of slope ``a``, position ``b`` and
        amplitude ``amplitude`` (shifted to $\mathcal S(0) = 0$ if ``shift_sigmoid``)."""
        s = logistic(a * (x - b))
        if self.shift_sigmoid:
            s = s - logistic(-a * b)
        return amplitude * s

    def initial_state(self, n_nodes: int) -> State:
        return constant_state((self.initial_E, self.initial_I), n_nodes)
