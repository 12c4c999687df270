"""Jansen-Rit neural mass (cortical column of pyramidal cells and interneurons)."""

from typing import ClassVar

import equinox as eqx
import jax.numpy as jnp

from .._custom_types import CouplingInput, Param, Scalar, State
from .._functions import logistic
from ._base import AbstractDynamics


class JansenRit(AbstractDynamics):
    r"""Jansen-Rit model of a cortical column (TVB's ``JansenRit``): pyramidal cells
    ($y_0$), excitatory ($y_1$) and inhibitory ($y_2$) interneuron post-synaptic
    potentials (mV), and their derivatives $y_3, y_4, y_5$:

    $$
    \begin{aligned}
    S(v) &= \frac{2\nu_{max}}{1 + \exp\big(r (v_0 - v)\big)}, \\
    \dot y_0 &= y_3, \qquad \dot y_1 = y_4, \qquad \dot y_2 = y_5, \\
    \dot y_3 &= A a\, S(y_1 - y_2) - 2 a\, y_3 - a^2 y_0, \\
    \dot y_4 &= A a \big(\mu + a_2 J\, S(a_1 J y_0) + c_0\big) - 2 a\, y_4 - a^2 y_1, \\
    \dot y_5 &= B b\, a_4 J\, S(a_3 J y_0) - 2 b\, y_5 - b^2 y_2.
    \end{aligned}
    $$

    The coupled variables are ``y1`` and ``y2``, but the model reads **one** coupling
    input $c_0$ (a firing rate, 1/ms), added to the external input $\mu$ of the
    excitatory interneurons. Pair it with ``SigmoidalJansenRit``, which turns the delayed
    $y_1 - y_2$ of each source into a rate and returns that single row.

    **Arguments** (defaults as TVB 2.10; time in ms): ``A = 3.25`` mV and ``B = 22.0`` mV
    maximal excitatory / inhibitory PSP amplitudes; ``a = 0.1`` and ``b = 0.05`` 1/ms
    inverse synaptic time constants; ``v0 = 5.52`` mV firing threshold,
    ``nu_max = 0.0025`` 1/ms maximal firing rate, ``r = 0.56`` 1/mV sigmoid steepness;
    ``J = 135.0`` average number of synapses, ``a_1 = 1.0``, ``a_2 = 0.8``, ``a_3 = 0.25``,
    ``a_4 = 0.25`` connectivity fractions; ``mu = 0.22`` 1/ms mean input rate. (TVB's
    ``p_min`` and ``p_max`` do not enter the equations and are not fields.)
    ``initial_state`` is all zeros (every PSP at rest); the input $\mu$ drives the node
    from there to its attractor.

    **Reference**: Jansen & Rit (1995), *Electroencephalogram and visual evoked potential
    generation in a mathematical model of coupled cortical columns*, Biol. Cybern.
    73:357-366.
    """

    A: Param = 3.25
    B: Param = 22.0
    a: Param = 0.1
    b: Param = 0.05
    v0: Param = 5.52
    nu_max: Param = 0.0025
    r: Param = 0.56
    J: Param = 135.0
    a_1: Param = 1.0
    a_2: Param = 0.8
    a_3: Param = 0.25
    a_4: Param = 0.25
    mu: Param = 0.22
    coupled_variables: tuple[str, ...] = eqx.field(default=("y1", "y2"), static=True)

    state_names: ClassVar[tuple[str, ...]] = ("y0", "y1", "y2", "y3", "y4", "y5")
    state_bounds: ClassVar[dict[str, tuple[float, float]]] = {}
    n_coupling_inputs: ClassVar[int] = 1

    def _sigmoid(self, v):
        return 2.0 * self.nu_max * logistic(self.r * (v - self.v0))

    def vector_field(self, t: Scalar, y: State, c: CouplingInput) -> State:
        y0, y1, y2, y3, y4, y5 = y
        a, b = self.a, self.b
        dy3 = self.A * a * self._sigmoid(y1 - y2) - 2.0 * a * y3 - a * a * y0
        excitatory_input = self.mu + self.a_2 * self.J * self._sigmoid(self.a_1 * self.J * y0)
        dy4 = self.A * a * (excitatory_input + c[0]) - 2.0 * a * y4 - a * a * y1
        dy5 = (
            self.B * b * (self.a_4 * self.J * self._sigmoid(self.a_3 * self.J * y0))
            - 2.0 * b * y5
            - b * b * y2
        )
        return jnp.stack([y3, y4, y5, dy3, dy4, dy5])

    def initial_state(self, n_nodes: int) -> State:
        return jnp.zeros((6, n_nodes))
