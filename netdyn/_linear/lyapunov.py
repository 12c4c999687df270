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

Derivatives by implicit differentiation (``jax.lax.custom_linear_solve``): the solve is
the inverse of the linear operator $\mathcal L(X) = A X + X A^\top$, whose derivatives with
respect to $A$ JAX takes from $\mathcal L$ itself; the tangent $\dot S$ then solves

$$ A \dot S + \dot S A^\top = -(\dot A S + S \dot A^\top + \dot Q), $$

and reverse mode the adjoint equation $A^\top \Lambda + \Lambda A + \bar S = 0$ ($\bar Q =
\Lambda$, $\bar A = \Lambda S^\top + \Lambda^\top S$), each by the same eigendecomposition,
to every order (Hessians too). The eigendecomposition itself is never differentiated
(JAX has no derivative for eigenvectors of non-symmetric matrices).
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


def lyapunov(a: Float[Array, "n n"], q: Float[Array, "n n"]) -> Float[Array, "n n"]:
    r"""The solution $S$ of the continuous Lyapunov equation $A S + S A^\top + Q = 0$, for a
    real, stable $A$ (every eigenvalue with a negative real part) and a real $Q$; for a
    symmetric $Q$, $S$ is the stationary covariance of $du = A u\,dt + B\,dW$ with
    $Q = B B^\top$.

    Solved through the eigendecomposition of $A$ (see the module's docstring), with
    derivatives of every order (forward and reverse mode) by further solves with the same
    decomposition. An $A$ with an eigenvalue of non-negative real part has no stationary
    covariance: the result is then meaningless (check the spectral abscissa, as
    ``nd.linear_fc`` does).

    Agrees with ``scipy.linalg.solve_continuous_lyapunov(A, -Q)`` (Bartels-Stewart).
    """
    e = eigen(a)
    et = e.transpose()
    return jax.lax.custom_linear_solve(
        lambda x: a @ x + x @ a.T, -q,
        solve=lambda _, c: sylvester_eigen(e, e, c),
        transpose_solve=lambda _, c: sylvester_eigen(et, et, c))


class BlockCovariance(NamedTuple):
    """The blocks of the stationary covariance of ``block_lyapunov``'s system: ``nn`` the
    driven block, ``hn`` the driven-by block against it, ``hh`` the driven-by block."""

    nn: Float[Array, "n n"]
    hn: Float[Array, "m n"]
    hh: Float[Array, "m m"]


class _Blocks(NamedTuple):
    """A matrix as its four blocks (neural ``n``, hemodynamic ``h``)."""

    nn: Array
    nh: Array
    hn: Array
    hh: Array


def _block_matmul(blocks: Float[Array, "k b b"], x: Float[Array, "m c"]) -> Float[Array, "m c"]:
    """``blockdiag(blocks) @ x``."""
    nb, b = blocks.shape[0], blocks.shape[1]
    return jnp.einsum("kij,kjc->kic", blocks, x.reshape(nb, b, -1)).reshape(nb * b, -1)


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

    Derivatives of every order (forward and reverse mode) by implicit differentiation with
    the same decompositions (see ``lyapunov``).

    **Returns** a ``BlockCovariance`` (``nn``, ``hn``, ``hh``).
    """
    en, eh = eigen(a_n), eigen(h_blocks)
    ent, eht = en.transpose(), eh.transpose()

    def operator(x: _Blocks) -> _Blocks:  # A X + X A^T, by blocks
        hx = lambda m: _block_matmul(h_blocks, m)  # noqa: E731
        return _Blocks(
            nn=a_n @ x.nn + x.nn @ a_n.T,
            nh=a_n @ x.nh + x.nn @ k.T + hx(x.nh.T).T,
            hn=k @ x.nn + hx(x.hn) + x.hn @ a_n.T,
            hh=k @ x.nh + hx(x.hh) + x.hn @ k.T + hx(x.hh.T).T,
        )

    def solve(_, c: _Blocks) -> _Blocks:  # A X + X A^T = C
        nn = sylvester_eigen(en, en, c.nn)
        nh = sylvester_eigen(en, eh, c.nh - nn @ k.T)
        hn = sylvester_eigen(eh, en, c.hn - k @ nn)
        hh = sylvester_eigen(eh, eh, c.hh - k @ nh - hn @ k.T)
        return _Blocks(nn, nh, hn, hh)

    def transpose_solve(_, c: _Blocks) -> _Blocks:  # A^T Y + Y A = C (A^T upper-triangular)
        hh = sylvester_eigen(eht, eht, c.hh)
        nh = sylvester_eigen(ent, eht, c.nh - k.T @ hh)
        hn = sylvester_eigen(eht, ent, c.hn - hh @ k)
        nn = sylvester_eigen(ent, ent, c.nn - k.T @ hn - nh @ k)
        return _Blocks(nn, nh, hn, hh)

    m = k.shape[0]
    zero_hn = jnp.zeros((m, q_n.shape[0]), q_n.dtype)
    c = _Blocks(-q_n, zero_hn.T, zero_hn, jnp.zeros((m, m), q_n.dtype))
    x = jax.lax.custom_linear_solve(operator, c, solve=solve, transpose_solve=transpose_solve)
    return BlockCovariance(x.nn, x.hn, x.hh)
