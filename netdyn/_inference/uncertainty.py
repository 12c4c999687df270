"""``uncertainty``: how far a fit's values would move with other noise and other runs:
sandwich and jackknife estimates around the fitted parameters, with intervals."""

import math
import statistics
from collections.abc import Callable, Sequence
from typing import Any, NamedTuple

import equinox as eqx
import jax
import jax.numpy as jnp
import numpy as np

from .._custom_types import Key
from .._fit.step import split_loss
from .._loss._base import AbstractLoss
from .._parameters.fitted import FittedParameters
from .identifiability import describe_direction, flat_directions, hessian_matrix


class Uncertainty(NamedTuple):
    r"""What ``uncertainty`` estimated, per coordinate of the fitted leaves (labels as
    in ``names``: ``"coupling.G"``, ``"dynamics.I_o[3]"``), in the leaves' own units.

    - ``values``: the fitted values.
    - ``noise_sd``: the spread of the fitted values over the noise realisations the fit
      could have drawn (``None`` without ``noise_keys``).
    - ``data_sd``: the spread over the runs the data could have had: the leave-one-run-out
      jackknife (``None`` without ``leave_one_out``).
    - ``sd``: both together, $\sqrt{\mathrm{noise\_sd}^2 + \mathrm{data\_sd}^2}$.
    - ``lower``, ``upper``: the ``level`` interval, $u \pm t_{\nu}\,\sigma_u$ in the
      fit's coordinates $u$ mapped to the leaves' values (asymmetric for a bounded leaf);
      $t_\nu$ the Student-t quantile for the Welch-Satterthwaite degrees of freedom
      ``dof`` of the two variance estimates.
    - ``hessian_eigenvalues``: of the loss's Hessian in $u$, descending.
    - ``sloppy``: the Hessian's eigen-directions with an eigenvalue below 1e-3 of the
      largest (what the data barely constrain), as their largest components.
    - ``constrained``: per coordinate, whether the loss pins it down. A coordinate that
      dominates an eigen-direction of the Hessian whose eigenvalue is within 1e-3 of the
      largest of 0 (flat; slightly negative through noise) is not: it gets no interval (NaN), and
      the others' intervals hold it at its fitted value (conditional intervals).
    - ``valid``: the Hessian of the constrained coordinates is positive definite (the fit
      sits at a minimum); if not, every interval is NaN and ``note`` says along which
      direction it is not.
    - ``hessian``: the loss's Hessian in $u$ (that of the squared loss for an rmse
      ``FcLoss``), for ``nd.local_profile``.
    """

    names: tuple[str, ...]
    values: np.ndarray
    level: float
    noise_sd: np.ndarray | None
    data_sd: np.ndarray | None
    sd: np.ndarray
    lower: np.ndarray
    upper: np.ndarray
    dof: np.ndarray
    hessian_eigenvalues: np.ndarray
    sloppy: tuple[str, ...]
    constrained: np.ndarray
    valid: bool
    note: str
    hessian: np.ndarray

    def in_units(self, factor: Callable[[str], float]) -> "Uncertainty":
        """The same estimates with each coordinate's values, spreads and interval divided
        by ``factor(name)`` (a leaf's value = the value in those units times the factor,
        as ``nd.presets.Preset.factor``); the Hessian stays in the fit's coordinates."""
        f = np.array([factor(name) for name in self.names], dtype=float)
        return self._replace(**{k: None if getattr(self, k) is None else getattr(self, k) / f
                                for k in ("values", "noise_sd", "data_sd", "sd", "lower",
                                          "upper")})

    def as_dict(self) -> dict:
        """Plain lists and numbers, for JSON (NaN as ``None``)."""

        def plain(v):
            if isinstance(v, np.ndarray) and v.ndim > 1:
                return [plain(row) for row in v]
            if isinstance(v, np.ndarray):
                return [None if not math.isfinite(x) else float(x) for x in v.ravel()]
            return v

        out = {k: plain(v) for k, v in self._asdict().items()}
        out["constrained"] = [bool(c) for c in self.constrained]
        out["names"], out["sloppy"] = list(self.names), list(self.sloppy)
        return out


SLOPPY = 1e-3  # eigenvalues below this fraction of the largest: sloppy directions


@jax.jit
def _t_cdf(t, dof):
    return 1 - 0.5 * jax.scipy.special.betainc(dof / 2, 0.5, dof / (dof + t * t))


def t_quantile(p: float, dof: float) -> float:
    r"""The ``p`` quantile of Student's t with ``dof`` degrees of freedom (``inf``: the
    normal), by bisection on $F(t) = 1 - \tfrac12 I_{\nu/(\nu+t^2)}(\nu/2, 1/2)$
    (absolute error below 1e-9 for ``p`` up to 0.9999 and ``dof`` >= 1)."""
    if not (0.5 <= p < 1):
        raise ValueError(f"t_quantile needs 0.5 <= p < 1, got {p}.")
    if math.isinf(dof):
        return statistics.NormalDist().inv_cdf(p)
    lo, hi = 0.0, 1e4
    for _ in range(60):
        mid = (lo + hi) / 2
        lo, hi = (mid, hi) if float(_t_cdf(mid, float(dof))) < p else (lo, mid)
    return (lo + hi) / 2


