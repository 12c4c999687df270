"""Name-based checkpoint policies."""

import math

import equinox as eqx

from ._base import AbstractRemat
from ._policies import check_block, checkpointer
from ._schedule import resolve_unroll, time_loop

NAMES = ("state", "history", "coupling", "monitor")


class Policy(AbstractRemat):
    """Checkpointed blocks that also save the values tagged with the given names.

    The time loop tags, at every step, the new state (``"state"``), the history buffer
    (``"history"``), the delayed coupling input (``"coupling"``) and the monitor states
    (``"monitor"``) with ``jax.ad_checkpoint.checkpoint_name``. Inside each block of
    ``block`` steps (default: about the square root of the number of steps), values with
    these names are saved during the forward pass instead of being recomputed;
    everything else is recomputed. ``Policy(("coupling",))`` saves ``[inputs, nodes]`` per
    step and skips recomputing the delayed gather; ``Policy(("history",))`` saves the whole
    buffer every step (memory-hungry: shown for completeness).

    ``unroll``, ``stages`` (keywords): see ``AbstractRemat``.

    There is no host offloading of the saved values: JAX's offloading policy
    (``save_and_offload_only_these_names``) failed to compile this loop with XLA:GPU
    (``benchmarks/gpu.md``), and JAX's newer remat implementation ignores offloading
    policies.
    """

    names: tuple[str, ...] = eqx.field(static=True)
    block: int | None = eqx.field(default=None, static=True)
    unroll: int | None = eqx.field(default=None, static=True, kw_only=True)
    stages: str = eqx.field(default="recompute", static=True, kw_only=True)

    def __check_init__(self):
        if isinstance(self.names, str):
            raise ValueError(f"Policy names must be a tuple of names, got {self.names!r}.")
        unknown = [n for n in self.names if n not in NAMES]
        if unknown:
            raise ValueError(f"Policy: unknown checkpoint name(s) {unknown}; known: {NAMES}.")
        if self.block is not None:
            check_block("Policy block", self.block)

    def block_sizes(self, n_steps):
        return (self.block if self.block is not None else max(1, math.isqrt(n_steps)),)

    def loop(self, step, emit, carry, n_steps, every):
        wrap = checkpointer(tuple(self.names))
        return time_loop(step, emit, carry, n_steps, every, self.block_sizes(n_steps), wrap,
                         resolve_unroll(self.unroll))
