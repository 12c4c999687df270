r"""Continuous Lyapunov and Sylvester equations by eigendecomposition, with adjoints.

The stationary covariance $S$ of the linear SDE $du = A u\,dt + B\,dW$ (every eigenvalue
of $A$ with a negative real part) solves the continuous Lyapunov equation

$$ A S + S A^\top + Q = 0, \qquad Q = B B^\top. $$

Both solvers here work on eigendecompositions, $A = V \operatorname{diag}(\lambda) V^{-1}$:
with $\tilde C = V_P^{-1} C V_R^{-H}$, the Sylvester equation $P X + X R^\top = C$ has
$X = V_P\,[\tilde C_{ij} / (\mu_i + \bar\nu_j)]\,V_R^H$ ($\mu$, $\nu$ the eigenvalues of
$P$, $R$). For stable $P$ and $R$ every denominator has a real part below
$\max\operatorname{Re}\mu + \max\operatorname{Re}\nu < 0$: it never vanishes, however the
eigenvalues of $P$ and $R$ repeat or approach each other.

Reverse-mode derivatives come from one more Lyapunov solve (``jax.custom_vjp``): with
$\bar S$ the cotangent of $S$, solve $A^\top \Lambda + \Lambda A + \bar S = 0$; then
$\bar Q = \Lambda$ and $\bar A = (\Lambda + \Lambda^\top) S$. The eigendecomposition itself
is never differentiated (JAX has no derivative for eigenvectors).
"""

from typing import NamedTuple

import jax
import jax.numpy as jnp
from jaxtyping import Array, Complex, Float


class Eigen(NamedTuple):
    """An eigendecomposition $M = V \\operatorname{diag}(\\lambda) V^{-1}$ of a real matrix
    (or of a batch of diagonal blocks)."""

    values: Complex[Array, "... n"]
    vectors: Complex[Array, "... n n"]
    inverse: Complex[Array, "... n n"]

    def transpose(self) -> "Eigen":
        r"""The eigendecomposition of $M^\top = V^{-\top} \operatorname{diag}(\lambda) V^\top$."""
        swap = lambda m: jnp.swapaxes(m, -1, -2)  # noqa: E731
        return Eigen(self.values, swap(self.inverse), swap(self.vectors))


def eigen(m: Float[Array, "... n n"]) -> Eigen:
    """The eigendecomposition of a real square matrix (or a batch of them), outside of
    differentiation (``stop_gradient``)."""
    m = jax.lax.stop_gradient(m)
    values, vectors = jnp.linalg.eig(m)
    return Eigen(values, vectors, jnp.linalg.inv(vectors))


def _apply(v: Complex[Array, "..."], x: Array, left: bool) -> Array:
    """``v @ x`` (``left``) or ``x @ v^H`` for a dense ``v`` ``[n, n]`` or a block-diagonal
    one given as its blocks ``[blocks, b, b]``."""
    x = x.astype(v.dtype)
    if v.ndim == 2:
        return v @ x if left else x @ jnp.conj(v).T
    nb, b = v.shape[0], v.shape[1]
    if left:
        return jnp.einsum("kij,kjc->kic", v, x.reshape(nb, b, -1)).reshape(nb * b, -1)
    return jnp.einsum("rkj,kij->rki", x.reshape(-1, nb, b), jnp.conj(v)).reshape(-1, nb * b)


def _values(e: Eigen) -> Complex[Array, " n"]:
    return e.values.reshape(-1)


def sylvester_eigen(p: Eigen, r: Eigen, c: Float[Array, "m n"]) -> Float[Array, "m n"]:
    r"""$X$ with $P X + X R^\top = C$, for real $P$, $R$ given as eigendecompositions (dense
    or block-diagonal) with stable spectra. Real output."""
    ct = _apply(r.inverse, _apply(p.inverse, c, left=True), left=False)
    denominator = _values(p)[:, None] + jnp.conj(_values(r))[None, :]
    y = ct / denominator
    x = _apply(r.vectors, _apply(p.vectors, y, left=True), left=False)
    return jnp.real(x).astype(c.dtype)


@jax.custom_vjp
def lyapunov(a: Float[Array, "n n"], q: Float[Array, "n n"]) -> Float[Array, "n n"]:
    r"""The solution $S$ of the continuous Lyapunov equation $A S + S A^\top + Q = 0$, for a
    real, stable $A$ (every eigenvalue with a negative real part) and a real $Q$; for a
    symmetric $Q$, $S$ is the stationary covariance of $du = A u\,dt + B\,dW$ with
    $Q = B B^\top$.

    Solved through the eigendecomposition of $A$ (see the module's docstring). Its
    derivatives (reverse mode) solve the adjoint equation $A^\top \Lambda + \Lambda A +
    \bar S = 0$: $\bar Q = \Lambda$, $\bar A = (\Lambda + \Lambda^\top) S$. An $A$ with
    an eigenvalue of non-negative real part has no stationary covariance: the result is
    then meaningless (check the spectral abscissa, as ``nd.linear_fc`` does).

    Agrees with ``scipy.linalg.solve_continuous_lyapunov(A, -Q)`` (Bartels-Stewart).
    """
    e = eigen(a)
    return sylvester_eigen(e, e, -q)


