"""A train of rectangular pulses, with sharp or logistic edges."""

import math

import equinox as eqx
import jax.numpy as jnp
import numpy as np
from jaxtyping import Array, Float

from .._custom_types import Param, Scalar
from .._functions import logistic
from .._validate import array_in_range, number
from ._base import AbstractStimulus, array_field, concrete_numbers

# The 10-90 % rise time of the logistic sigma(u / scale) is 2 ln(9) scale.
_RISE_PER_SCALE = 2.0 * math.log(9.0)


class PulseTrain(AbstractStimulus):
    r"""Rectangular pulses of width $w$ every period $T$ from the onset $t_0$:

    $$ s(t) = \sum_{k=0}^{K-1} \Big[H(t - t_k) - H(t - t_k - w)\Big],
       \qquad t_k = t_0 + k\,T , $$

    added as ``amplitude * s(t) * pattern`` to the time derivative of ``variable`` (see
    ``AbstractStimulus``). With ``rise_time=None`` (default) the edges are sharp: $H$ is
    the Heaviside step with $H(0) = 1/2$, the limit of the smooth edges below. Then the
    response is differentiable in ``amplitude`` and the weights, but the derivatives in
    ``onset``, ``width`` and ``period`` are zero. With ``rise_time`` $= r > 0$ the edges
    are logistic,

    $$ H(u) = \frac{1}{1 + e^{-u / \tau}}, \qquad \tau = \frac{r}{2 \ln 9}, $$

    so that each edge rises from 10 % to 90 % in $r$ ms, centred on $t_k$ and $t_k + w$
    (a pulse keeps its area $w$); the timing parameters then get gradients. Smooth edges
    need $r$ well below the gaps $w$ and $T - w$: only the three pulses nearest to $t$
    are summed.

    Fixed-step solvers do not resolve a jump inside a step: with sharp edges, place
    $t_k$ and $t_k + w$ on the time grid (multiples of ``dt`` from ``t0``) to keep the
    solver's accuracy (Heun and RK4 stay second order there, thanks to $H(0) = 1/2$);
    otherwise the error of each edge is of order ``dt``. Smooth edges with $r$ a few
    ``dt`` avoid the question.

    **Arguments**: ``variable`` the stimulated state variable (name); ``amplitude``
    $a$ (scalar); ``onset`` $t_0$ (ms); ``width`` $w$ (ms); ``period`` $T$ (ms, at
    least $w$); each of the three a scalar, or a ``[nodes]`` array for timing that
    differs between regions; ``n_pulses`` $K$ (``None``: unending); ``rise_time`` $r$ (ms, ``None``:
    sharp edges); ``regions`` and ``weights``, the spatial pattern (default: every
    region with weight 1).

    **Raises**: ``ValueError`` at construction for a NaN, infinite or complex parameter,
    or ``0 < width <= period`` not holding everywhere (arrays entry by entry); values
    traced at construction or edited with ``eqx.tree_at`` are checked when a run starts.
    """

    variable: str = eqx.field(static=True)
    amplitude: Param = array_field("PulseTrain.amplitude")
    onset: Param = array_field("PulseTrain.onset")
    width: Param = array_field("PulseTrain.width")
    period: Param = array_field("PulseTrain.period")
    n_pulses: int | None = eqx.field(default=None, static=True)
    rise_time: float | None = eqx.field(default=None, static=True)
    regions: tuple[int, ...] | None = eqx.field(default=None, static=True)
    weights: Param = array_field("PulseTrain.weights", default=1.0)

    def __check_init__(self):
        if self.n_pulses is not None and (
            isinstance(self.n_pulses, bool) or not isinstance(self.n_pulses, (int, np.integer))
            or self.n_pulses < 1
        ):
            raise ValueError(f"PulseTrain.n_pulses must be a positive integer or None, got "
                             f"{self.n_pulses!r}.")
        if self.rise_time is not None:
            number("PulseTrain.rise_time", self.rise_time, low=0.0, low_open=True,
                   unit=" ms (or None for sharp edges)")
        # Only concrete numbers can be compared here (traced ones: ``checked``).
        width = _positive("PulseTrain.width", self.width)
        period = _positive("PulseTrain.period", self.period)
        if width is not None and period is not None:
            _check_width_fits(width, period)

    def checked(self) -> "PulseTrain":
        """``AbstractStimulus.checked`` plus runtime checks of ``0 < width <= period``
        everywhere (for values traced at construction, or edited with ``eqx.tree_at``)."""
        out = super().checked()
        dtype = jnp.result_type(float)
        width, period = jnp.asarray(out.width), jnp.asarray(out.period)
        w, p = width.astype(dtype), period.astype(dtype)
        width = eqx.error_if(width, jnp.any(~(w > 0)), "PulseTrain.width must be > 0 "
                             "everywhere.")
        period = eqx.error_if(period, jnp.any(~(w <= p)), "PulseTrain needs 0 < width <= "
                              "period everywhere.")
        return eqx.tree_at(lambda s: (s.width, s.period), out, (width, period))

    def check_profile(self, n_nodes: int) -> None:
        for name in ("onset", "width", "period"):
            shape = jnp.shape(getattr(self, name))
            if shape not in ((), (n_nodes,)):
                raise ValueError(f"PulseTrain.{name} has shape {shape}; it must be a scalar "
                                 f"or [nodes] = ({n_nodes},).")

    def _edge(self, u, tol):
        if self.rise_time is None:
            # An edge on the time grid must give H(0) = 1/2 although t = t0 + i dt and
            # the edge time are rounded differently: |u| within a few ulp counts as 0.
            return jnp.where(jnp.abs(u) <= tol, 0.5, jnp.where(u > 0, 1.0, 0.0)).astype(u.dtype)
        return logistic(u * (_RISE_PER_SCALE / self.rise_time))

    def profile(self, t: Scalar) -> Float[Array, ""] | Float[Array, " nodes"]:
        onset, width, period = (jnp.asarray(x, t.dtype) for x in
                                (self.onset, self.width, self.period))
        # The pulse k that started last, and its two neighbours: with width <= period
        # and edges much sharper than the gaps, every other pulse contributes nothing.
        # floor has zero derivative, so d/d(onset) flows through u only, as it should.
        k = jnp.floor((t - onset) / period)
        scale = jnp.abs(t) + jnp.abs(onset) + period * (jnp.abs(k) + 2.0)
        tol = 16 * jnp.finfo(t.dtype).eps * scale
        total = jnp.zeros(k.shape, t.dtype)
        for shift in (-1.0, 0.0, 1.0):
            j = k + shift
            u = t - onset - j * period
            pulse = self._edge(u, tol) - self._edge(u - width, tol)
            exists = j >= 0
            if self.n_pulses is not None:
                exists = exists & (j < self.n_pulses)
            total = total + jnp.where(exists, pulse, 0.0)
        return total


