"""BOLD signal as a convolution with a hemodynamic response kernel (TVB's ``Bold``)."""

import math
from typing import Literal

import equinox as eqx
import jax.numpy as jnp
from jaxtyping import Array, Float, Int

from .._custom_types import Param
from ._base import AbstractSingleVariableMonitor
from ._checks import (
    check_single_variable,
    check_warmup,
    single_row,
    to_variables,
    whole_multiple,
)

_State = tuple[Float[Array, "pending nodes"], Int[Array, ""]]


class HrfBold(AbstractSingleVariableMonitor):
    r"""BOLD signal as TVB's ``Bold`` monitor computes it: the neural signal averaged
    over windows of ``interim`` ms, convolved with a hemodynamic response kernel of
    ``hrf_length`` ms, sampled every ``period``.

    The kernel is TVB's default ``FirstOrderVolterra`` (the first-order Volterra kernel of
    the Balloon model, Friston et al. 2000), with $t$ in **seconds**:

    $$
    G(t) = \frac{1}{3}\, e^{-t / (2 \tau_s)}\, \frac{\sin(\omega t)}{\omega},
    \qquad \omega = \sqrt{1/\tau_f - 1/(4 \tau_s^2)}.
    $$

    With $\Delta$ = ``interim``, $L$ = ``hrf_length`` / $\Delta$ and $\bar x_\ell$ the
    mean of the neural signal over the window that ended $\ell$ windows before the sample
    ($\ell = 0$: the window ending at the sample), the sample is

    $$
    y = k_1 V_0 \Big( G\big((L-1)\Delta\big)\,\bar x_0
        + \sum_{\ell=1}^{L-1} G\big((\ell-1)\Delta\big)\,\bar x_\ell - 1 \Big).
    $$

    This is TVB 2.10's ``monitors.Bold.sample`` exactly: the kernel is sampled at
    $t_j = j \Delta$, $j = 0 \dots L-1$, and summed without a $\Delta$ factor; TVB's
    rolled kernel aligns $G(0)$ with the *second* newest window, and the newest window gets
    the last kernel value (wrapped around; $G(20\,\text{s}) \approx 0$). Windows before
    the start hold 0 (TVB) or, with ``fill="initial"``, the initial value of the signal.

    **How it is computed.** TVB stores the last $L$ window means (5000 rows by default)
    and convolves them at each sample. Here each window's contribution is added, as soon
    as the window's steps arrive, to the $E = \lceil L\,\Delta / \text{period} \rceil$
    samples it will enter (20 for the defaults at TR = 1 s), with the kernel value of its
    lag at each of them (the same sum, reordered). The state is ``[E, nodes]`` pending
    samples; each step costs $O(E \cdot \text{nodes})$ and leaves one ``[E]`` weight
    vector as gradient residual, and no buffer is read and written at a moving position
    (a ring buffer of window means made XLA copy its cotangent at every step of the
    backward pass: ~8x slower gradients at the defaults). A short ``period`` makes $E$
    large. At TR = 1 s its gradient is about half as expensive as that of the
    Balloon-Windkessel ``Bold`` monitor (one RK4 step of a 4-state ODE per step:
    ``benchmarks/remat.md``), whose cost does not depend on the period.

    **Arguments**:

    - ``period`` (ms, static): sampling period (TR); a whole number of ``interim``
      periods. Default 2000 ms (TVB).
    - ``variables`` (static): the one state variable averaged (``None`` for one-state
      models).
    - ``warmup`` (ms, static): samples that ``simulate`` discards at the start of a fresh
      run.
    - ``hrf_length`` (ms, static): kernel support, default 20,000 ms (TVB); a whole number
      of ``interim`` periods.
    - ``interim`` (ms, static): averaging window of the stored signal, default 4 ms (TVB's
      ``_stock_sample_rate = 2**-2`` per ms); a whole number of steps.
    - ``fill`` (static): ``"zeros"`` (TVB) or ``"initial"``.
    - ``tau_s`` = 0.8 s, ``tau_f`` = 0.4 s, ``k_1`` = 5.6, ``V_0`` = 0.02: TVB's
      ``FirstOrderVolterra`` defaults (array leaves).

    Sample ``k`` is stamped at ``t0 + (k + 1) * period``, as TVB stamps it (``step * dt``).

    **References**: Friston, Mechelli, Turner, Price (2000), *Nonlinear responses in fMRI:
    the Balloon model, Volterra kernels, and other hemodynamics*, NeuroImage 12:466-477;
    Sanz Leon et al. (2013), *The Virtual Brain: a simulator of primate brain network
    dynamics*, Front. Neuroinform. 7:10.
    """

    period: float = eqx.field(default=2000.0, static=True)
    variables: tuple[str, ...] | None = eqx.field(
        default=None, static=True, converter=to_variables
    )
    warmup: float = eqx.field(default=0.0, static=True)
    hrf_length: float = eqx.field(default=20_000.0, static=True)
    interim: float = eqx.field(default=4.0, static=True)
    fill: Literal["zeros", "initial"] = eqx.field(default="zeros", static=True)
    tau_s: Param = 0.8
    tau_f: Param = 0.4
    k_1: Param = 5.6
    V_0: Param = 0.02

    def __check_init__(self):
        check_single_variable(self)
        check_warmup(self)
        if not (math.isfinite(self.interim) and self.interim > 0):
            raise ValueError(f"HrfBold: interim must be positive, got {self.interim}.")
        whole_multiple("HrfBold period", self.period, "interim periods", self.interim)
        whole_multiple("HrfBold hrf_length", self.hrf_length, "interim periods", self.interim)
        if self.fill not in ("zeros", "initial"):
            raise ValueError(f"HrfBold: fill must be 'zeros' or 'initial', got {self.fill!r}.")

    @property
    def length(self) -> int:
        """$L$: number of kernel samples (window means) in a BOLD sample."""
        return round(self.hrf_length / self.interim)

    @property
    def pending(self) -> int:
        """$E$: number of samples a window enters (rows of the state)."""
        return -(-self.length // self._windows_per_period)

    @property
    def _windows_per_period(self) -> int:
        return round(self.period / self.interim)

    def kernel(self, dtype=float) -> Float[Array, " length"]:
        r"""$G(t_j)$ at $t_j = j\,\Delta$ (seconds), $j = 0 \dots L - 1$."""
        return self._kernel_at(jnp.arange(self.length), dtype)

    def _kernel_at(self, j: Int[Array, "*n"], dtype) -> Float[Array, "*n"]:
        t = j.astype(dtype) * (self.interim / 1000.0)
        omega = jnp.sqrt(1.0 / self.tau_f - 1.0 / (4.0 * self.tau_s**2))
        return (1.0 / 3.0) * jnp.exp(-0.5 * (t / self.tau_s)) * jnp.sin(omega * t) / omega

    def _lag_weight(self, lag: Int[Array, "*n"], dtype) -> Float[Array, "*n"]:
        """Weight of the window ending ``lag`` windows before a sample (0 beyond L)."""
        j = jnp.where(lag == 0, self.length - 1, lag - 1)
        return jnp.where(lag < self.length, self._kernel_at(j, dtype), 0.0)

    def _steps(self, dt: float) -> int:
        return whole_multiple("HrfBold interim", self.interim, "steps dt", dt)

    def init(self, y: Float[Array, "k nodes"], dt: float) -> _State:
        self._steps(dt)
        x = single_row(self, y)
        pending = jnp.zeros((self.pending,) + x.shape, x.dtype)
        if self.fill == "initial":
            # Pending sample e (the (e + 1)-th of the run) already holds every window
            # before the start: lags (e + 1) * P and older.
            weights = self._lag_weight(jnp.arange(self.length), x.dtype)
            older = jnp.cumsum(weights[::-1])[::-1]  # sum of weights at lags >= l
            first = (jnp.arange(self.pending) + 1) * self._windows_per_period
            total = jnp.where(first < self.length, older[jnp.minimum(first, self.length - 1)],
                              0.0)
            pending = total[:, None] * x[None, :]
        return pending, jnp.zeros((), jnp.int32)

    def update(self, state: _State, y: Float[Array, "k nodes"], dt: float) -> _State:
        pending, n = state
        m = self._steps(dt)
        x = single_row(self, y)
        windows = self._windows_per_period
        # The step belongs to window p of the current period; at pending sample e that
        # window's lag is (e + 1) P - 1 - p windows.
        p = (n // m) % windows
        lag = (jnp.arange(self.pending, dtype=jnp.int32) + 1) * windows - 1 - p
        weight = self._lag_weight(lag, x.dtype) * (1.0 / m)
        return pending + weight[:, None] * x[None, :], n + 1

    def emit(self, state: _State, dt: float):
        pending, n = state
        bold = self.k_1 * self.V_0 * (pending[0] - 1.0)
        pending = jnp.concatenate([pending[1:], jnp.zeros_like(pending[:1])])
        return (pending, n), bold[None]

    def sample_offset(self, period: float, dt: float) -> float:
        return 0.0
