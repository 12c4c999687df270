r"""Sylvester equations $P X + X R^\top = C$ for real, stable $P$ and $R$ (dense, or
block-diagonal given as their blocks ``[blocks, b, b]``), by two methods.

**Eigendecompositions** (``Eigen``): with $P = V_P \operatorname{diag}(\mu) V_P^{-1}$,
$R = V_R \operatorname{diag}(\nu) V_R^{-1}$ and $\tilde C = V_P^{-1} C V_R^{-H}$,
$X = V_P\,[\tilde C_{ij} / (\mu_i + \bar\nu_j)]\,V_R^H$. Every denominator has a real part
below $\max\operatorname{Re}\mu + \max\operatorname{Re}\nu < 0$: it never vanishes, however
eigenvalues repeat; but $V$ must be invertible (a defective matrix, with fewer
eigenvectors than a repeated eigenvalue's multiplicity, is not).

**Cayley transform and Smith's doubling** (``Cayley``): with a shift $p > 0$,
$(P + pI) X (R + pI)^\top - (P - pI) X (R - pI)^\top = 2p\,C$, so that
$X = P_d X R_d^\top + C_d$ with $P_d = (P - pI)^{-1} (P + pI)$ (spectral radius < 1 for a
stable $P$), $C_d = -2p\,(P - pI)^{-1} C (R - pI)^{-\top}$, and
$X = \sum_k P_d^k C_d (R_d^\top)^k$, summed by doubling: $X \leftarrow X + P_j X R_j^\top$,
$P_{j+1} = P_j^2$ (Smith 1968). Matrix products only; no eigenvectors needed.

Both are used inside ``jax.lax.custom_linear_solve`` and never differentiated.

**References**: Bartels & Stewart (1972), Comm. ACM 15(9):820-826; Smith (1968), SIAM J.
Appl. Math. 16(1):198-201; Penzl (1999), SIAM J. Sci. Comput. 21(4):1401-1418.
"""

from typing import NamedTuple

import jax
import jax.numpy as jnp
from jaxtyping import Array, Complex, Float, Inexact

MAX_DOUBLINGS = 64


def _swap(m: Array) -> Array:
    return jnp.swapaxes(m, -1, -2)


class Eigen(NamedTuple):
    """An eigendecomposition $M = V \\operatorname{diag}(\\lambda) V^{-1}$ of a real matrix
    (or of a batch of diagonal blocks)."""

    values: Complex[Array, "... n"]
    vectors: Complex[Array, "... n n"]
    inverse: Complex[Array, "... n n"]

    def transpose(self) -> "Eigen":
        r"""The eigendecomposition of $M^\top = V^{-\top} \operatorname{diag}(\lambda) V^\top$."""
        return Eigen(self.values, _swap(self.inverse), _swap(self.vectors))


class Cayley(NamedTuple):
    """The Cayley transform of a real matrix (or of a batch of diagonal blocks) with shift
    ``p``: ``inverse`` $= (M - pI)^{-1}$ and ``transform`` $= (M - pI)^{-1} (M + pI)$."""

    inverse: Float[Array, "... n n"]
    transform: Float[Array, "... n n"]
    p: Float[Array, ""]

    def transpose(self) -> "Cayley":
        """The transform of $M^\\top$ (both factors are functions of $M$ and commute)."""
        return Cayley(_swap(self.inverse), _swap(self.transform), self.p)


def _norm_inf(m: Float[Array, "... n n"]) -> Float[Array, ""]:
    return jnp.max(jnp.sum(jnp.abs(m), axis=-1))


