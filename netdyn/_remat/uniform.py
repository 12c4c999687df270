"""Uniform checkpointing."""

import equinox as eqx

from ._base import AbstractRemat
from ._policies import check_block, checkpointer
from ._schedule import resolve_unroll, time_loop


class Uniform(AbstractRemat):
    r"""Checkpoint blocks of ``block`` steps (Griewank & Walther 2000, "windowing").

    The forward pass keeps only the carry (state, history buffer, monitor states) at the
    start of each block; the backward pass recomputes one block at a time. For $n$ steps
    the memory is about $(n / K)$ carries plus $K$ steps of residuals (minimal near
    $K \approx \sqrt{n \cdot \text{carry} / \text{residual}}$), for one extra forward pass.

    A ``block`` that does not divide the number of steps is balanced to near-equal blocks
    and the remainder run as one shorter last block (no memory spike, same forward result).
    Blocks at least as long as the monitors' emission period group whole periods.
    ``unroll``, ``stages`` (keywords): see ``AbstractRemat``.
    """

    block: int = eqx.field(static=True)
    unroll: int | None = eqx.field(default=None, static=True, kw_only=True)
    stages: str = eqx.field(default="recompute", static=True, kw_only=True)

    def __check_init__(self):
        check_block("Uniform block", self.block)

    def block_sizes(self, n_steps):
        return (self.block,)

    def loop(self, step, emit, carry, n_steps, every):
        return time_loop(step, emit, carry, n_steps, every, self.block_sizes(n_steps),
                         checkpointer(), resolve_unroll(self.unroll))
