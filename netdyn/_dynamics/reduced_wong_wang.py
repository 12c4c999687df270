"""Reduced Wong-Wang neural mass (Deco et al. 2013)."""

from typing import ClassVar

import equinox as eqx

from .._custom_types import CouplingInput, Param, Scalar, State
from .._functions import z_over_one_minus_exp
from ._base import AbstractDynamics, constant_state


class ReducedWongWang(AbstractDynamics):
    r"""Reduced Wong-Wang model of an excitatory population (Deco et al. 2013).

    $$
    \begin{aligned}
    x &= w J_N S + I_o + J_N c, \\
    H(x) &= \frac{a x - b}{1 - \exp(-d (a x - b))}, \\
    \dot S &= -\frac{S}{\tau_s} + (1 - S)\, H(x)\, \gamma,
    \end{aligned}
    $$

    with ``S`` clipped to ``[0, 1]``. ``H`` has a removable singularity at $a x = b$
    ($H \to 1/d$); it is evaluated through a series there, so value and gradient are
    finite in float32 and float64. Defaults and units follow TVB's ``ReducedWongWang``
    (tvb-library 2.10, as tvboptim): time in ms, ``a`` and ``b`` scaled so that ``H`` is in
    kHz (spikes per ms), hence a dimensionless ``gamma = 0.641`` with ``tau_s = 100`` ms.
    One coupling input ``c``, built from ``S``.

    **References**: Deco, Ponce-Alvarez, Mantini, Romani, Hagmann, Corbetta (2013),
    *Resting-state functional connectivity emerges from structurally and dynamically
    shaped slow linear fluctuations*, J. Neurosci. 33(27):11239-11252; Wong & Wang (2006),
    J. Neurosci. 26(4):1314-1328.
    """

    a: Param = 0.270
    b: Param = 0.108
    d: Param = 154.0
    gamma: Param = 0.641
    tau_s: Param = 100.0
    w: Param = 0.6
    J_N: Param = 0.2609
    I_o: Param = 0.33
    initial_S: Param = 0.3
    coupled_variables: tuple[str, ...] = eqx.field(default=("S",), static=True)

    state_names: ClassVar[tuple[str, ...]] = ("S",)
    state_bounds: ClassVar[dict[str, tuple[float, float]]] = {"S": (0.0, 1.0)}
    n_coupling_inputs: ClassVar[int] = 1

    def vector_field(self, t: Scalar, y: State, c: CouplingInput) -> State:
        S = y[0]
        x = self.w * self.J_N * S + self.I_o + self.J_N * c[0]
        u = self.a * x - self.b
        # H = u / (1 - exp(-d u)) = g(d u) / d, through a form finite at u = 0 (a 0/0
        # that gives NaN gradients near the operating point in float32).
        H = z_over_one_minus_exp(self.d * u) / self.d
        dS = -S / self.tau_s + (1.0 - S) * H * self.gamma
        return dS[None]

    def initial_state(self, n_nodes: int) -> State:
        return constant_state((self.initial_S,), n_nodes)