def _covariance(vectors: np.ndarray, jackknife: bool) -> np.ndarray:
    """Sample covariance of the rows (``ddof=1``), or the jackknife's
    $(R-1)/R \\sum_r (x_r - \\bar x)(x_r - \\bar x)^\\top$."""
    d = vectors - vectors.mean(axis=0)
    r = vectors.shape[0]
    return (d.T @ d) * ((r - 1) / r if jackknife else 1 / (r - 1))


def smooth(loss_fn):
    """The loss whose Hessian ``uncertainty`` takes: an ``nd.AbstractLoss``'s
    ``curvature_loss()`` (an rmse FC loss squared), any other loss unchanged."""
    return loss_fn.curvature_loss() if isinstance(loss_fn, AbstractLoss) else loss_fn


@eqx.filter_jit
def _grad(loss_fn, params: FittedParameters, key, u):
    return jax.grad(lambda x: split_loss(loss_fn(params.at(x), key))[0])(u)


@eqx.filter_jit
def _values(params: FittedParameters, u):
    return params.to_values(u)


@eqx.filter_jit
def _slope(params: FittedParameters, u):
    # The transforms act elementwise: the Jacobian is diagonal.
    return jax.jvp(params.to_values, (u,), (jnp.ones_like(u),))[1]


def constrained(w: np.ndarray, v: np.ndarray) -> np.ndarray:
    """The coordinates the loss constrains: all but those dominating (a component of
    magnitude >= 0.5, or the largest) an eigen-direction whose eigenvalue is within
    ``SLOPPY`` times the largest of 0 (flat; slightly negative through noise)."""
    free = np.zeros(w.size, dtype=bool)
    for k in flat_directions(w, SLOPPY):
        component = np.abs(v[:, k])
        free |= component >= 0.5
        free[np.argmax(component)] = True
    return ~free


def _sources(level, noise_keys, leave_one_out) -> tuple[list, list]:
    """``uncertainty``'s arguments checked (``ValueError``): ``(noise_keys,
    leave_one_out)`` as lists."""
    if not (isinstance(level, float) and 0 < level < 1):
        raise ValueError(f"uncertainty level must be a number in (0, 1), got {level!r}.")
    noise_keys = list(noise_keys) if noise_keys is not None else []
    leave_one_out = list(leave_one_out) if leave_one_out is not None else []
    if len(noise_keys) == 1 or len(leave_one_out) == 1:
        raise ValueError("uncertainty needs at least 2 noise_keys and at least 2 "
                         "leave_one_out losses to estimate a spread (or None).")
    if not noise_keys and not leave_one_out:
        raise ValueError("uncertainty needs noise_keys, leave_one_out or both.")
    return noise_keys, leave_one_out


def _note(valid: bool, w, v, ok, labels, stochastic: bool) -> str:
    """``Uncertainty.note``: whether the intervals hold, and which coordinates have none."""
    free = [n for n, c in zip(labels, ok) if not c]
    if not valid:
        return (f"not at a minimum: the Hessian has eigenvalue {w[0]:.3g} along "
                f"{describe_direction(v[:, 0], labels)}; no interval")
    if free:
        # A simulated loss's curvature is that of its own short, noisy simulations; only
        # a deterministic loss's flatness is the data's (or its model's).
        which = ("not resolved by this simulated loss (flat or negative curvature; longer "
                 "simulations may still constrain them)" if stochastic else
                 "not constrained by this loss (flat or negative curvature)")
        return (f"{which}: "
                f"{', '.join(free)}, no interval; the other intervals hold "
                f"{'it' if len(free) == 1 else 'them'} at the fitted value")
    return "first-order intervals around a minimum of the loss"


