"""``FcLoss``'s arguments checked once, at construction: the target FC, the FCD window and
target, and whether the monitored samples fit in memory (``ValueError`` naming each)."""

import jax.numpy as jnp
import numpy as np
from jaxtyping import Array, Float

from .._memory.device import check_fits
from .._validate import finite_array, number, real_array


def target_fc(target, name: str = "FcLoss target") -> np.ndarray:
    """The empirical FC as a finite, real, symmetric ``[nodes, nodes]`` array (nodes >= 3)."""
    t = real_array(name, target)
    if t.ndim != 2 or t.shape[0] != t.shape[1] or t.shape[0] < 3:
        raise ValueError(
            f"{name} must be a square FC matrix [nodes, nodes] with nodes >= 3, "
            f"got shape {t.shape}."
        )
    t = finite_array(name, t).astype(float)
    gap = np.abs(t - t.T)
    # An FC is symmetric: allow rounding (float32, a GPU matmul's order), not another matrix.
    if gap.max() > 1e-4 * max(1.0, float(np.abs(t).max())):
        i, j = np.unravel_index(np.argmax(gap), gap.shape)
        raise ValueError(
            f"{name} must be a symmetric FC matrix; entries ({i}, {j}) and ({j}, {i}) "
            f"differ by {gap[i, j]:.3g} (a matrix with only its upper triangle filled: "
            "np.triu(f) + np.triu(f, 1).T)."
        )
    return t


def window_and_step(fcd_window) -> tuple[int, int]:
    """``(window, step)`` as two whole numbers, window >= 2 and step >= 1 (a fraction is
    refused, not truncated)."""
    try:
        window, step = fcd_window
        window = number("FcLoss fcd_window", window, low=2.0, integer=True)
        step = number("FcLoss fcd_window", step, low=1.0, integer=True)
    except (TypeError, ValueError):
        raise ValueError("FcLoss fcd_window must be two whole numbers of samples (window, "
                         f"step) with window >= 2 and step >= 1, got {fcd_window!r}.") from None
    return window, step


def fcd_target_values(fcd_target) -> Float[Array, " values"] | None:
    """The FCD values of the data as a finite 1-D array of at least 2 values."""
    if fcd_target is None:
        return None
    v = finite_array("FcLoss fcd_target", fcd_target).astype(float).reshape(-1)
    if v.size < 2:
        raise ValueError("FcLoss fcd_target must hold >= 2 finite FCD values "
                         f"(e.g. nd.fcd_values(nd.fcd(bold, window, step))), got {v.size}.")
    return jnp.asarray(v)


def check_memory(realisations: int, samples: int, nodes: int, itemsize: int) -> None:
    """Refuse a ``realisations`` count whose measured samples alone (``[realisations,
    samples, nodes]``, all held at once) cannot fit in the device's memory."""
    check_fits(realisations * samples * nodes * itemsize,
               f"FcLoss realisations={realisations} would hold",
               f"monitored samples ({realisations} runs x {samples} samples x {nodes} nodes "
               f"x {itemsize} bytes)", ": use fewer realisations or a shorter duration.")
