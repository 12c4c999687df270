"""Shared validation of graph arrays, and the quantisation of delays into buffer rows."""

import functools
import warnings

import equinox as eqx
import jax
import jax.numpy as jnp
import numpy as np
from jax.custom_derivatives import SymbolicZero
from jaxtyping import Array

from .. import _xla_tricks
from .._validate import array_in_range, is_concrete


class NearestDelayGradientWarning(UserWarning):
    """A derivative with respect to delays was taken through nearest-step delays.

    ``interpolation="nearest"`` (the default) reads each delay at ``rint(d / dt)`` whole
    steps, a piecewise-constant function of ``d``: its derivative is exactly zero. The
    warning is issued at trace time when a tangent reaches the delays (``jax.grad`` with
    respect to delays or conduction speed, or ``eqx.filter_grad`` over a whole network);
    plain runs never issue it. Use ``interpolation="linear"`` on the delayed coupling to
    differentiate with respect to delays, or filter the delays out of the differentiated
    leaves (``eqx.partition``) to silence it.
    """


def check_real(name: str, x) -> None:
    """Trace-time check that ``x`` holds real numbers: complex values are refused rather
    than silently losing their imaginary part."""
    if jnp.iscomplexobj(x):
        raise ValueError(
            f"{name} must be real, got {jnp.result_type(x)} values: netdyn does not drop "
            "imaginary parts (pass the real part, x.real, if that is what you mean)."
        )


def check_square(name: str, matrix) -> None:
    """Trace-time check that ``matrix`` is a real, square 2-D array with at least one node."""
    shape = jnp.shape(matrix)
    if len(shape) != 2 or shape[0] != shape[1]:
        raise ValueError(f"{name} must be a square [nodes, nodes] matrix, got shape {shape}.")
    if shape[0] == 0:
        raise ValueError(f"{name} has shape {shape}: a graph needs at least one node.")
    check_real(name, matrix)


def check_same_shape(name: str, x, ref_name: str, ref) -> None:
    """Trace-time check that two arrays share a shape."""
    if jnp.shape(x) != jnp.shape(ref):
        raise ValueError(
            f"{name} has shape {jnp.shape(x)} but {ref_name} has shape {jnp.shape(ref)}."
        )


def checked_weights(weights: Array, signed: bool) -> Array:
    """Attach runtime checks: finite, and non-negative unless ``signed`` (the graphs'
    trace-time checks, run first in ``validate``, have refused complex values)."""
    weights = eqx.error_if(weights, ~jnp.all(jnp.isfinite(weights)), "weights contain NaN or inf.")
    if not signed:
        weights = eqx.error_if(
            weights,
            jnp.any(weights < 0),
            "weights contain negative entries (pass signed=True for signed connectomes).",
        )
    return weights


def checked_delays(delays: Array, max_delay: float) -> Array:
    """Attach runtime checks: finite, non-negative, and within ``max_delay``."""
    delays = eqx.error_if(delays, ~jnp.all(jnp.isfinite(delays)), "delays contain NaN or inf.")
    delays = eqx.error_if(delays, jnp.any(delays < 0), "delays contain negative entries.")
    delays = eqx.error_if(
        delays,
        jnp.any(delays > max_delay),
        "delays exceed the graph's max_delay, which sizes the history buffer; rebuild the "
        "graph or pass a larger max_delay.",
    )
    return delays


def check_delay_values(owner: str, delays, edges=None) -> None:
    """Concrete ``delays`` (ms) must be finite and >= 0: a ``ValueError`` naming
    ``owner.delays`` and the entries that are not, as ``[target, source]`` positions
    (of each edge, ``edges = (targets, sources)``, for a sparse graph). Traced delays are
    checked at run time (``checked_delays``)."""
    if not all(is_concrete(x) for x in (delays, *(edges or ()))):
        return
    if edges is None:
        array_in_range(f"{owner}.delays", delays, low=0.0)
        return
    d = np.asarray(delays)
    bad = ~np.isfinite(d) | (d < 0)
    if bad.any():
        targets, sources = (np.asarray(e)[bad] for e in edges)
        shown = ", ".join(f"({int(t)}, {int(s)})" for t, s in list(zip(targets, sources))[:5])
        more = f" and {len(targets) - 5} more" if len(targets) > 5 else ""
        raise ValueError(
            f"{owner}.delays must be finite and >= 0 ms; {int(bad.sum())} edges are not "
            f"([target, source] = {shown}{more}; e.g. {d[bad][0]:g})."
        )


def concrete_max(name: str, delays) -> float:
    """Largest delay of a concrete array, with a clear error for traced input."""
    try:
        values = np.asarray(delays)
    except Exception as e:  # a tracer: the buffer size must be known at trace time
        raise ValueError(
            f"{name} are traced (built inside jit/vmap/grad); pass max_delay=... explicitly "
            "so that the history buffer size is known at trace time."
        ) from e
    check_real(name, values)
    if values.size == 0:
        return 0.0
    return float(np.nanmax(values)) if np.isfinite(np.nanmax(values)) else 0.0


def steps_of(delays: Array, dt: float) -> Array:
    """``delays / dt``, correctly rounded (as NumPy's and TVB's division): a tract of
    228.875 mm at 5 mm/ms is 915.4999... steps of 0.05 ms, read as 915 whole steps, where
    the product with ``1 / dt`` (XLA's rewrite of a division) gives 915.5, read as 916."""
    return _xla_tricks.divide(delays, dt)


@functools.partial(jax.custom_jvp, nondiff_argnums=(1, 2))
def _nearest_rows(delays: Array, dt: float, n_rows: int) -> Array:
    D = jnp.rint(steps_of(delays, dt)).astype(jnp.int32)
    # Clamping guards against a float32/float64 rounding disagreement at max_delay.
    return jnp.maximum(n_rows - 1 - D, 0)


def _nearest_rows_jvp(dt, n_rows, primals, tangents):
    (delays,), (tangent,) = primals, tangents
    if not isinstance(tangent, SymbolicZero):
        warnings.warn(
            "the derivative with respect to delays is exactly zero with nearest-step delays "
            "(interpolation='nearest', the default, reads rint(d / dt) whole steps). Pass "
            "interpolation='linear' to the delayed coupling to differentiate with respect "
            "to delays or conduction speed, or leave the delays out of the differentiated "
            "leaves.",
            NearestDelayGradientWarning,
            stacklevel=2,
        )
    rows = _nearest_rows(delays, dt, n_rows)
    return rows, np.zeros(rows.shape, jax.dtypes.float0)


_nearest_rows.defjvp(_nearest_rows_jvp, symbolic_zeros=True)


def delay_rows(delays: Array, dt: float, n_rows: int, interpolation: str):
    """Rows and fractional weights of delays (ms) in a buffer of ``n_rows`` rows.

    Nearest: ``D = rint(d / dt)`` (TVB's convention, ties to even, with a correctly
    rounded quotient), read row ``n_rows - 1 - D``; its derivative with respect to the
    delays is zero, and taking it issues a ``NearestDelayGradientWarning``. Linear:
    ``d / dt = D + f`` with ``D = floor``, read rows ``n_rows - 1 - D`` and the one before
    with weights ``1 - f`` and ``f``.
    """
    if interpolation == "nearest":
        return _nearest_rows(delays, dt, n_rows), None
    if interpolation == "linear":
        steps = steps_of(delays, dt)
        D = jnp.floor(steps)
        frac = steps - D
        return jnp.maximum(n_rows - 1 - D.astype(jnp.int32), 1), frac
    raise ValueError(f"interpolation must be 'nearest' or 'linear', got {interpolation!r}.")
