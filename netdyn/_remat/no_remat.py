"""No checkpointing."""

from ._base import AbstractRemat
from ._schedule import time_loop


class NoRemat(AbstractRemat):
    """No checkpointing: reverse mode keeps every step's residuals (fastest, most memory).

    The loop is a scan over emission periods around a scan over the steps of a period,
    so only emitted samples are stacked. Memory grows linearly with the number of steps.
    """

    def loop(self, step, emit, carry, n_steps, every):
        return time_loop(step, emit, carry, n_steps, every, (), lambda f: f)
