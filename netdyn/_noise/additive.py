"""Additive noise."""

import equinox as eqx
import jax.numpy as jnp

from .._custom_types import Param, State
from ._base import AbstractNoise, to_names


class AdditiveNoise(AbstractNoise):
    r"""Additive noise: $dy = f\,dt + \sigma\, dW$.

    The increment of a step is $\sigma \sqrt{dt}\, z$, $z \sim N(0, 1)$. TVB's
    ``Additive(nsig=D)`` corresponds to ``sigma = sqrt(2 D)``.

    **Arguments**: ``sigma`` (scalar, ``[len(apply_to)]`` or ``[len(apply_to), nodes]``),
    ``apply_to`` the noisy state variables (all when ``None``).
    """

    sigma: Param
    apply_to: tuple[str, ...] | None = eqx.field(default=None, static=True, converter=to_names)

    def diffusion(self, y: State) -> State:
        sigma = jnp.asarray(self.sigma, y.dtype)
        if sigma.ndim == 1:
            sigma = sigma[:, None]
        return jnp.broadcast_to(sigma, y.shape)
