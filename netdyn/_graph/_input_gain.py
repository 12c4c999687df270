"""A dense graph's optional per-target input gain: checks, and the gain applied to sums."""

import equinox as eqx
import jax.numpy as jnp
import numpy as np

from .._validate import is_concrete
from ._checks import check_real


def check_input_gain(owner: str, gain, n_nodes: int) -> None:
    """Trace-time checks of ``owner.input_gain``: ``None``, or a real ``[nodes]`` array;
    concrete values finite and non-negative (traced ones: ``checked_input_gain``)."""
    if gain is None:
        return
    name = f"{owner}.input_gain"
    if jnp.shape(gain) != (n_nodes,):
        raise ValueError(f"{name} must have shape ({n_nodes},), one gain per target node, got "
                         f"shape {jnp.shape(gain)}.")
    check_real(name, gain)
    if is_concrete(gain):
        g = np.asarray(gain)
        bad = np.flatnonzero(~np.isfinite(g) | (g < 0))
        if bad.size:
            raise ValueError(f"{name} must be finite and non-negative; nodes "
                             f"{bad[:5].tolist()} hold {g[bad[:5]].tolist()}.")


def checked_input_gain(gain):
    """Attach the runtime check (finite, non-negative) to a traced ``input_gain``."""
    if gain is None:
        return None
    return eqx.error_if(gain, ~jnp.all(jnp.isfinite(gain) & (gain >= 0)),
                        "input_gain contains NaN, inf or negative entries.")


def with_gain(gain, sums, node_axis: int):
    """``sums`` (the weighted sums, nodes on ``node_axis``) scaled by ``gain[i]`` per
    target node ``i``; unchanged without a gain."""
    if gain is None:
        return sums
    shape = [1] * sums.ndim
    shape[node_axis] = -1
    return jnp.reshape(gain, shape) * sums
