"""An arbitrary input given by samples, linearly interpolated at the solver stages."""

from typing import Literal

import equinox as eqx
import jax.numpy as jnp
from jaxtyping import Array, ArrayLike, Float

from .._custom_types import Param, Scalar
from .._validate import number
from ._base import AbstractStimulus, array_field


class SampledStimulus(AbstractStimulus):
    r"""An input given by samples $x_m$ at times $t_m = t_s + m\,\Delta$
    ($m = 0 \dots M-1$), linearly interpolated:

    $$ s(t) = (1 - \theta)\, x_m + \theta\, x_{m+1}, \qquad
       m + \theta = \frac{t - t_s}{\Delta}, \quad 0 \le \theta < 1 , $$

    added as ``amplitude * s(t) * pattern`` to the time derivative of ``variable`` (see
    ``AbstractStimulus``). The solvers evaluate it at their stage times, so the sampling
    period need not match ``dt``. Outside $[t_0, t_{M-1}]$ the input is zero
    (``outside="zero"``, the default) or holds the first / last sample
    (``outside="hold"``), as ``numpy.interp`` with ``left=right=0`` or without them. With
    ``"zero"``, a non-zero first or last sample is a jump, and at exactly $t_0$ and
    $t_{M-1}$ the input is half the sample (the mean of both sides, as ``PulseTrain``'s
    edges): put those times on the time grid to keep Heun and RK4 second order, or
    start and end the samples with zeros. Differentiable in the samples, the amplitude, the
    weights and the start time (within a sampling interval the input is linear in $t$).

    **Arguments**: ``variable`` the stimulated state variable (name); ``samples``
    ``[time]`` (one profile for every region) or ``[time, nodes]`` (one per region), at
    least two, finite; ``sampling_period`` $\Delta$ (ms, static, finite > 0); ``start``
    $t_s$ (ms, time of the first sample, default 0); ``amplitude`` (default 1);
    ``outside``; ``regions`` and ``weights``, the spatial pattern (default: every region
    with weight 1).
    """

    variable: str = eqx.field(static=True)
    samples: Float[ArrayLike, " time"] | Float[ArrayLike, "time nodes"] = array_field(
        "SampledStimulus.samples")
    sampling_period: float = eqx.field(static=True)
    start: Param = array_field("SampledStimulus.start", default=0.0)
    amplitude: Param = array_field("SampledStimulus.amplitude", default=1.0)
    outside: Literal["zero", "hold"] = eqx.field(default="zero", static=True)
    regions: tuple[int, ...] | None = eqx.field(default=None, static=True)
    weights: Param = array_field("SampledStimulus.weights", default=1.0)

    def __check_init__(self):
        shape = jnp.shape(self.samples)
        if len(shape) not in (1, 2) or shape[0] < 2:
            raise ValueError(f"SampledStimulus.samples must be [time] or [time, nodes] with at "
                             f"least two samples, got shape {shape}.")
        number("SampledStimulus.sampling_period", self.sampling_period, low=0.0,
               low_open=True, unit=" ms")
        if self.outside not in ("zero", "hold"):
            raise ValueError(f"SampledStimulus.outside must be 'zero' or 'hold', got "
                             f"{self.outside!r}.")

    def check_profile(self, n_nodes: int) -> None:
        shape = jnp.shape(self.samples)
        if len(shape) == 2 and shape[1] != n_nodes:
            raise ValueError(f"SampledStimulus.samples has shape {shape}; a [time, nodes] "
                             f"input must have nodes = {n_nodes}.")

    def profile(self, t: Scalar) -> Float[Array, ""] | Float[Array, " nodes"]:
        samples = jnp.asarray(self.samples, t.dtype)
        last = samples.shape[0] - 1
        x = (t - jnp.asarray(self.start, t.dtype)) / self.sampling_period
        # The interval [m, m + 1] holding x, kept inside the samples; theta then runs
        # outside [0, 1] beyond the ends, where "hold" clips it and "zero" masks it.
        m = jnp.clip(jnp.floor(x), 0, last - 1)
        theta = x - m
        if self.outside == "hold":
            theta = jnp.clip(theta, 0.0, 1.0)
        m = m.astype(jnp.int32)
        value = samples[m] + theta * (samples[m + 1] - samples[m])
        if self.outside == "zero":
            # At the first and last sample times the input jumps (unless the sample is
            # 0): half the sample there, like PulseTrain's H(0) = 1/2, keeps Heun and RK4
            # second order when those times are on the grid. Within a few ulp counts as
            # on, since t = t0 + i dt is rounded differently from the sample times.
            eps = jnp.finfo(t.dtype).eps
            tol = 16 * eps * ((jnp.abs(t) + jnp.abs(self.start)) / self.sampling_period
                              + jnp.abs(x) + 1.0)
            at_end = (jnp.abs(x) <= tol) | (jnp.abs(x - last) <= tol)
            weight = jnp.where(at_end, 0.5, jnp.where((x > 0) & (x < last), 1.0, 0.0))
            value = weight.astype(t.dtype) * value
        return value
