r"""Continuous Lyapunov equations, dense and block lower-triangular, with derivatives of
every order.

The stationary covariance $S$ of the linear SDE $du = A u\,dt + B\,dW$ (every eigenvalue
of $A$ with a negative real part) solves the continuous Lyapunov equation

$$ A S + S A^\top + Q = 0, \qquad Q = B B^\top. $$

Both reduce to Sylvester equations $P X + X R^\top = C$, solved by one of two methods
(``netdyn/_linear/_sylvester.py``): eigendecompositions (``method="eig"``, fast on a CPU;
exact for every diagonalisable matrix) or the Cayley transform with Smith's doubling
(``method="doubling"``: matrix products only, for accelerators, and for matrices that are
not diagonalisable, such as a feed-forward chain of identical nodes).

Derivatives by implicit differentiation (``jax.lax.custom_linear_solve``): the solve is
the inverse of the linear operator $\mathcal L(X) = A X + X A^\top$, whose derivatives with
respect to $A$ JAX takes from $\mathcal L$ itself; the tangent $\dot S$ then solves

$$ A \dot S + \dot S A^\top = -(\dot A S + S \dot A^\top + \dot Q), $$

and reverse mode the adjoint equation $A^\top \Lambda + \Lambda A + \bar S = 0$ ($\bar Q =
\Lambda$, $\bar A = \Lambda S^\top + \Lambda^\top S$), each by the same eigendecomposition,
to every order (Hessians too). The eigendecomposition itself is never differentiated
(JAX has no derivative for eigenvectors of non-symmetric matrices).
"""

from typing import Literal, NamedTuple

import equinox as eqx
import jax
import jax.numpy as jnp
from jaxtyping import Array, Float

from ._sylvester import block_matmul, decompose, shift, sylvester

Method = Literal["eig", "doubling"]


def solve_lyapunov(
    a: Float[Array, "n n"], q: Float[Array, "n n"], method: Method = "eig"
) -> Float[Array, "n n"]:
    r"""``lyapunov`` without its check of the residual. The solution $S$ of the
    continuous Lyapunov equation $A S + S A^\top + Q = 0$, for a
    real, stable $A$ (every eigenvalue with a negative real part) and a real $Q$; for a
    symmetric $Q$, $S$ is the stationary covariance of $du = A u\,dt + B\,dW$ with
    $Q = B B^\top$.

    Solved through the eigendecomposition of $A$ (``method="eig"``) or by the Cayley
    transform and Smith's doubling (``method="doubling"``; see the module's docstring),
    with derivatives of every order (forward and reverse mode) by further solves with the
    same decomposition. An $A$ with an eigenvalue of non-negative real part has no stationary
    covariance: the result is then meaningless (check the spectral abscissa, as
    ``nd.linear_fc`` does).

    Agrees with ``scipy.linalg.solve_continuous_lyapunov(A, -Q)`` (Bartels-Stewart).
    """
    e = decompose(a, method, shift(method, a))
    et = e.transpose()
    return jax.lax.custom_linear_solve(
        lambda x: a @ x + x @ a.T, -q,
        solve=lambda _, c: sylvester(e, e, c),
        transpose_solve=lambda _, c: sylvester(et, et, c))


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


