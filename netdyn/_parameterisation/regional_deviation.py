"""A regional parameter as a baseline plus mean-free deviations."""

import jax.numpy as jnp
from jaxtyping import Array, Float

from .._custom_types import ArrayLike, Scalar
from ._base import AbstractParameterisation


class RegionalDeviation(AbstractParameterisation):
    r"""A regional parameter as a baseline plus mean-free deviations, one per region:

    $$ P_i = P_b + \delta_i - \frac{1}{N}\sum_j \delta_j. $$

    The network-wide level (``baseline``) and the regional pattern (``deviations``) are
    separate leaves, so a fit can give them separate step sizes, and the pattern cannot
    drift the level (its mean is removed).

    **Arguments**: ``baseline`` (a scalar), ``deviations`` ``[nodes]`` (e.g.
    ``jnp.zeros(n)``).
    """

    baseline: Scalar
    deviations: Float[Array, " nodes"]

    def __init__(self, baseline: Scalar, deviations: ArrayLike):
        self.baseline = baseline
        self.deviations = jnp.asarray(deviations, dtype=float)

    def __check_init__(self):
        if jnp.ndim(self.deviations) != 1:
            raise ValueError("RegionalDeviation deviations must be a vector [nodes], got "
                             f"shape {jnp.shape(self.deviations)}.")
        if jnp.ndim(self.baseline) != 0:
            raise ValueError("RegionalDeviation baseline must be a scalar, got shape "
                             f"{jnp.shape(self.baseline)}.")

    def value(self) -> Float[Array, " nodes"]:
        d = jnp.asarray(self.deviations)
        return self.baseline + d - jnp.mean(d)