def _positive(name: str, value) -> np.ndarray | None:
    """A concrete ``value`` (scalar or array) checked finite and > 0 everywhere, as an
    array; ``None`` for a value that cannot be checked now (traced, a parameterisation)."""
    if not concrete_numbers(value):
        return None
    return array_in_range(name, value, low=0.0, low_open=True, unit=" ms")


def _check_width_fits(width: np.ndarray, period: np.ndarray) -> None:
    """``width <= period`` entry by entry (a pulse longer than the period would overlap
    the next one, and only three pulses are summed)."""
    try:
        bad = np.broadcast_to(width > period, np.broadcast_shapes(width.shape, period.shape))
    except ValueError:
        raise ValueError(f"PulseTrain.width {width.shape} and period {period.shape} must be "
                         "scalars or arrays of one shape [nodes].") from None
    if not bad.any():
        return
    if bad.ndim == 0:
        raise ValueError(f"PulseTrain needs 0 < width <= period, got width={width:g}, "
                         f"period={period:g}.")
    i = int(np.flatnonzero(bad)[0])
    w, p = np.broadcast_to(width, bad.shape).flat[i], np.broadcast_to(period, bad.shape).flat[i]
    raise ValueError(f"PulseTrain needs 0 < width <= period everywhere; {int(bad.sum())} "
                     f"entries are not (first at {i}: width={w:g}, period={p:g}).")
