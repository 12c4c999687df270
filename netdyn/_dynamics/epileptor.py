"""Epileptor (Jirsa et al. 2014): the six-variable model of seizure dynamics, as in TVB."""

from typing import ClassVar

import equinox as eqx
import jax.numpy as jnp

from .._custom_types import CouplingInput, Param, Scalar, State
from .._functions import logistic
from ._base import AbstractDynamics, constant_state


class Epileptor(AbstractDynamics):
    r"""Epileptor: a phenomenological model of the onset, course and offset of seizures
    (Jirsa et al. 2014; TVB's ``Epileptor``). Two fast subsystems, $(x_1, y_1)$, which
    makes the fast discharges, and $(x_2, y_2)$, the spike-and-wave events, are driven
    by the slow permittivity variable $z$ and linked through the low-pass filter $g$:

    $$
    \begin{aligned}
    \dot x_1 &= t_t\,\big(y_1 - z + I_{ext} + K_{vf}\, c_0 + f_1(x_1, x_2, z)\, x_1\big), \\
    \dot y_1 &= t_t\,\big(c - d\, x_1^2 - y_1\big), \\
    \dot z &= t_t\, r\,\big(h(x_1, z) - z + K_s\, c_0\big), \\
    \dot x_2 &= t_t\,\big(-y_2 + x_2 - x_2^3 + I_{ext2} + b_b\, g - 0.3\,(z - 3.5)
        + K_f\, c_1\big), \\
    \dot y_2 &= t_t\,\big(-y_2 + f_2(x_2)\big) / \tau, \\
    \dot g &= -0.01\, t_t\,\big(g - 0.1\, x_1\big),
    \end{aligned}
    $$

    with

    $$
    f_1 = \begin{cases} -a\, x_1^2 + b\, x_1 & x_1 < 0 \\
        \mathrm{slope} - x_2 + 0.6\,(z - 4)^2 & x_1 \ge 0 \end{cases}, \qquad
    f_2 = \begin{cases} 0 & x_2 < -0.25 \\ a_a\,(x_2 + 0.25) & x_2 \ge -0.25 \end{cases},
    $$

    and $h = 4\,(x_1 - x_0) - 0.1\, z^7\, [z < 0]$ (the paper's linear influence of
    $x_1$ on $z$), or, with ``modification = True``, $h = x_0 + 3 / \big(1 +
    e^{-(x_1 + 0.5)/0.1}\big)$ (the sigmoidal influence of Proix et al. 2014). (TVB's
    docstring writes $0.002\, g$ and conditions the $z^7$ term on $x_1$; its code, which
    this model follows, uses $b_b\, g$ with $b_b = 2$ and the sign of $z$.) Every branch
    is continuous at its threshold (the $f_1 x_1$ and $f_2$ terms vanish there), so
    trajectories and their gradients are finite; the derivatives of the vector field
    jump at $x_1 = 0$ and $x_2 = -0.25$ (as TVB's).

    $x_0$ is the excitability: an isolated node with the other defaults rests for
    $x_0$ below $-4/3 - z_k/4 \approx -2.062$ (its rest state then lies left of the knee
    $x_1 = -4/3$, $z_k = 4.1 - 32/27$, of the slow manifold $\dot x_1 = 0$) and has
    recurrent seizures above it (TVB's default
    $-1.6$ is epileptogenic); it is the parameter inferred per region in the Virtual
    Epileptic Patient workflow. Time is in ms as in TVB (the paper's time unit,
    rescaled by $t_t$); with $r = 3.5 \times 10^{-4}$ the slow variable $z$ has a time
    constant of about 3 s, and seizures last seconds.

    **Coupling** (Proix et al. 2014, "permittivity coupling"): the coupled variables are
    ``x1`` and ``x2`` (TVB's ``cvar = [0, 3]``), giving two coupling inputs, $c_0$ from
    $x_1$ (TVB's ``c_pop1``) and $c_1$ from $x_2$ (``c_pop2``). TVB runs the Epileptor with
    its ``Difference`` coupling; netdyn's ``DelayedDifference(G=a)`` (``Difference``
    without delays) reproduces it: $c_0 = G \sum_j W_{ij}\,\big(x_{1,j}(t - d_{ij}) -
    x_{1,i}(t)\big)$, $c_1$ likewise from $x_2$. $c_0$ enters $\dot z$ scaled by $K_s$
    (the slow permittivity coupling: with $K_s < 0$, as in TVB's demos, a node whose
    neighbours discharge, $x_{1,j} > x_{1,i}$, sees its $z$ pushed down and is recruited;
    $K_s = -K$ of Proix et al.) and $\dot x_1$ scaled by $K_{vf}$ (very fast); $c_1$
    enters $\dot x_2$ scaled by $K_f$ (fast). With the defaults $K_s = K_{vf} = K_f =
    0$ the nodes are uncoupled whatever the coupling; the overall strength is the
    product of the coupling's $G$ and these gains.

    **Noise**: TVB's documented setting (Jirsa et al. 2014) puts noise on ``x2`` and
    ``y2`` only (``nsig = [0, 0, 0, 1e-3, 1e-3, 0]``): ``nd.AdditiveNoise(sigma,
    apply_to=("x2", "y2"))``, with ``sigma = sqrt(2 nsig)``. No state bounds (TVB clips
    none).

    **Time step** (Heun, measured on an isolated seizing node, ``x0 = -1.6`` from the
    default initial state: seizures start at 0.21 s and recur every 1.93 s): runs stay
    finite up to $\Delta t = 0.18$ ms (at 0.2 ms a seizure diverges). Against a run at
    $\Delta t / 10$, the slow variable $z$ stays within $10^{-3}$ over 10 s (five
    seizures) up to $\Delta t \approx 0.016$ ms, and all six states stay within
    $10^{-3}$ over the first second (the onset and the discharges that follow) only up
    to $\Delta t \approx 0.003$ ms: at larger steps the timing of the fast discharges
    drifts. At TVB's usual $\Delta t = 0.05$ ms the seizure onsets agree with the
    $\Delta t / 10$ run to 2 ms over 10 s ($z$ within $8 \times 10^{-3}$); at 0.1 ms the
    seizures come late (by 84 ms per 1.93 s cycle, $z$ off by 0.6). Use 0.05 ms for
    seizure timing, 0.01-0.02 ms where $z$ must be right to $10^{-3}$.

    **Arguments** (names and defaults as TVB 2.10; time in ms, everything else
    dimensionless): ``x0 = -1.6`` excitability (epileptogenicity); ``Iext = 3.1``
    external input to the first population; ``Iext2 = 0.45`` external input to the second
    population; ``a = 1.0``, ``b = 3.0`` cubic and quadratic coefficients of $x_1$;
    ``slope = 0.0`` linear coefficient of $f_1$ for $x_1 \ge 0$; ``tt = 1.0`` time scaling
    of the whole system; ``Kvf = 0.0`` very fast coupling gain (into $x_1$); ``c = 1.0``
    additive coefficient of $y_1$ (the paper's $y_0$); ``d = 5.0`` quadratic coefficient
    of $y_1$; ``r = 0.00035`` time scale of $z$ (the paper's $1/\tau_0$); ``Ks = 0.0`` slow
    permittivity coupling gain (into $z$); ``Kf = 0.0`` fast coupling gain (into $x_2$);
    ``aa = 6.0`` slope of $f_2$; ``bb = 2.0`` gain of $g$ into $x_2$; ``tau = 10.0`` time
    constant of $y_2$ (in units of $1/t_t$). Any of them may be a ``[nodes]`` array, or a
    parameterisation (``nd.MapParameter``, ...). ``modification = False`` (static): the
    sigmoidal $h$ above. TVB's ``s = 4`` does not enter its equations (the 4 is written
    out) and is not a field. ``initial_x1 = -1.5``, ``initial_y1 = -10.25``, ``initial_z =
    3.0``, ``initial_x2 = -0.8``, ``initial_y2 = 0.0``, ``initial_g = -0.15``: the constant
    initial state, close to the resting state of a node with $x_0 = -2.25$ (within TVB's
    ranges for random initial conditions): healthy nodes relax from it to their rest
    state, epileptogenic ones leave it for their first seizure.

    **References**: Jirsa, Stacey, Quilichini, Ivanov, Bernard (2014), *On the nature of
    seizure dynamics*, Brain 137(8):2210-2230; Proix, Bartolomei, Chauvel, Bernard, Jirsa
    (2014), *Permittivity coupling across brain regions determines seizure recruitment in
    partial epilepsy*, J. Neurosci. 34(45):15009-15021.
    """

    x0: Param = -1.6
    Iext: Param = 3.1
    Iext2: Param = 0.45
    a: Param = 1.0
    b: Param = 3.0
    slope: Param = 0.0
    tt: Param = 1.0
    Kvf: Param = 0.0
    c: Param = 1.0
    d: Param = 5.0
    r: Param = 0.00035
    Ks: Param = 0.0
    Kf: Param = 0.0
    aa: Param = 6.0
    bb: Param = 2.0
    tau: Param = 10.0
    initial_x1: Param = -1.5
    initial_y1: Param = -10.25
    initial_z: Param = 3.0
    initial_x2: Param = -0.8
    initial_y2: Param = 0.0
    initial_g: Param = -0.15
    modification: bool = eqx.field(default=False, static=True)
    coupled_variables: tuple[str, ...] = eqx.field(default=("x1", "x2"), static=True)

    state_names: ClassVar[tuple[str, ...]] = ("x1", "y1", "z", "x2", "y2", "g")
    state_bounds: ClassVar[dict[str, tuple[float, float]]] = {}
    n_coupling_inputs: ClassVar[int] = 2

    def vector_field(self, t: Scalar, y: State, c: CouplingInput) -> State:
        x1, y1, z, x2, y2, g = y
        c_pop1, c_pop2 = c[0], c[1]
        # Both branches are polynomials, finite everywhere: a plain where is safe.
        f1 = jnp.where(x1 < 0.0, -self.a * x1**2 + self.b * x1,
                       self.slope - x2 + 0.6 * (z - 4.0) ** 2)
        dx1 = self.tt * (y1 - z + self.Iext + self.Kvf * c_pop1 + f1 * x1)
        dy1 = self.tt * (self.c - self.d * x1**2 - y1)
        if self.modification:
            h = self.x0 + 3.0 * logistic((x1 + 0.5) / 0.1)
        else:
            h = 4.0 * (x1 - self.x0) + jnp.where(z < 0.0, -0.1 * z**7, 0.0)
        dz = self.tt * (self.r * (h - z + self.Ks * c_pop1))
        dx2 = self.tt * (-y2 + x2 - x2**3 + self.Iext2 + self.bb * g - 0.3 * (z - 3.5)
                         + self.Kf * c_pop2)
        f2 = jnp.where(x2 < -0.25, 0.0, self.aa * (x2 + 0.25))
        dy2 = self.tt * ((-y2 + f2) / self.tau)
        dg = self.tt * (-0.01 * (g - 0.1 * x1))
        return jnp.stack(jnp.broadcast_arrays(dx1, dy1, dz, dx2, dy2, dg))

    def initial_state(self, n_nodes: int) -> State:
        values = (self.initial_x1, self.initial_y1, self.initial_z, self.initial_x2,
                  self.initial_y2, self.initial_g)
        return constant_state(values, n_nodes)
