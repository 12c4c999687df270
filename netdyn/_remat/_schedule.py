"""Nested, checkpointed time loops shared by the remat strategies.

The time loop has a natural two-level shape: steps, grouped into emission periods (a
monitor sample is emitted after each). A strategy asks for checkpointed blocks of a given
number of steps; block sizes below the period split the steps of one period, sizes at or
above it group whole periods, so samples are stacked once per period and nothing per step.

A block size that does not divide its count is *balanced* (``ceil(count / ceil(count / K))``)
and the remainder runs as one shorter checkpointed block after the scan over the full
blocks. Its outputs are at most one per emission period, so joining them to the others
costs nothing next to the carry; masking padded iterations instead (a ``where`` over the
whole carry at every step, in both passes) made non-divisors ~1.3-1.4x slower to
differentiate (``benchmarks/remat.md``). The forward result is bit-identical.
"""

import math
from collections.abc import Callable, Sequence
from typing import Any

import jax
import jax.numpy as jnp


def balanced(count: int, size: int) -> int:
    """The block size closest to ``size`` that splits ``count`` into near-equal blocks."""
    size = max(1, min(size, count))
    return math.ceil(count / math.ceil(count / size))


def _stack_flat(ys, n_outer: int, size: int):
    return jax.tree.map(lambda y: y.reshape((n_outer * size,) + y.shape[2:]), ys)


def repeat(
    body: Callable[[Any], tuple[Any, Any]],
    carry,
    count: int,
    sizes: Sequence[int],
    checkpoint: Callable[[Callable], Callable],
):
    """Run ``body`` ``count`` times, stacking its outputs; checkpoint nested blocks.

    ``sizes`` are block sizes in iterations of ``body``, ascending; the largest is the
    outermost level. ``checkpoint`` wraps a block function (``jax.checkpoint`` with the
    strategy's policy).
    """
    sizes = [s for s in sizes if s < count]
    if not sizes:
        return jax.lax.scan(lambda c, _: body(c), carry, length=count)
    size = balanced(count, sizes[-1])
    inner_sizes = sizes[:-1]
    n_blocks = math.ceil(count / size)
    padded = n_blocks * size != count
    if size == 1:
        block_body = checkpoint(body)
        return jax.lax.scan(lambda c, _: block_body(c), carry, length=count)

    def block(c):
        return repeat(body, c, size, inner_sizes, checkpoint)

    n_full = count // size
    carry, ys = jax.lax.scan(lambda c, _: checkpoint(block)(c), carry, length=n_full)
    ys = _stack_flat(ys, n_full, size)
    if not padded:
        return carry, ys
    tail = count - n_full * size

    def tail_block(c):
        return repeat(body, c, tail, inner_sizes, checkpoint)

    carry, ys_tail = checkpoint(tail_block)(carry)
    return carry, jax.tree.map(lambda a, b: jnp.concatenate([a, b]), ys, ys_tail)


def time_loop(step, emit, carry, n_steps: int, every: int, sizes: Sequence[int], checkpoint):
    """The simulation loop with checkpointed blocks of ``sizes`` steps (ascending).

    Sizes below ``every`` split the steps of a period; the others are rounded to whole
    periods and group periods.
    """
    step_sizes = sorted(s for s in sizes if s < every)
    period_sizes = sorted({max(1, round(s / every)) for s in sizes if s >= every})

    def step_body(c):
        return step(c), None

    def period_body(c):
        c, _ = repeat(step_body, c, every, step_sizes, checkpoint)
        return emit(c)

    return repeat(period_body, carry, n_steps // every, period_sizes, checkpoint)