def _lyapunov_fwd(a, q):
    e = eigen(a)
    s = sylvester_eigen(e, e, -q)
    return s, (e, s)


def _lyapunov_bwd(res, s_bar):
    e, s = res
    et = e.transpose()
    lam = sylvester_eigen(et, et, -s_bar)
    return (lam + lam.T) @ s, lam


lyapunov.defvjp(_lyapunov_fwd, _lyapunov_bwd)


class BlockCovariance(NamedTuple):
    """The blocks of the stationary covariance of ``block_lyapunov``'s system: ``nn`` the
    driven block, ``hn`` the driven-by block against it, ``hh`` the driven-by block."""

    nn: Float[Array, "n n"]
    hn: Float[Array, "m n"]
    hh: Float[Array, "m m"]


def _block_solve(en: Eigen, eh: Eigen, k, q_n) -> BlockCovariance:
    s_nn = sylvester_eigen(en, en, -q_n)
    s_hn = sylvester_eigen(eh, en, -(k @ s_nn))
    c = k @ s_hn.T
    s_hh = sylvester_eigen(eh, eh, -(c + c.T))
    return BlockCovariance(s_nn, s_hn, s_hh)


def _block_diagonal_eigen(h_blocks) -> Eigen:
    return eigen(h_blocks)


@jax.custom_vjp
def block_lyapunov(
    a_n: Float[Array, "n n"],
    k: Float[Array, "m n"],
    h_blocks: Float[Array, "blocks b b"],
    q_n: Float[Array, "n n"],
) -> BlockCovariance:
    r"""The stationary covariance of a block lower-triangular linear system: the Lyapunov
    equation $A S + S A^\top + Q = 0$ with

    $$ A = \begin{pmatrix} A_n & 0 \\ K & H \end{pmatrix}, \qquad
       Q = \begin{pmatrix} Q_n & 0 \\ 0 & 0 \end{pmatrix}, \qquad
       H = \operatorname{blockdiag}(H_1, \dots, H_N), $$

    the neural states $n$ driven by noise and the hemodynamic states $h$ driven by them
    (each region's Balloon a small block $H_i$). Solved block by block (Bartels-Stewart on
    eigendecompositions): $A_n S_{nn} + S_{nn} A_n^\top + Q_n = 0$, then the Sylvester
    equation $H S_{hn} + S_{hn} A_n^\top = -K S_{nn}$, then $H S_{hh} + S_{hh} H^\top =
    -(K S_{hn}^\top + S_{hn} K^\top)$: one eigendecomposition of $A_n$ and of each small
    block, never of the whole $A$, and no denominator is a difference of eigenvalues (the
    repeated eigenvalues of identical blocks are harmless).

    Derivatives (reverse mode) by the adjoint equation solved the same way, block by
    block in the opposite order (see ``lyapunov``).

    **Returns** a ``BlockCovariance`` (``nn``, ``hn``, ``hh``).
    """
    return _block_solve(eigen(a_n), _block_diagonal_eigen(h_blocks), k, q_n)


def _block_fwd(a_n, k, h_blocks, q_n):
    en, eh = eigen(a_n), _block_diagonal_eigen(h_blocks)
    s = _block_solve(en, eh, k, q_n)
    return s, (en, eh, k, s)


def _block_bwd(res, s_bar: BlockCovariance):
    en, eh, k, s = res
    ent, eht = en.transpose(), eh.transpose()
    # The adjoint A^T L + L A + S_bar = 0, with A^T block upper-triangular: the hh block
    # first, then the off-diagonal blocks, then nn. The cotangent of the whole symmetric S
    # has its hn block in both (h, n) and (n, h) places: hn.T stands for the latter.
    bar_hh, bar_hn, bar_nh = s_bar.hh, s_bar.hn, jnp.zeros_like(s_bar.hn.T)
    l_hh = sylvester_eigen(eht, eht, -bar_hh)
    l_nh = sylvester_eigen(ent, eht, -(bar_nh + k.T @ l_hh))
    l_hn = sylvester_eigen(eht, ent, -(bar_hn + l_hh @ k))
    l_nn = sylvester_eigen(ent, ent, -(s_bar.nn + k.T @ l_hn + l_nh @ k))
    # A_bar = (L + L^T) S, by blocks (S symmetric: S_nh = S_hn^T).
    m_nn, m_nh = l_nn + l_nn.T, l_nh + l_hn.T
    m_hn, m_hh = l_hn + l_nh.T, l_hh + l_hh.T
    a_bar_nn = m_nn @ s.nn + m_nh @ s.hn
    a_bar_hn = m_hn @ s.nn + m_hh @ s.hn
    a_bar_hh = m_hn @ s.hn.T + m_hh @ s.hh
    nb, b = eh.values.shape
    blocks = a_bar_hh.reshape(nb, b, nb, b)
    h_bar = jnp.einsum("kikj->kij", blocks)
    # Q_n is symmetric (a covariance): its cotangent is the symmetric part of L_nn.
    return a_bar_nn, a_bar_hn, h_bar, 0.5 * (l_nn + l_nn.T)


block_lyapunov.defvjp(_block_fwd, _block_bwd)
