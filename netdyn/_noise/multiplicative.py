"""Multiplicative (state-proportional) noise."""

import equinox as eqx
import jax.numpy as jnp

from .._custom_types import Param, State
from ._base import AbstractNoise, to_names


class MultiplicativeNoise(AbstractNoise):
    r"""Multiplicative noise: $dy = f\,dt + \sigma\, y\, dW$ (Itô, as TVB's ``Multiplicative``
    with its default linear equation).

    **Arguments**: ``sigma`` (scalar, ``[len(apply_to)]`` or ``[len(apply_to), nodes]``),
    ``apply_to`` the noisy state variables (all when ``None``).
    """

    sigma: Param
    apply_to: tuple[str, ...] | None = eqx.field(default=None, static=True, converter=to_names)

    def diffusion(self, y: State) -> State:
        sigma = jnp.asarray(self.sigma, y.dtype)
        if sigma.ndim == 1:
            sigma = sigma[:, None]
        return sigma * y
