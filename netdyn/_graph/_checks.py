"""Shared validation of graph arrays."""

import equinox as eqx
import jax.numpy as jnp
import numpy as np
from jaxtyping import Array


def check_square(name: str, matrix) -> None:
    """Trace-time check that ``matrix`` is a square 2-D array."""
    shape = jnp.shape(matrix)
    if len(shape) != 2 or shape[0] != shape[1]:
        raise ValueError(f"{name} must be a square [nodes, nodes] matrix, got shape {shape}.")


def check_same_shape(name: str, x, ref_name: str, ref) -> None:
    """Trace-time check that two arrays share a shape."""
    if jnp.shape(x) != jnp.shape(ref):
        raise ValueError(
            f"{name} has shape {jnp.shape(x)} but {ref_name} has shape {jnp.shape(ref)}."
        )


def checked_weights(weights: Array, signed: bool) -> Array:
    """Attach runtime checks: finite, and non-negative unless ``signed``."""
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


def concrete_max(name: str, delays) -> float:
    """Largest delay of a concrete array, with a clear error for traced input."""
    try:
        values = np.asarray(delays)
    except Exception as e:  # a tracer: the buffer size must be known at trace time
        raise ValueError(
            f"{name} are traced (built inside jit/vmap/grad); pass max_delay=... explicitly "
            "so that the history buffer size is known at trace time."
        ) from e
    if values.size == 0:
        return 0.0
    return float(np.nanmax(values)) if np.isfinite(np.nanmax(values)) else 0.0


def delay_rows(delays: Array, dt: float, n_rows: int, interpolation: str):
    """Rows and fractional weights of delays (ms) in a buffer of ``n_rows`` rows.

    Nearest: ``D = rint(d / dt)`` (TVB's convention), read row ``n_rows - 1 - D``.
    Linear: ``d / dt = D + f`` with ``D = floor``, read rows ``n_rows - 1 - D`` and the one
    before with weights ``1 - f`` and ``f``.
    """
    steps = delays / dt
    if interpolation == "nearest":
        D = jnp.rint(steps).astype(jnp.int32)
        # Clamping guards against a float32/float64 rounding disagreement at max_delay.
        return jnp.maximum(n_rows - 1 - D, 0), None
    if interpolation == "linear":
        D = jnp.floor(steps)
        frac = steps - D
        return jnp.maximum(n_rows - 1 - D.astype(jnp.int32), 1), frac
    raise ValueError(f"interpolation must be 'nearest' or 'linear', got {interpolation!r}.")
