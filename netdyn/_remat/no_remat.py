"""No checkpointing."""

import equinox as eqx

from ._base import AbstractRemat
from ._schedule import resolve_unroll, time_loop


class NoRemat(AbstractRemat):
    """No checkpointing: reverse mode keeps every step's residuals (fastest, most memory).

    The loop is a scan over emission periods around a scan over the steps of a period,
    so only emitted samples are stacked. Memory grows linearly with the number of steps.
    ``unroll``, ``stages`` (keywords): see ``AbstractRemat``.
    """

    unroll: int | None = eqx.field(default=None, static=True, kw_only=True)
    stages: str = eqx.field(default="recompute", static=True, kw_only=True)

    def block_sizes(self, n_steps):
        return ()

    def loop(self, step, emit, carry, n_steps, every):
        return time_loop(step, emit, carry, n_steps, every, self.block_sizes(n_steps),
                         lambda f: f, resolve_unroll(self.unroll))
