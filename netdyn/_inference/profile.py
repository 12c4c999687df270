"""``profile`` and ``local_profile``: the loss along one parameter with the others
re-optimized (by fits, or by the quadratic model at the fit)."""

from collections.abc import Callable, Sequence
from typing import Any, NamedTuple

import equinox as eqx
import jax
import numpy as np
import optax

from .._custom_types import Key
from .._fit.fit import fit
from .._fit.step import split_loss
from .._parameters.fitted import FittedParameters
from .uncertainty import Uncertainty, constrained, smooth

# The points of ``interval_profile``: the fit and, on each side, 0.75 and 1.5 times that side
# of the interval (its half-width there).
INTERVAL_STEPS = (-1.5, -0.75, 0.0, 0.75, 1.5)


class Profile(NamedTuple):
    r"""What ``profile`` measured.

    - ``values``: the fixed values $a_k$ of the profiled parameter.
    - ``loss``: $\min_\theta L(a_k, \theta)$ as found (the best loss of each inner fit).
    - ``others``: for each $a_k$, the re-optimized leaves (a tuple, in ``where``'s
      order).
    - ``names``: the profiled parameter's name and the re-optimized leaves' names.
    - ``quadratic``: ``local_profile`` only (else ``None``): the quadratic model's
      profile at ``values``, $L(\hat u) + \tfrac12 h\,(u_a - \hat u_a)^2$.
    """

    values: np.ndarray
    loss: np.ndarray
    others: list[tuple[np.ndarray, ...]]
    names: tuple[str, ...]
    quadratic: np.ndarray | None = None

    def rise_ratio(self, at: int) -> np.ndarray:
        r"""``local_profile``'s check of the quadratic model, at each value: the loss's
        rise from the fit (the value ``values[at]``) over the model's,
        $(\mathrm{PL}(a_k) - q(\hat a)) / (q(a_k) - q(\hat a))$ with $q$ ``quadratic``:
        1 where the model the intervals of ``nd.uncertainty`` rest on holds; NaN at the
        fit itself (0 / 0) and where the model is flat."""
        base = self.quadratic[at]
        with np.errstate(invalid="ignore", divide="ignore"):
            return (self.loss - base) / (self.quadratic - base)


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

    for each value $a_k$, with the leaves $\theta$ that ``where`` selects re-optimized
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
    - ``where``: the leaves to re-optimize, or ``None``.
    - ``optimizer``: default ``optax.adam(1e-2)``; ``steps``: per value, >= 1.

    **Returns**: a ``Profile``.
    """
    grid = np.asarray(values, dtype=float)
    if grid.ndim != 1 or grid.size == 0 or not np.all(np.isfinite(grid)):
        raise ValueError(f"profile values must be a non-empty 1-D sequence of finite numbers, "
                         f"got {values!r}.")
    if isinstance(steps, bool) or not isinstance(steps, int) or steps < 1:
        raise ValueError(f"profile steps must be an integer >= 1, got {steps!r}.")
    fixed = FittedParameters(model, parameter, None)
    if len(fixed.names) != 1 or fixed.shapes[0] != ():
        raise ValueError("profile parameter must select one scalar leaf, got "
                         f"{list(zip(fixed.names, fixed.shapes))}.")
    others = FittedParameters(model, where, bounds) if where is not None else None
    if others is not None and fixed.names[0] in others.names:
        raise ValueError(f"profile: where also selects the profiled {fixed.names[0]}.")
    optimizer = optimizer if optimizer is not None else optax.adam(1e-2)
    dtype = fixed.dtypes[0]
    plain = eqx.filter_jit(lambda m: split_loss(loss_fn(m, key))[0])
    losses, found = [], []
    current = model
    for a in grid:
        current = fixed.set(current, [jax.numpy.asarray(a, dtype)])
        if others is None:
            losses.append(float(plain(current)))
            found.append(())
            continue
        current, _ = fit(current, loss_fn, optimizer, where=where, steps=steps,
                               bounds=bounds, key=key, keep="best")
        losses.append(float(plain(current)))
        found.append(tuple(np.asarray(x) for x in others.leaf_where(current)))
    names = fixed.names + (others.names if others is not None else ())
    return Profile(grid, np.asarray(losses), found, names)


def local_profile(
    loss_fn: Callable[[Any, Any], Any],
    model: Any,
    where: Callable[[Any], Any],
    coordinate: str,
    values: Sequence[float] | np.ndarray,
    hessian: Any,
    *,
    key: Key | None = None,
    bounds: Any = None,
) -> Profile:
    r"""The profile of the loss along one fitted coordinate $a$ near the fit $\hat u$,
    with the other coordinates $o$ at their optimum under the quadratic model of the loss
    there (one Newton step from the fit):

    $$ u_o(a) = \hat u_o - H_{oo}^{-1} H_{oa}\,(u_a - \hat u_a), \qquad
       \mathrm{PL}(a) \approx L\big(u_a, u_o(a)\big), $$

    each evaluated by simulation (one loss evaluation per value, where ``nd.profile``
    runs a fit per value). Beside it, the quadratic model's own profile
    $L(\hat u) + \tfrac12 h\,(u_a - \hat u_a)^2$ with $h = H_{aa} - H_{ao}H_{oo}^{-1}
    H_{oa}$. The intervals of ``nd.uncertainty`` rest on that model: where the two part
    over an interval, its first-order interval is not to be trusted there (Raue et al.
    2009 for profiles). Coordinates the Hessian leaves unconstrained (as in
    ``nd.uncertainty``) are held at their fitted value. Exact for a quadratic loss. All
    in the fit's coordinates $u$ (``bounds``); ``values`` in the parameter's own units.

    **Arguments**:

    - ``loss_fn``, ``model`` (at the fitted values), ``where``, ``key``, ``bounds``: as
      for ``nd.uncertainty``; an rmse ``nd.FcLoss`` is squared first, as there.
    - ``coordinate``: the profiled coordinate's name, as in ``Uncertainty.names``
      (``"coupling.G"``, ``"dynamics.I_o[3]"``).
    - ``values``: the values of that coordinate.
    - ``hessian``: the loss's Hessian in the fit's coordinates at the fit, e.g.
      ``nd.uncertainty(...).hessian``.

    **Returns**: a ``Profile`` (``others``: every coordinate's value at each point;
    ``quadratic`` set).
    """
    grid = np.asarray(values, dtype=float)
    if grid.ndim != 1 or grid.size == 0 or not np.all(np.isfinite(grid)):
        raise ValueError(f"local_profile values must be a non-empty 1-D sequence of finite "
                         f"numbers, got {values!r}.")
    params = FittedParameters(model, where, bounds)
    if coordinate not in params.labels:
        raise ValueError(f"local_profile: {coordinate!r} is not one of the fitted "
                         f"coordinates {list(params.labels)}.")
    h = np.asarray(hessian, dtype=float)
    n = params.u0.size
    if h.shape != (n, n) or not np.all(np.isfinite(h)):
        raise ValueError(f"local_profile hessian must be a finite ({n}, {n}) matrix (the "
                         f"fitted coordinates {list(params.labels)}), got shape {h.shape}.")
    h = (h + h.T) / 2
    a = params.labels.index(coordinate)
    low, high = params.range_of(a)
    outside = grid[(grid <= low) | (grid >= high)]
    if outside.size:
        raise ValueError(f"local_profile: values {outside.tolist()} of {coordinate} lie "
                         f"outside its bounds ({low:g}, {high:g}).")
    w, v = np.linalg.eigh(h)
    ok = constrained(w, v)
    if not ok[a]:
        raise ValueError(f"local_profile: the Hessian does not constrain {coordinate} (a "
                         "flat direction): its profile near the fit is flat.")
    others = np.flatnonzero(ok & (np.arange(n) != a))
    h_oo, h_oa = h[np.ix_(others, others)], h[others, a]
    move = np.linalg.solve(h_oo, h_oa) if others.size else np.zeros(0)
    curvature = float(h[a, a] - h_oa @ move)
    loss_fn = smooth(loss_fn)
    plain = eqx.filter_jit(lambda m: split_loss(loss_fn(m, key))[0])
    u0 = np.asarray(params.u0)
    base = float(plain(model))
    losses, found, quadratic = [], [], []
    for value in grid:
        u = np.array(params.with_value(params.u0, a, value))
        du = u[a] - u0[a]
        u[others] = u0[others] - move * du
        point = params.at(jax.numpy.asarray(u, params.u0.dtype))
        losses.append(float(plain(point)))
        found.append(tuple(np.asarray(x) for x in params.leaf_where(point)))
        quadratic.append(base + 0.5 * curvature * du * du)
    return Profile(grid, np.asarray(losses), found, params.labels, np.asarray(quadratic))


def interval_profile(
    loss_fn: Callable[[Any, Any], Any],
    model: Any,
    where: Callable[[Any], Any],
    uncertainty: Uncertainty,
    coordinate: str,
    *,
    steps: Sequence[float] = INTERVAL_STEPS,
    key: Key | None = None,
    bounds: Any = None,
) -> Profile:
    r"""``local_profile`` across the interval that ``uncertainty`` (``nd.uncertainty`` at
    ``model``, in the leaves' own units) gives ``coordinate``: at $\hat a + s\,(a_+ -
    \hat a)$ for each $s > 0$ of ``steps`` and $\hat a + s\,(\hat a - a_-)$ for each
    $s \le 0$, with $\hat a$ the fitted value and $[a_-, a_+]$ its interval (by default
    the fit and 0.75 and 1.5 half-widths on each side). ``Profile.rise_ratio`` at the fit
    then says whether the quadratic model that the interval rests on holds across it (1
    where it does), as ``netdyn fit`` draws for G.

    ``loss_fn``, ``where``, ``key`` and ``bounds`` are those ``uncertainty`` was computed
    with. A point beyond the coordinate's bounds (the lower side of a wide interval of a
    positive parameter, say) is not evaluated: its loss, quadratic model and other values
    are NaN. **Raises** ``ValueError`` when ``coordinate`` has no interval there.
    """
    i = uncertainty.names.index(coordinate) if coordinate in uncertainty.names else None
    if i is None or not (uncertainty.valid and uncertainty.constrained[i]):
        raise ValueError(f"interval_profile: {coordinate!r} has no interval in this "
                         f"uncertainty (coordinates {list(uncertainty.names)}).")
    a, lo, hi = (float(x[i]) for x in (uncertainty.values, uncertainty.lower, uncertainty.upper))
    values = np.asarray([a + s * ((hi - a) if s > 0 else (a - lo)) for s in steps])
    # A wide interval's outer points can lie beyond the parameter's bounds (G < 0, say):
    # they are not evaluated (NaN).
    params = FittedParameters(model, where, bounds)
    low, high = params.range_of(params.labels.index(coordinate))
    inside = (values > low) & (values < high)
    if not inside.any():
        raise ValueError(f"interval_profile: every point of the profile of {coordinate} "
                         f"lies outside its bounds ({low:g}, {high:g}).")
    prof = local_profile(loss_fn, model, where, coordinate, values[inside].tolist(),
                         uncertainty.hessian, key=key, bounds=bounds)
    loss, quadratic = np.full(values.size, np.nan), np.full(values.size, np.nan)
    loss[inside], quadratic[inside] = prof.loss, prof.quadratic
    others, found = [], iter(prof.others)
    for ok in inside:
        others.append(next(found) if ok else tuple(np.full_like(x, np.nan)
                                                    for x in prof.others[0]))
    return Profile(values, loss, others, prof.names, quadratic)
