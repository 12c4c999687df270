"""Nested (multi-level) checkpointing."""

import equinox as eqx

from ._base import AbstractRemat
from ._policies import check_block, checkpointer
from ._schedule import resolve_unroll, time_loop


class Nested(AbstractRemat):
    r"""Checkpointed blocks within checkpointed blocks: ``Nested(K1, K2)`` keeps a carry
    every ``K2`` steps, and while reversing one ``K2`` block, a carry every ``K1`` steps.

    Memory about $n/K_2 + K_2/K_1$ carries plus $K_1$ steps of residuals, for two extra
    forward passes. More levels: ``Nested(K1, K2, K3, ...)``, ascending or not.
    ``unroll``, ``stages`` (keywords): see ``AbstractRemat``.
    """

    blocks: tuple[int, ...] = eqx.field(static=True)
    unroll: int | None = eqx.field(default=None, static=True)
    stages: str = eqx.field(default="recompute", static=True)

    def __init__(self, *blocks: int, unroll: int | None = None, stages: str = "recompute"):
        if not blocks:
            raise ValueError("Nested needs at least one block size, e.g. Nested(50, 1200).")
        self.blocks = tuple(sorted(check_block("Nested block", b) for b in blocks))
        self.unroll, self.stages = unroll, stages

    def block_sizes(self, n_steps):
        return self.blocks

    def loop(self, step, emit, carry, n_steps, every):
        return time_loop(step, emit, carry, n_steps, every, self.block_sizes(n_steps),
                         checkpointer(), resolve_unroll(self.unroll))