def solve_block_lyapunov(
    a_n: Float[Array, "n n"],
    k: Float[Array, "m n"],
    h_blocks: Float[Array, "blocks b b"],
    q_n: Float[Array, "n n"],
    method: Method = "eig",
) -> BlockCovariance:
    r"""``block_lyapunov`` without its check of the residual. The stationary covariance of
    a block lower-triangular linear system: the Lyapunov
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
    the same decompositions (see ``lyapunov``; ``method`` as there).

    **Returns** a ``BlockCovariance`` (``nn``, ``hn``, ``hh``).
    """
    p = shift(method, a_n, h_blocks)
    en, eh = decompose(a_n, method, p), decompose(h_blocks, method, p)
    ent, eht = en.transpose(), eh.transpose()

    def operator(x: _Blocks) -> _Blocks:  # A X + X A^T, by blocks
        hx = lambda m: block_matmul(h_blocks, m)  # noqa: E731
        return _Blocks(
            nn=a_n @ x.nn + x.nn @ a_n.T,
            nh=a_n @ x.nh + x.nn @ k.T + hx(x.nh.T).T,
            hn=k @ x.nn + hx(x.hn) + x.hn @ a_n.T,
            hh=k @ x.nh + hx(x.hh) + x.hn @ k.T + hx(x.hh.T).T,
        )

    def solve(_, c: _Blocks) -> _Blocks:  # A X + X A^T = C
        nn = sylvester(en, en, c.nn)
        nh = sylvester(en, eh, c.nh - nn @ k.T)
        hn = sylvester(eh, en, c.hn - k @ nn)
        hh = sylvester(eh, eh, c.hh - k @ nh - hn @ k.T)
        return _Blocks(nn, nh, hn, hh)

    def transpose_solve(_, c: _Blocks) -> _Blocks:  # A^T Y + Y A = C (A^T upper-triangular)
        hh = sylvester(eht, eht, c.hh)
        nh = sylvester(ent, eht, c.nh - k.T @ hh)
        hn = sylvester(eht, ent, c.hn - hh @ k)
        nn = sylvester(ent, ent, c.nn - k.T @ hn - nh @ k)
        return _Blocks(nn, nh, hn, hh)

    m = k.shape[0]
    zero_hn = jnp.zeros((m, q_n.shape[0]), q_n.dtype)
    c = _Blocks(-q_n, zero_hn.T, zero_hn, jnp.zeros((m, m), q_n.dtype))
    x = jax.lax.custom_linear_solve(operator, c, solve=solve, transpose_solve=transpose_solve)
    return BlockCovariance(x.nn, x.hn, x.hh)


def _size(m: Array) -> Array:
    return jnp.max(jnp.abs(m))


def _relative(residual: Array, *terms: Array) -> Array:
    return _size(residual) / jnp.maximum(sum(terms), jnp.finfo(residual.dtype).tiny)


def lyapunov_residual(a, q, s) -> Float[Array, ""]:
    r"""$\|A S + S A^\top + Q\|_{\max}$ relative to $2 \|A\| \|S\| + \|Q\|$ (max norms),
    outside of differentiation."""
    a, q, s = jax.lax.stop_gradient((a, q, s))
    return _relative(a @ s + s @ a.T + q, 2 * _size(a) * _size(s), _size(q))


def block_lyapunov_residual(a_n, k, h_blocks, q_n, cov: BlockCovariance) -> Float[Array, ""]:
    """The relative residual of ``block_lyapunov``'s solution: the largest over its blocks
    of the residual against the size of that block's terms, outside of differentiation."""
    a_n, k, h_blocks, q_n, cov = jax.lax.stop_gradient((a_n, k, h_blocks, q_n, cov))
    h = lambda x: block_matmul(h_blocks, x)  # noqa: E731
    b = h_blocks.shape[-1]
    a, kk, hh = _size(a_n), _size(k), _size(h_blocks)
    nn = a_n @ cov.nn + cov.nn @ a_n.T + q_n
    hn = k @ cov.nn + h(cov.hn) + cov.hn @ a_n.T
    cross = k @ cov.hn.T + h(cov.hh)
    return jnp.max(jnp.stack([
        _relative(nn, 2 * a * _size(cov.nn), _size(q_n)),
        _relative(hn, kk * _size(cov.nn), b * hh * _size(cov.hn), a * _size(cov.hn)),
        _relative(cross + cross.T, 2 * kk * _size(cov.hn), 2 * b * hh * _size(cov.hh)),
    ]))