def uncertainty(
    loss_fn: Callable[[Any, Any], Any],
    model: Any,
    where: Callable[[Any], Any],
    *,
    key: Key | None = None,
    noise_keys: Sequence[Key] | None = None,
    leave_one_out: Sequence[Callable[[Any, Any], Any]] | None = None,
    bounds: Any = None,
    level: float = 0.95,
) -> Uncertainty:
    r"""Error bars for fitted parameters $\hat u$ (in the fit's coordinates, ``bounds``
    as for ``nd.fit``), from both sources of variation, to first order around the fit
    (the theory of M-estimators; Efron & Stein 1981 for the jackknife):

    - **noise**: $\hat u$ minimises $L(u; \xi)$ for one noise realisation $\xi$ (``key``);
      another would move it by $-H^{-1}\nabla L(\hat u; \xi')$, so over realisations
      $\mathrm{Cov}_\xi(\hat u) \approx H^{-1}\,\mathrm{Cov}_{\xi'}[\nabla L(\hat u;
      \xi')]\,H^{-1}$ (the sandwich), the gradient's covariance estimated from
      ``noise_keys`` (independent of ``key``; >= 2).
    - **data**: each ``leave_one_out`` loss is the fit's loss with one run (or subject) left
      out of the target; one Newton step $\hat u_{(-r)} = \hat u - H^{-1}\nabla
      L_{(-r)}(\hat u)$ (same ``key``) stands for its refit, and the jackknife gives
      $\mathrm{Cov}(\hat u) \approx \frac{R-1}{R}\sum_r (\hat u_{(-r)} - \bar u)(\cdot)^\top$
      (>= 2 losses). It describes the spread over runs drawn like these, not over
      subjects unless the runs are subjects.

    $H$ is the Hessian of $L(\cdot; \xi)$ at $\hat u$ (``key``). It stands for the mean
    curvature over realisations, which fails for a loss whose curvature concentrates at
    each realisation's own minimum, such as a root mean square: an ``nd.FcLoss`` with
    ``metric="rmse"`` is therefore squared first (the same minimiser; on a noisy linear
    network, ``benchmarks/uncertainty.md``, the 95 % intervals held the true coupling 0.887
    of the time on the root, 0.963 on its square). For a loss of your own, pass a mean
    square rather than its root. The intervals assume
    $\hat u$ is a minimum (``valid`` says whether $H$ is positive definite) and that the
    loss is close to quadratic over the interval. With few keys or runs the variance
    estimates are themselves uncertain: the interval uses the Student-t quantile for the
    Welch-Satterthwaite degrees of freedom ($\nu_\xi$ = keys - 1, $\nu_r$ = runs - 1).
    Cost: (number of coordinates) Hessian-vector products (about 3 gradients each) plus
    one gradient per noise key and per left-out run; memory that of one gradient.

    **Arguments**:

    - ``loss_fn``, ``model`` (at the fitted values), ``where``, ``key``, ``bounds``: as
      for ``nd.fit``.
    - ``noise_keys``: fresh noise keys for the noise part, or ``None``.
    - ``leave_one_out``: losses ``loss(model, key)`` each with one run left out of the
      target (e.g. ``loss_fn.replace(target=nd.runs_fc(runs[:r] + runs[r + 1:]))`` for an
      ``nd.FcLoss``), or ``None``.
    - ``level``: the intervals' nominal coverage, in (0, 1).

    **Returns**: an ``Uncertainty``.
    """
    noise_keys, leave_one_out = _sources(level, noise_keys, leave_one_out)
    # Whether the loss is simulated (its own noise); a loss of the user's own is when it
    # is given noise keys.
    stochastic = (loss_fn.stochastic if isinstance(loss_fn, AbstractLoss) else
                  bool(noise_keys))
    loss_fn = smooth(loss_fn)
    leave_one_out = [smooth(fn) for fn in leave_one_out]
    params = FittedParameters(model, where, bounds)
    u0 = params.u0
    hessian = hessian_matrix(loss_fn, params, key)
    w, v = np.linalg.eigh(hessian)
    ok = constrained(w, v)
    sub = hessian[np.ix_(ok, ok)]
    valid = bool(ok.any() and np.linalg.eigvalsh(sub).min() > 0)
    inv = np.zeros_like(hessian)
    inv[np.ix_(ok, ok)] = np.linalg.inv(sub) if valid else np.nan
    cov_noise = cov_data = None
    if noise_keys:
        g = np.stack([np.asarray(_grad(loss_fn, params, k, u0)) for k in noise_keys])
        cov_noise = inv @ _covariance(g, jackknife=False) @ inv
    if leave_one_out:
        steps = np.stack([-inv @ np.asarray(_grad(fn, params, key, u0)) for fn in leave_one_out])
        cov_data = _covariance(steps, jackknife=True)
    var_n = np.diag(cov_noise) if cov_noise is not None else np.zeros(u0.size)
    var_d = np.diag(cov_data) if cov_data is not None else np.zeros(u0.size)
    var_n, var_d = np.where(ok, var_n, np.nan), np.where(ok, var_d, np.nan)
    sd_u = np.sqrt(var_n + var_d)
    nu_n, nu_d = max(len(noise_keys) - 1, 1), max(len(leave_one_out) - 1, 1)
    with np.errstate(invalid="ignore", divide="ignore"):
        dof = (var_n + var_d) ** 2 / (var_n**2 / nu_n + var_d**2 / nu_d)
    quantiles = np.array([t_quantile((1 + level) / 2, float(d)) if np.isfinite(d) else np.nan
                          for d in dof])
    slope = np.asarray(_slope(params, u0))
    u = np.asarray(u0)
    lower = np.asarray(_values(params, jnp.asarray(u - quantiles * sd_u, u0.dtype)))
    upper = np.asarray(_values(params, jnp.asarray(u + quantiles * sd_u, u0.dtype)))
    note = _note(valid, w, v, ok, params.labels, stochastic)
    sloppy = tuple(describe_direction(v[:, k], params.labels)
                   for k in flat_directions(w, SLOPPY))
    return Uncertainty(
        params.labels, np.asarray(_values(params, u0)), level,
        None if cov_noise is None else np.abs(slope) * np.sqrt(var_n),
        None if cov_data is None else np.abs(slope) * np.sqrt(var_d),
        np.abs(slope) * sd_u, lower, upper, dof, w[::-1], sloppy, ok, valid, note, hessian)
