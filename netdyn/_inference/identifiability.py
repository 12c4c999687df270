"""``identifiability``: the loss's Hessian and the Gauss-Newton (Fisher) information of a
fit's parameters, their eigen-spectra, and the directions the data do not constrain."""

from collections.abc import Callable
from typing import Any, NamedTuple

import equinox as eqx
import jax
import jax.numpy as jnp
import numpy as np

from .._custom_types import Key
from .._fit.step import split_loss
from .._loss._base import AbstractLoss
from .._parameters.fitted import FittedParameters


class Identifiability(NamedTuple):
    r"""What ``identifiability`` measured, in the fit's coordinates $u$ (one per scalar
    of the selected leaves; the unconstrained coordinate of a bounded leaf).

    - ``names``: one label per coordinate, ``"coupling.G"`` or ``"dynamics.I_o[3]"``.
    - ``loss``, ``gradient``: $L(u)$ and $\nabla L(u)$.
    - ``hessian``: $H = \nabla^2 L(u)$, symmetrised.
    - ``fisher``: $F = J^\top J$ with $J = \partial r / \partial u$ the Jacobian of the
      residuals $r$ (an ``nd.AbstractLoss``'s own ``residuals``, e.g. the FC's upper
      triangle), or ``None`` when there are no residuals. For an observation
      $r + \varepsilon$ with independent noise of variance $s^2$ per entry, $F / s^2$ is
      the Fisher information and $\sqrt{\mathrm{diag}((F/s^2)^{-1})}$ the Cramer-Rao
      bound on each coordinate's standard deviation.
    - ``hessian_eigenvalues`` / ``fisher_eigenvalues``: descending; the matching
      ``*_eigenvectors`` are their columns.
    - ``sloppy``: the eigen-directions of ``fisher`` (of ``hessian`` without residuals)
      whose eigenvalue is below ``sloppy_ratio`` times the largest: what the data do not
      constrain, each written as its largest components (``"0.71 a - 0.71 b"``).
    """

    names: tuple[str, ...]
    loss: float
    gradient: np.ndarray
    hessian: np.ndarray
    hessian_eigenvalues: np.ndarray
    hessian_eigenvectors: np.ndarray
    fisher: np.ndarray | None
    fisher_eigenvalues: np.ndarray | None
    fisher_eigenvectors: np.ndarray | None
    sloppy: tuple[str, ...]

    def as_dict(self) -> dict:
        """Plain lists and numbers, for JSON."""
        out = {}
        for k, v in self._asdict().items():
            out[k] = v.tolist() if isinstance(v, np.ndarray) else v
        out["names"], out["sloppy"] = list(self.names), list(self.sloppy)
        return out


def flat_directions(w: np.ndarray, ratio: float) -> np.ndarray:
    """The indices of the eigenvalues ``w`` within ``ratio`` times the largest magnitude of
    0: the sloppy (flat) directions, slightly negative ones (noise) included."""
    return np.flatnonzero(np.abs(w) <= ratio * np.max(np.abs(w)))


def describe_direction(vector: np.ndarray, names, top: int = 3, floor: float = 0.2) -> str:
    """A unit vector as its largest components, ``"0.71 a - 0.71 b"`` (components of
    magnitude below ``floor`` are left out, at most ``top`` are shown)."""
    v = np.asarray(vector, dtype=float)
    v = v * np.sign(v[np.argmax(np.abs(v))])  # largest component positive
    order = [i for i in np.argsort(-np.abs(v))[:top] if abs(v[i]) >= floor] or [0]
    text = ""
    for k, i in enumerate(order):
        sign = "-" if v[i] < 0 else ("+" if k else "")
        text += f"{' ' if k else ''}{sign}{' ' if k else ''}{abs(v[i]):.2f} {names[i]}"
    return text


