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

``unroll`` copies the body of the innermost scans (the ones with no loop inside) that many
times per iteration of their while loop, amortising the loop's per-iteration overhead over
several steps (``_scan``: copies separated by optimization barriers, so that the forward
result is bit-identical to ``unroll=1``). Reverse mode unrolls the transposed scans alike.
"""

import math
from collections.abc import Callable, Sequence
from typing import Any

import jax
import jax.numpy as jnp

from .. import _xla_tricks
from ._base import AbstractRemat


def default_unroll(backend: str | None = None) -> int:
    """The default ``unroll`` of the strategies on ``backend`` (``None``: the default one).

    ``unroll`` is the number of steps run per iteration of the innermost loop over steps
    (see ``nd.AbstractRemat``); a strategy whose ``unroll`` is ``None`` (the default) uses
    this value for the backend it is traced for, ``jax.default_backend()`` at trace time.

    - ``"gpu"``: 8: a while-loop iteration costs more than a delayed 84-node step there,
      and unrolling amortises it (measured on an H100, ``benchmarks/gpu.md``; the value 8
      itself not tuned).
    - any other backend (``"cpu"``, ...): 1: the loop overhead is small next to a step,
      and unrolling slows the checkpointed gradient and the compilation
      (``benchmarks/unroll.md``).

    ``backend`` is a platform name as ``jax.default_backend()`` returns it (``"cpu"``,
    ``"gpu"``, ``"tpu"``).
    """
    if backend is None:
        backend = jax.default_backend()
    elif not isinstance(backend, str):
        raise ValueError(f"default_unroll backend must be a platform name, got {backend!r}.")
    return 8 if backend == "gpu" else 1


def resolve_unroll(unroll: int | None) -> int:
    """``unroll``, or the default of the backend being traced for when it is ``None``.

    Called at trace time (inside ``loop``), never at import, so that the backend is the one
    the computation is compiled for (``jax.default_backend()``).
    """
    return default_unroll() if unroll is None else unroll


def balanced(count: int, size: int) -> int:
    """The block size closest to ``size`` that splits ``count`` into near-equal blocks."""
    size = max(1, min(size, count))
    return math.ceil(count / math.ceil(count / size))


def _outermost(count: int, sizes: Sequence[int]) -> tuple[int, list[int]] | None:
    """The outermost checkpointed block of ``count`` iterations under ``sizes`` (ascending):
    its balanced size and the sizes left for the levels inside it; ``None`` if none is
    below ``count``."""
    sizes = [s for s in sizes if s < count]
    if not sizes:
        return None
    return balanced(count, sizes[-1]), sizes[:-1]


def _split_at_period(sizes: Sequence[int], every: int) -> tuple[list[int], list[int]]:
    """``(step sizes, period sizes)``: sizes below ``every`` split the steps of a period,
    the others are rounded to whole periods."""
    step_sizes = sorted(s for s in sizes if s < every)
    period_sizes = sorted({max(1, round(s / every)) for s in sizes if s >= every})
    return step_sizes, period_sizes


def _scan(body, carry, count: int, unroll: int):
    """``count`` iterations of ``body``, ``unroll`` of them per iteration of the loop.

    Not ``lax.scan(unroll=...)``: XLA would fuse consecutive copies of the body with each
    other and round differently. The copies are kept apart (``_xla_tricks.keep_apart``),
    so the result is bit-identical to ``unroll=1``. The ``count % unroll`` remaining
    iterations run rolled (one more copy of the body in the program, not ``unroll - 1``).
    """
    unroll = min(unroll, count)
    n_outer, rest = divmod(count, unroll)
    if unroll == 1:
        return jax.lax.scan(lambda c, _: body(c), carry, length=count)

    def unrolled(c, _):
        ys = []
        for _ in range(unroll):
            c, y = body(_xla_tricks.keep_apart(c))
            ys.append(y)
        return c, jax.tree.map(lambda *y: jnp.stack(y), *ys)

    carry, ys = jax.lax.scan(unrolled, carry, length=n_outer)
    ys = _stack_flat(ys, n_outer, unroll)
    if not rest:
        return carry, ys
    carry, ys_rest = jax.lax.scan(lambda c, _: body(c), carry, length=rest)
    return carry, jax.tree.map(lambda a, b: jnp.concatenate([a, b]), ys, ys_rest)


def _stack_flat(ys, n_outer: int, size: int):
    return jax.tree.map(lambda y: y.reshape((n_outer * size,) + y.shape[2:]), ys)


def repeat(
    body: Callable[[Any], tuple[Any, Any]],
    carry,
    count: int,
    sizes: Sequence[int],
    checkpoint: Callable[[Callable], Callable],
    unroll: int = 1,
):
    """Run ``body`` ``count`` times, stacking its outputs; checkpoint nested blocks.

    ``sizes`` are block sizes in iterations of ``body``, ascending; the largest is the
    outermost level. ``checkpoint`` wraps a block function (``jax.checkpoint`` with the
    strategy's policy). ``unroll`` applies to the innermost scans over ``body`` (those of
    the smallest blocks); the scans over blocks run one block per iteration.
    """
    outer = _outermost(count, sizes)
    if outer is None:
        return _scan(body, carry, count, unroll)
    size, inner_sizes = outer
    n_blocks = math.ceil(count / size)
    padded = n_blocks * size != count
    if size == 1:
        return _scan(checkpoint(body), carry, count, unroll)

    def block(c):
        return repeat(body, c, size, inner_sizes, checkpoint, unroll)

    n_full = count // size
    carry, ys = jax.lax.scan(lambda c, _: checkpoint(block)(c), carry, length=n_full)
    ys = _stack_flat(ys, n_full, size)
    if not padded:
        return carry, ys
    tail = count - n_full * size

    def tail_block(c):
        return repeat(body, c, tail, inner_sizes, checkpoint, unroll)

    carry, ys_tail = checkpoint(tail_block)(carry)
    return carry, jax.tree.map(lambda a, b: jnp.concatenate([a, b]), ys, ys_tail)


def time_loop(
    step,
    emit,
    carry,
    n_steps: int,
    every: int,
    sizes: Sequence[int],
    checkpoint,
    unroll: int = 1,
):
    """The simulation loop with checkpointed blocks of ``sizes`` steps (ascending).

    Sizes below ``every`` split the steps of a period; the others are rounded to whole
    periods and group periods.

    ``unroll`` steps run per iteration of the innermost scan over steps. When a period is
    shorter than ``unroll`` (e.g. a monitor sampling every step), the scan over the steps of
    a period is unrolled entirely and the innermost scan over periods is unrolled
    ``unroll // every`` times instead, so that every loop iteration still runs about
    ``unroll`` steps.
    """
    step_sizes, period_sizes = _split_at_period(sizes, every)

    def step_body(c):
        return step(c), None

    def period_body(c):
        c, _ = repeat(step_body, c, every, step_sizes, checkpoint, unroll)
        return emit(c)

    return repeat(
        period_body, carry, n_steps // every, period_sizes, checkpoint, max(1, unroll // every)
    )


def _realised(count: int, sizes: Sequence[int]) -> list[tuple[int, bool]]:
    """``(size, padded)`` of the nested blocks ``repeat`` runs, outermost first."""
    blocks = []
    while (outer := _outermost(count, sizes)) is not None:
        size, sizes = outer
        blocks.append((size, count % size != 0))
        count = size
    return blocks


def checkpoint_blocks(
    strategy: AbstractRemat, n_steps: int, every: int
) -> tuple[tuple[int, bool], ...]:
    """The checkpointed blocks that ``strategy.loop`` runs for ``n_steps`` steps with a
    sample emitted every ``every`` steps: ``((size, padded), ...)``, innermost first.

    ``size`` is in steps. The sizes that ``strategy.block_sizes(n_steps)`` asks for are
    realised as the time loop does: a size below ``every`` splits the steps of an emission
    period, the others are rounded to whole periods and group periods; sizes at or above
    the count they would split are dropped, and each level is balanced to near-equal blocks
    of the realised block above it. ``padded``: the size does not divide that count, and the
    remainder runs as one shorter last block (not listed; the levels inside it are balanced
    within it alike). ``()`` for a strategy that checkpoints nothing (``nd.NoRemat``).

    E.g. ``nd.checkpoint_blocks(nd.Uniform(150), 60_000, 1000)`` is ``((143, True),)``:
    blocks of 143 steps (six of them, then one of 142) in every period of 1000 steps.

    ``nd.Auto`` chooses its strategy first: pass ``nd.choose_remat(...).strategy``.
    """
    if not isinstance(strategy, AbstractRemat):
        raise ValueError(f"checkpoint_blocks needs a remat strategy, got {strategy!r}.")
    if not (every >= 1 and n_steps >= every and n_steps % every == 0):
        raise ValueError(
            f"checkpoint_blocks: every ({every}) must divide n_steps ({n_steps}), both >= 1."
        )
    step_sizes, period_sizes = _split_at_period(strategy.block_sizes(n_steps), every)
    steps = _realised(every, step_sizes)
    periods = [(size * every, padded) for size, padded in _realised(n_steps // every, period_sizes)]
    return tuple(reversed(steps)) + tuple(reversed(periods))
