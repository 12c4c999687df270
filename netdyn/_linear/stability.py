"""The spectral abscissa of a Jacobian: how stable a fixed point is."""

import jax
import jax.numpy as jnp
from jaxtyping import Array, Float

from ._sylvester import decompose


@jax.custom_jvp
def spectral_abscissa(a: Float[Array, "n n"]) -> Float[Array, ""]:
    r"""$\alpha(A) = \max_k \operatorname{Re} \lambda_k(A)$: negative when the linear system
    $\dot u = A u$ is stable; $-1/\alpha$ is the time constant of its slowest mode.

    Derivative (first order) by eigenvalue perturbation, $\dot\alpha = \operatorname{Re}
    (\ell_k^\top \dot A\, r_k)$ for the leading eigenvalue $\lambda_k$ with right and left
    eigenvectors $r_k$, $\ell_k$ ($\ell_k^\top r_k = 1$), valid where $\lambda_k$ is simple;
    second derivatives hold the eigenvectors fixed (approximate)."""
    return jnp.max(jnp.real(decompose(a, "eig", None).values))


@spectral_abscissa.defjvp
def _spectral_abscissa_jvp(primals, tangents):
    (a,), (a_dot,) = primals, tangents
    e = decompose(a, "eig", None)
    k = jnp.argmax(jnp.real(e.values))
    rate = e.inverse[k] @ (a_dot.astype(e.vectors.dtype) @ e.vectors[:, k])
    return jnp.real(e.values[k]).astype(a.dtype), jnp.real(rate).astype(a.dtype)