def _eigen(matrix: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    w, v = np.linalg.eigh(matrix)
    order = np.argsort(-w)
    return w[order], v[:, order]


@eqx.filter_jit
def _hvp(loss_fn, params: FittedParameters, key, u, v):
    """``((value, gradient), Hessian-vector product)`` at ``u`` along ``v``: the forward
    pass over ``jax.value_and_grad`` gives the value and gradient with the product."""
    def loss(x):
        return split_loss(loss_fn(params.at(x), key))[0]

    (value, grad), (_, hvp) = jax.jvp(jax.value_and_grad(loss), (u,), (v,))
    return (value, grad), hvp


@eqx.filter_jit
def _residual_jvp(residuals, params: FittedParameters, key, u, v):
    return jax.jvp(lambda x: jnp.ravel(residuals(params.at(x), key)), (u,), (v,))[1]


def hessian_matrix(loss_fn, params: FittedParameters, key, *, with_gradient: bool = False):
    """The symmetrised Hessian of ``loss_fn(params.at(u), key)`` at ``params.u0``, one
    column per forward-over-reverse product (``jax.jvp`` of ``jax.grad``): memory stays
    that of one gradient. ``with_gradient``: ``(hessian, value, gradient)``, the value and
    gradient from the first product's forward pass."""
    u0 = params.u0
    out = [_hvp(loss_fn, params, key, u0, jnp.asarray(e, u0.dtype)) for e in np.eye(u0.size)]
    h = np.stack([np.asarray(col) for _, col in out], axis=1)
    h = (h + h.T) / 2
    if not with_gradient:
        return h
    value, grad = out[0][0]
    return h, float(value), np.asarray(grad)


def _default_residuals(loss_fn) -> Callable[[Any, Any], Any] | None:
    if not isinstance(loss_fn, AbstractLoss):
        return None
    return loss_fn.residuals


def identifiability(
    loss_fn: Callable[[Any, Any], Any],
    model: Any,
    where: Callable[[Any], Any],
    *,
    key: Key | None = None,
    bounds: Any = None,
    residuals: Callable[[Any, Any], Any] | None = None,
    sloppy_ratio: float = 1e-3,
) -> Identifiability:
    r"""Local identifiability of the leaves ``where`` selects (after Gutenkunst et al.
    2007, "Universally sloppy parameter sensitivities in systems biology models", PLoS
    Comput Biol 3:e189).

    In the fit's coordinates $u$ (``bounds`` as for ``nd.fit``: a bounded leaf enters
    through its unconstrained coordinate), computes the Hessian of the loss

    $$ H_{jk} = \frac{\partial^2 L}{\partial u_j \partial u_k} $$

    column by column as Hessian-vector products (forward-over-reverse: ``jax.jvp`` of
    ``jax.grad``), and the Gauss-Newton information $F = J^\top J$ of the residuals $r(u)$
    column by column as Jacobian-vector products. Each product runs through the
    simulation with the solver's remat strategy, one coordinate at a time, so memory
    stays what one gradient needs; the cost is about (number of coordinates) x (3
    gradients + 1 forward). Every evaluation uses the same ``key`` (common noise).

    Small eigenvalues of $F$ (or $H$) are *sloppy* directions: combinations of
    parameters that change the loss little, which the data do not pin down. A large
    spread of the spectrum over decades is typical of models fitted to FC.

    **Arguments**:

    - ``loss_fn``, ``model``, ``where``, ``key``, ``bounds``: as for ``nd.fit``.
    - ``residuals``: ``residuals(model, key)`` returning the vector the loss compares
      with data; ``None``: an ``nd.AbstractLoss``'s ``residuals`` (the FC's upper
      triangle for an FC loss), else no Gauss-Newton information.
    - ``sloppy_ratio``: eigenvalues below this fraction of the largest are sloppy.

    **Returns**: an ``Identifiability``.
    """
    if not (np.isfinite(sloppy_ratio) and 0 < sloppy_ratio < 1):
        raise ValueError(f"identifiability sloppy_ratio must be in (0, 1), got {sloppy_ratio}.")
    params = FittedParameters(model, where, bounds)
    names, u0 = params.labels, params.u0
    dtype = u0.dtype
    hessian, value, grad = hessian_matrix(loss_fn, params, key, with_gradient=True)
    h_w, h_v = _eigen(hessian)
    basis = np.eye(u0.size)

    residuals = residuals if residuals is not None else _default_residuals(loss_fn)
    fisher = f_w = f_v = None
    if residuals is not None:
        jac = np.stack([np.asarray(_residual_jvp(residuals, params, key, u0,
                                                 jnp.asarray(e, dtype))) for e in basis],
                       axis=1)
        fisher = jac.T @ jac
        f_w, f_v = _eigen(fisher)
    w, v = (f_w, f_v) if fisher is not None else (h_w, h_v)
    sloppy = tuple(f"{w[k]:.3g}: {describe_direction(v[:, k], names)}"
                   for k in flat_directions(w, sloppy_ratio))
    return Identifiability(names, float(value), np.asarray(grad), hessian, h_w, h_v,
                           fisher, f_w, f_v, sloppy)
