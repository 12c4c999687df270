"""Multi-level checkpointing with logarithmic memory."""

import equinox as eqx

from ._base import AbstractRemat
from ._policies import check_block, checkpointer
from ._schedule import resolve_unroll, time_loop


class MultiLevel(AbstractRemat):
    r"""Checkpointed blocks of ``b``, ``b^2``, ``b^3``, ... steps, every level nested.

    A schedule in the spirit of binomial checkpointing (Griewank 1992; Griewank & Walther
    2000, *Revolve*) built from scans: with $L = \lceil \log_b n \rceil$ levels the
    backward pass holds about $b$ carries per level, i.e. $O(b \log_b n)$ memory, and
    recomputes each step at most $L$ times. Memory grows like $\log n$: a one-hour run
    needs only a few more carries than a one-minute run. ``unroll``, ``stages``
    (keywords): see ``AbstractRemat``.

    The growth is what holds on every backend; the bytes depend on the compiler's memory
    plan. On XLA:CPU a 2,000-step gradient with ``MultiLevel(4)`` needs fewer temporaries
    than with ``Uniform(50)``; on an H100 (XLA:GPU) it needed more
    (``benchmarks/gpu.md``). Measure on the backend you run (``Auto`` does so with XLA's own memory
    analysis).
    """

    branch: int = eqx.field(default=16, static=True)
    unroll: int | None = eqx.field(default=None, static=True, kw_only=True)
    stages: str = eqx.field(default="recompute", static=True, kw_only=True)

    def __check_init__(self):
        check_block("MultiLevel branch", self.branch)
        if self.branch < 2:
            raise ValueError(f"MultiLevel branch must be >= 2, got {self.branch}.")

    def block_sizes(self, n_steps):
        """``branch, branch**2, ...`` below ``n_steps``."""
        sizes, size = [], self.branch
        while size < n_steps:
            sizes.append(size)
            size *= self.branch
        return tuple(sizes)

    def loop(self, step, emit, carry, n_steps, every):
        return time_loop(step, emit, carry, n_steps, every, self.block_sizes(n_steps),
                         checkpointer(), resolve_unroll(self.unroll))
