"""Kuramoto (sine of phase difference) coupling, instantaneous and delayed."""

import equinox as eqx
import jax.numpy as jnp
from jaxtyping import Array, Float

from .._custom_types import Param
from .._graph._base import Interpolation
from ._base import AbstractDelayedCoupling, AbstractInstantaneousCoupling


class KuramotoSine(AbstractInstantaneousCoupling):
    r"""Kuramoto coupling without delays, as TVB's ``Kuramoto`` coupling:

    $$ c_i = G \sum_j W_{ij} \sin(x_j - x_i), $$

    with weights ``W[target, source]``.

    **Normalisation.** TVB 2.10 writes ``post(gx) = a / gx.shape[0] * gx``, which reads as
    $a / N$, but its ``Kuramoto`` coupling is a ``SparseCoupling`` whose ``gx`` has shape
    ``(n_cvar, n_node, n_mode)``: it divides by the number of coupled variables (1), not
    by the number of nodes. This class reproduces what TVB computes, with no $1/N$. For
    the classical Kuramoto (1975) form $\frac{K}{N} \sum_j \sin(\theta_j - \theta_i)$ pass
    ``G = K / N``.

    **Arguments**: ``G`` global coupling strength (TVB's ``a``, default 1.0 as TVB).

    **Reference**: Kuramoto (1975), *Self-entrainment of a population of coupled
    non-linear oscillators*, Lecture Notes in Physics 39:420-422.
    """

    G: Param = 1.0

    def pre(self, x_i: Float[Array, "k ..."], x_j: Float[Array, "k ..."]) -> Float[Array, "k ..."]:
        return jnp.sin(x_j - x_i)

    def post(self, gx: Float[Array, "k nodes"]) -> Float[Array, "k nodes"]:
        return self.G * gx


class DelayedKuramotoSine(AbstractDelayedCoupling):
    r"""Delayed Kuramoto coupling, as TVB's ``Kuramoto`` coupling with delays:

    $$ c_i(t) = G \sum_j W_{ij} \sin\big(x_j(t - d_{ij}) - x_i(t)\big), $$

    with weights ``W[target, source]``; the target's own phase is not delayed (as TVB).
    No $1/N$ factor, as TVB (see ``KuramotoSine``): pass ``G = K / N`` for the classical
    normalisation.

    **Arguments**: ``G`` global coupling strength (TVB's ``a``, default 1.0),
    ``interpolation`` (``"nearest"`` or ``"linear"``, see ``AbstractDelayedCoupling``).

    **Reference**: Kuramoto (1975); Yeung & Strogatz (1999), *Time delay in the Kuramoto
    model of coupled oscillators*, Phys. Rev. Lett. 82:648.
    """

    G: Param = 1.0
    interpolation: Interpolation = eqx.field(default="nearest", static=True)

    def pre(self, x_i: Float[Array, "k ..."], x_j: Float[Array, "k ..."]) -> Float[Array, "k ..."]:
        return jnp.sin(x_j - x_i)

    def post(self, gx: Float[Array, "k nodes"]) -> Float[Array, "k nodes"]:
        return self.G * gx
