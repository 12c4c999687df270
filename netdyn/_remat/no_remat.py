"""No checkpointing."""

import jax

from ._base import AbstractRemat


class NoRemat(AbstractRemat):
    """No checkpointing: reverse mode keeps every step's residuals (fastest, most memory).

    The loop is a scan over emission periods around a scan over the steps of a period,
    so only emitted samples are stacked.
    """

    def loop(self, step, emit, carry, n_steps, every):
        def period(c, _):
            c, _ = jax.lax.scan(lambda c_, __: (step(c_), None), c, length=every)
            return emit(c)

        return jax.lax.scan(period, carry, length=n_steps // every)
