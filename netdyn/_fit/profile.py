"""``profile``: the loss along one parameter with the others re-optimised."""

from collections.abc import Callable, Sequence
from typing import Any, NamedTuple

import equinox as eqx
import jax
import numpy as np
import optax

from .._custom_types import Key
from .fit import fit
from .select import select
from .step import split_loss


class Profile(NamedTuple):
    r"""What ``profile`` measured.

    - ``values``: the fixed values $a_k$ of the profiled parameter.
    - ``loss``: $\min_\theta L(a_k, \theta)$ as found (the best loss of each inner fit).
    - ``others``: for each $a_k$, the re-optimised leaves (a tuple, in ``where``'s
      order).
    - ``names``: the profiled parameter's name and the re-optimised leaves' names.
    """

    values: np.ndarray
    loss: np.ndarray
    others: list[tuple[np.ndarray, ...]]
    names: tuple[str, ...]


def profile(
    loss_fn: Callable[[Any, Any], Any],
    model: Any,
    parameter: Callable[[Any], Any],
    values: Sequence[float],
    *,
    where: Callable[[Any], Any] | None = None,
    optimizer: optax.GradientTransformation | None = None,
    steps: int = 20,
    key: Key | None = None,
    bounds: Any = None,
) -> Profile:
    r"""The profile of the loss along one scalar parameter $a$ (Raue et al. 2009,
    "Structural and practical identifiability analysis of partially observed dynamical
    models by exploiting the profile likelihood", Bioinformatics 25:1923):

    $$ \mathrm{PL}(a_k) = \min_\theta L(a_k, \theta) $$

    for each value $a_k$, with the leaves $\theta$ that ``where`` selects re-optimised
    by ``nd.fit`` (``steps`` steps of ``optimizer``, each fit starting from the previous
    value's optimum; ``values`` are visited in the order given, so pass them sorted
    outward from the fitted value). A flat profile means the data do not determine $a$;
    its curvature at the minimum, the precision they give it. Without ``where`` the
    profile is the plain loss along $a$. Every evaluation uses the same ``key``.

    **Arguments**:

    - ``loss_fn``, ``model``, ``key``, ``bounds`` (for ``where``'s leaves): as for
      ``nd.fit``.
    - ``parameter``: ``model -> leaf``, the scalar leaf to fix at each value.
    - ``values``: the values of the profiled parameter.
    - ``where``: the leaves to re-optimise, or ``None``.
    - ``optimizer``: default ``optax.adam(1e-2)``; ``steps``: per value, >= 1.

    **Returns**: a ``Profile``.
    """
    grid = np.asarray(values, dtype=float)
    if grid.ndim != 1 or grid.size == 0 or not np.all(np.isfinite(grid)):
        raise ValueError(f"profile values must be a non-empty 1-D sequence of finite numbers, "
                         f"got {values!r}.")
    if isinstance(steps, bool) or not isinstance(steps, int) or steps < 1:
        raise ValueError(f"profile steps must be an integer >= 1, got {steps!r}.")
    fixed = select(model, parameter, None)
    if len(fixed.names) != 1 or fixed.shapes[0] != ():
        raise ValueError("profile parameter must select one scalar leaf, got "
                         f"{list(zip(fixed.names, fixed.shapes))}.")
    others = select(model, where, bounds) if where is not None else None
    if others is not None and fixed.names[0] in others.names:
        raise ValueError(f"profile: where also selects the profiled {fixed.names[0]}.")
    optimizer = optimizer if optimizer is not None else optax.adam(1e-2)
    dtype = jax.numpy.result_type(fixed.values[0])
    plain = eqx.filter_jit(lambda m: split_loss(loss_fn(m, key))[0])
    losses, found = [], []
    current = model
    for a in grid:
        current = eqx.tree_at(parameter, current, jax.numpy.asarray(a, dtype))
        if others is None:
            losses.append(float(plain(current)))
            found.append(())
            continue
        current, _ = fit(current, loss_fn, optimizer, where=where, steps=steps,
                               bounds=bounds, key=key, keep="best")
        losses.append(float(plain(current)))
        found.append(tuple(np.asarray(x) for x in jax.tree.leaves(where(current))))
    names = fixed.names + (others.names if others is not None else ())
    return Profile(grid, np.asarray(losses), found, names)
