"""Functional connectivity dynamics (FCD)."""

import equinox as eqx
import jax
import jax.numpy as jnp
import numpy as np
from jaxtyping import Array, Float

from .._custom_types import ArrayLike
from ._stats import as_time_nodes, sliding_windows, upper_triangle
from .fc import fc


@eqx.filter_jit
def fcd(x: ArrayLike, window: int, step: int) -> Float[Array, "windows windows"]:
    r"""Functional connectivity dynamics: the correlation between the FCs of sliding
    windows (Hansen et al. 2015),

    $$ \mathrm{FCD}_{ab} = \operatorname{corr}\big(\operatorname{triu}_1 \mathrm{FC}^{(a)},
       \operatorname{triu}_1 \mathrm{FC}^{(b)}\big), $$

    where $\mathrm{FC}^{(a)}$ is ``fc`` of samples ``[a * step, a * step + window)`` and
    $\operatorname{triu}_1$ its entries above the diagonal.

    **Arguments**:

    - ``x``: ``[time, nodes]`` or ``[time, 1, nodes]`` (a monitor's output).
    - ``window``, ``step``: window length and stride in **samples** (Python ints; for a
      BOLD monitor with TR = 1 s, ``window=60`` is one minute).

    **Returns**: ``[windows, windows]`` with ``windows = (time - window) // step + 1``,
    symmetric with diagonal 1. A window whose FC entries are all equal correlates 0 with
    the others (no NaN). See ``fcd_values`` for the distribution usually compared.

    **Reference**: Hansen, Battaglia, Spiegler, Deco, Jirsa (2015), *Functional
    connectivity dynamics: modeling the switching behavior of the resting state*,
    NeuroImage 105:525-535.
    """
    x = as_time_nodes(x)
    n_time = x.shape[0]
    for name, value in (("window", window), ("step", step)):
        if not isinstance(value, (int, np.integer)) or isinstance(value, bool):
            raise ValueError(f"fcd: {name} must be a Python int (samples), got {value!r}.")
    if not 2 <= window <= n_time:
        raise ValueError(f"fcd: window must be in [2, time = {n_time}] samples, got {window}.")
    if step < 1:
        raise ValueError(f"fcd: step must be >= 1 sample, got {step}.")
    windows = sliding_windows(x, window, step)  # [windows, window, nodes]
    pairs = upper_triangle(jax.vmap(fc)(windows), k=1)  # [windows, pairs]
    if pairs.shape[1] < 2:
        raise ValueError(f"fcd needs at least 3 nodes, got {x.shape[1]}.")
    # Correlating windows across node pairs is an FC with pairs as "time".
    return fc(pairs.T)


@eqx.filter_jit
def fcd_values(m: ArrayLike, k: int = 1) -> Float[Array, " values"]:
    """The distribution of an FCD matrix: its entries above the ``k``-th diagonal.

    ``k = 1`` keeps every pair of distinct windows; ``k = window // step`` keeps only
    pairs of non-overlapping windows, as some studies do.
    """
    m = jnp.asarray(m)
    if m.ndim != 2:
        raise ValueError(f"fcd_values needs an FCD matrix [windows, windows], got {m.shape}.")
    return upper_triangle(m, k=k)
