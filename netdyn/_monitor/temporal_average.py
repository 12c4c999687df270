"""Temporal average monitor."""

import equinox as eqx
import jax.numpy as jnp
from jaxtyping import Array, Float

from ._base import AbstractMonitor
from ._checks import check_warmup, to_variables


class TemporalAverage(AbstractMonitor):
    r"""Mean of the state over each period (TVB's ``TemporalAverage``):

    $$ \bar y_k = \frac{1}{m} \sum_{n = km + 1}^{(k+1)m} y_n, \qquad m = T / \Delta t, $$

    with ``T`` the period.

    Sample ``k`` is stamped, as in TVB, at the end of its window minus half a period.
    """

    period: float = eqx.field(static=True)
    variables: tuple[str, ...] | None = eqx.field(
        default=None, static=True, converter=to_variables
    )
    warmup: float = eqx.field(default=0.0, static=True)

    def __check_init__(self):
        check_warmup(self)

    def init(self, y: Float[Array, "k nodes"], dt: float):
        return jnp.zeros_like(y), jnp.zeros((), jnp.int32)

    def update(self, state, y: Float[Array, "k nodes"], dt: float):
        total, count = state
        return total + y, count + 1

    def emit(self, state, dt: float):
        total, count = state
        mean = total / count.astype(total.dtype)
        return (jnp.zeros_like(total), jnp.zeros_like(count)), mean

    def sample_offset(self, period: float, dt: float) -> float:
        return -0.5 * period