def converged(residual: Array) -> Array:
    """Whether a relative residual shows a successful solve: at most the square root of the
    dtype's machine epsilon (the rounding error of a good solve is near epsilon times the
    condition of the eigenvectors)."""
    return residual <= jnp.sqrt(jnp.finfo(residual.dtype).eps)


_UNSOLVED = ("{name}: the solve did not converge (a large residual): with method='eig', the "
             "matrix is probably not diagonalisable (a repeated eigenvalue with too few "
             "eigenvectors, e.g. a feed-forward chain of identical nodes): pass "
             "method='doubling'; with 'doubling', A is probably not stable.")


def lyapunov(
    a: Float[Array, "n n"], q: Float[Array, "n n"], method: Method = "eig"
) -> Float[Array, "n n"]:
    r"""The solution $S$ of the continuous Lyapunov equation $A S + S A^\top + Q = 0$, for a
    real, stable $A$ (every eigenvalue with a negative real part) and a real $Q$; for a
    symmetric $Q$, $S$ is the stationary covariance of $du = A u\,dt + B\,dW$ with
    $Q = B B^\top$.

    ``method="eig"`` (default) solves through the eigendecomposition of $A$ (fast on a CPU;
    $A$ must be diagonalisable), ``"doubling"`` by the Cayley transform and Smith's
    doubling (matrix products only: accelerators, and matrices that are not
    diagonalisable); see the module's docstring. Derivatives of every order (forward and
    reverse mode) by further solves with the same decomposition.

    Agrees with ``scipy.linalg.solve_continuous_lyapunov(A, -Q)`` (Bartels-Stewart).

    **Raises** (``eqx.error_if``) when the relative residual of the solution exceeds the
    square root of machine epsilon: an $A$ that is not stable (no stationary covariance),
    or, with ``"eig"``, one that is not diagonalisable.
    """
    s = solve_lyapunov(a, q, method)
    return eqx.error_if(s, ~converged(lyapunov_residual(a, q, s)),
                        _UNSOLVED.format(name="lyapunov"))


def block_lyapunov(
    a_n: Float[Array, "n n"],
    k: Float[Array, "m n"],
    h_blocks: Float[Array, "blocks b b"],
    q_n: Float[Array, "n n"],
    method: Method = "eig",
) -> BlockCovariance:
    r"""The stationary covariance of a block lower-triangular linear system: the Lyapunov
    equation $A S + S A^\top + Q = 0$ with

    $$ A = \begin{pmatrix} A_n & 0 \\ K & H \end{pmatrix}, \qquad
       Q = \begin{pmatrix} Q_n & 0 \\ 0 & 0 \end{pmatrix}, \qquad
       H = \operatorname{blockdiag}(H_1, \dots, H_N), $$

    the neural states $n$ driven by noise and the hemodynamic states $h$ driven by them
    (each region's Balloon a small block $H_i$, ``h_blocks`` ``[N, b, b]``). Solved block
    by block: $A_n S_{nn} + S_{nn} A_n^\top + Q_n = 0$, then the Sylvester equation
    $H S_{hn} + S_{hn} A_n^\top = -K S_{nn}$, then $H S_{hh} + S_{hh} H^\top =
    -(K S_{hn}^\top + S_{hn} K^\top)$: decompositions of $A_n$ and of each small block,
    never of the whole $A$, and no denominator is a difference of eigenvalues (the repeated
    eigenvalues of identical blocks are harmless). ``method`` and derivatives as for
    ``lyapunov``; ``Q_n`` symmetric.

    **Returns** a ``BlockCovariance`` (``nn``, ``hn``, ``hh``).

    **Raises** (``eqx.error_if``) as ``lyapunov``.
    """
    cov = solve_block_lyapunov(a_n, k, h_blocks, q_n, method)
    bad = ~converged(block_lyapunov_residual(a_n, k, h_blocks, q_n, cov))
    return BlockCovariance(*(eqx.error_if(x, bad, _UNSOLVED.format(name="block_lyapunov"))
                             for x in cov))