def shift(method: str, *matrices: Float[Array, "..."]) -> Float[Array, ""] | None:
    r"""The Cayley shift for ``method="doubling"`` (``None`` for ``"eig"``): the geometric
    mean of bounds on the eigenvalues' magnitudes of all ``matrices``,
    $\sqrt{\max \|M\|_\infty / \max \|M^{-1}\|_\infty}$, which balances the convergence of
    the fastest and the slowest modes."""
    if method == "eig":
        return None
    if method != "doubling":
        raise ValueError(f"Lyapunov method must be 'eig' or 'doubling', got {method!r}.")
    matrices = [jax.lax.stop_gradient(m) for m in matrices]
    high = jnp.max(jnp.stack([_norm_inf(m) for m in matrices]))
    low = jnp.max(jnp.stack([_norm_inf(jnp.linalg.inv(m)) for m in matrices]))
    return jnp.sqrt(high / low)


def decompose(m: Float[Array, "... n n"], method: str, p) -> Eigen | Cayley:
    """``m`` (a matrix or a batch of blocks) prepared for ``sylvester``, outside of
    differentiation (``stop_gradient``)."""
    m = jax.lax.stop_gradient(m)
    if method == "eig":
        values, vectors = jnp.linalg.eig(m)
        return Eigen(values, vectors, jnp.linalg.inv(vectors))
    eye = jnp.broadcast_to(jnp.eye(m.shape[-1], dtype=m.dtype), m.shape)
    inverse = jnp.linalg.inv(m - p * eye)
    return Cayley(inverse, inverse @ (m + p * eye), p)


def block_matmul(
    blocks: Inexact[Array, "k b b"], x: Inexact[Array, "m c"]
) -> Inexact[Array, "m c"]:
    """``blockdiag(blocks) @ x``."""
    nb, b = blocks.shape[0], blocks.shape[1]
    return jnp.einsum("kij,kjc->kic", blocks, x.reshape(nb, b, -1)).reshape(nb * b, -1)


def _left(v: Array, x: Array) -> Array:
    """``v @ x`` for a dense ``v`` or one given as its diagonal blocks."""
    x = x.astype(v.dtype)
    return v @ x if v.ndim == 2 else block_matmul(v, x)


def _right_t(x: Array, v: Array) -> Array:
    """``x @ v^T`` for a dense ``v`` or one given as its diagonal blocks."""
    return _left(v, x.T).T


def _sylvester_eigen(p: Eigen, r: Eigen, c: Float[Array, "m n"]) -> Float[Array, "m n"]:
    ct = _right_t(_left(p.inverse, c), jnp.conj(r.inverse))
    y = ct / (p.values.reshape(-1)[:, None] + jnp.conj(r.values.reshape(-1))[None, :])
    x = _right_t(_left(p.vectors, y), jnp.conj(r.vectors))
    return jnp.real(x).astype(c.dtype)


def _sylvester_doubling(p: Cayley, r: Cayley, c: Float[Array, "m n"]) -> Float[Array, "m n"]:
    x = -2 * p.p * _right_t(_left(p.inverse, c), r.inverse)
    tol = jnp.finfo(c.dtype).eps

    def going(carry):
        k, x, _, _, change = carry
        return (k < MAX_DOUBLINGS) & (change > tol * jnp.max(jnp.abs(x)))

    def double(carry):
        k, x, pk, rk, _ = carry
        term = _right_t(_left(pk, x), rk)
        return k + 1, x + term, pk @ pk, rk @ rk, jnp.max(jnp.abs(term))  # blocks: batched

    inf = jnp.asarray(jnp.inf, c.dtype)
    return jax.lax.while_loop(going, double, (0, x, p.transform, r.transform, inf))[1]


def sylvester(p: Eigen | Cayley, r: Eigen | Cayley, c: Float[Array, "m n"]) -> Float[Array, "m n"]:
    r"""$X$ with $P X + X R^\top = C$, for $P$, $R$ prepared by ``decompose`` with the same
    method (and, for ``Cayley``, the same shift). Real output."""
    if isinstance(p, Eigen) and isinstance(r, Eigen):
        return _sylvester_eigen(p, r, c)
    if isinstance(p, Cayley) and isinstance(r, Cayley):
        return _sylvester_doubling(p, r, c)
    raise ValueError("sylvester: P and R must be prepared by the same method.")
