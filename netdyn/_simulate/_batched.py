"""The time loop of a batch of networks that share their graph's weights and delays
(``simulate(..., batch_last=True)`` under ``jax.vmap``), with the batch on the trailing
axis of the delay buffer and edge arrays.

Why: under a plain ``vmap`` the history buffer is ``[batch, rows, nodes, k]``, so each
delayed read fetches ``B`` values ``rows * nodes`` apart, and rolling the buffer copies
all ``B`` histories every step. With the batch last, an edge reads ``B`` contiguous
values, the weighted sum is one pass over the edges with the shared weights, and a ring
buffer (``_buffer.ring_*``; this loop is never differentiated) writes one row per step.
The per-network code of a step runs under ``jax.vmap``: the couplings' ``pre`` and
``post`` over the trailing axis, the node-wise rest (noise, solver, monitors) over the
leading one, so every model works unchanged; the delayed input is the plain loop's
``CouplingTerms.delayed_input``, given the graph's batch-last reads (``EdgeReads``).

On 2 CPU cores (84 nodes, float32, ``benchmarks/batch.md``) the batch-last loop runs
0.53-0.56 M network-steps/s at B = 64-1024 and 0.49 at B = 4096, where the plain ``vmap``
ran 0.30 at B = 64 and fell to 0.15 at B = 1024.
"""

from typing import Any, NamedTuple

import equinox as eqx
import jax
import jax.numpy as jnp
from jax.custom_batching import custom_vmap

from .. import _xla_tricks
from .._graph._base import AbstractBatchMinorGraph
from .._remat._schedule import resolve_unroll, time_loop
from . import _buffer
from ._buffer import take_rows
from ._couplings import EdgeReads
from ._loop import Flat, batch_leading


class _Members(NamedTuple):
    """A delayed coupling's ``pre`` and ``post``, each member's own on the trailing axis."""

    pre: Any
    post: Any


class _Carry(NamedTuple):
    """The batched loop's carry: ``SimulationState``'s fields with the batch added (first
    on ``y``, the monitors' states and a batched step counter, last on the ring buffer),
    and ``local``, the steps taken in this run, which places the ring's window (the same
    for the whole batch, whatever each member's global step)."""

    y: Any
    buffer: Any
    step: Any
    local: Any
    monitors: Any


def _batched_under(paths, flags, *names, but=None) -> bool:
    """Whether a leaf under the attributes ``names`` is batched (except under ``but``)."""
    return any(b for path, b in zip(paths, flags) if path[: len(names)] == names
               and (but is None or path[: len(but)] != but))


_GAIN = ("terms", "graph", "input_gain")


def batch_minor_applies(parts, paths, part_flags, carry_flags) -> bool:
    """Whether the batch can run batch-last: delayed couplings on a graph that reads
    batches (``AbstractBatchMinorGraph``), whose weights, delays and read positions the
    batch shares (its members' own input gains, ``DelayGraph.input_gain``, are applied
    to the shared weighted sums)."""
    return (
        bool(parts.terms.delayed)
        and isinstance(parts.terms.graph, AbstractBatchMinorGraph)
        and not _batched_under(paths, part_flags, "terms", "graph", but=_GAIN)
        and not _batched_under(paths, part_flags, "terms", "indices")
    )


def _members_gain(graph, paths, part_flags):
    """``(graph, gain)``: with the members' own input gains (``[batch, nodes]``), the graph
    without them and the gains as ``[nodes, batch]``; else the graph and ``None``."""
    if not _batched_under(paths, part_flags, *_GAIN):
        return graph, None
    gain = jnp.moveaxis(graph.input_gain, 0, -1)
    return eqx.tree_at(lambda g: g.input_gain, graph, None, is_leaf=lambda x: x is None), gain


def make_batched_rule(n_steps: int, every: int, min_batch: int = 1):
    """The ``vmap`` rule of ``_loop.boundary_loop`` for a run of ``n_steps`` steps that
    emits every ``every``.

    Nested ``vmap``s merge into one batch (each outer member's inner batch in turn): a
    population of candidates, each run over noise realisations, is one batch-last loop of
    candidates x realisations. It runs when the merged batch has at least ``min_batch``
    members and shares its graph (``batch_minor_applies``); otherwise the plain ``vmap``.
    """

    def run(size, flags, leaves, c_leaves, flat: Flat):
        b_leaves, b_c_leaves = flags
        parts, carry_flags = flat.parts(leaves), flat.carry(b_c_leaves)
        if size < min_batch or not batch_minor_applies(parts, flat.paths, b_leaves,
                                                       carry_flags):
            axes = ([0 if b else None for b in b_leaves], [0 if b else None for b in b_c_leaves])
            return jax.vmap(flat.plain, in_axes=axes)(leaves, c_leaves)
        return _batch_minor(size, b_leaves, leaves, parts, flat.carry(c_leaves), carry_flags,
                            flat, n_steps, every)

    def nested(size, flags, leaves, c_leaves, flat: Flat):
        """``run`` for a batch of ``size`` (``flags``: the inputs it reaches, on axis 0);
        under a further ``vmap``, that one's batch merges into it."""

        @custom_vmap
        def batch(leaves, c_leaves):
            return run(size, flags, leaves, c_leaves, flat)

        @batch.def_vmap
        def outer_rule(outer, outer_flags, leaves, c_leaves):
            outer_flags, inner_flags = _lists(outer_flags), _lists(flags)
            merged = _merge(outer, size, outer_flags, inner_flags, _lists((leaves, c_leaves)))
            both = jax.tree.map(lambda a, b: a or b, outer_flags, inner_flags)
            out = nested(outer * size, both, *merged, flat)
            out = jax.tree.map(lambda x: x.reshape((outer, size) + x.shape[1:]), out)
            return out, jax.tree.map(lambda _: True, out)

        return batch(leaves, c_leaves)

    def rule(axis_size, in_batched, leaves, c_leaves, flat: Flat):
        out = nested(axis_size, in_batched, leaves, c_leaves, flat)
        return out, jax.tree.map(lambda _: True, out)

    return rule


def _lists(pair):
    """``(leaves, carry leaves)`` (or their flags) as two lists, whatever sequences."""
    return list(pair[0]), list(pair[1])


def _merge(outer: int, inner: int, outer_flags, inner_flags, tree):
    """The leaves of ``tree`` as one batch of ``outer * inner`` members (outer major): an
    outer ``vmap``'s batch (axis 0) and the inner batch (axis 0 of each outer member),
    either broadcast where a leaf lacks it; leaves batched by neither unchanged."""

    def one(x, in_outer, in_inner):
        if not (in_outer or in_inner):
            return x
        if not in_outer:
            x = jnp.broadcast_to(x[None], (outer,) + x.shape)
        elif not in_inner:
            x = jnp.broadcast_to(x[:, None], (outer, inner) + x.shape[1:])
        return x.reshape((outer * inner,) + x.shape[2:])

    return jax.tree.map(one, tree, outer_flags, inner_flags)


def _batch_minor(size, b_leaves, leaves, parts, carry, carry_flags, flat: Flat,
                 n_steps: int, every: int):
    leaf_axes = [0 if b else None for b in b_leaves]

    def member(fn, axes, out_axes):
        """``fn(parts, *xs)`` for every member of the batch: the parts' batched leaves split
        on their leading axis, ``xs`` on ``axes`` (one per x), the outputs on ``out_axes``."""

        def one(lv, *xs):
            return fn(flat.parts(lv), *xs)

        def run(*xs):
            return jax.vmap(one, in_axes=(leaf_axes, *axes), out_axes=out_axes)(leaves, *xs)

        return run

    def lead(x, batched):
        return batch_leading(x, batched, size)

    terms = parts.terms
    graph, gain = _members_gain(terms.graph, flat.paths, b_leaves)
    cvar = terms.cvar

    def each(n):
        """The ``n``-th delayed coupling, applied to each member on the trailing axis."""
        return _Members(
            member(lambda p, xi, xj: p.terms.delayed[n].pre(xi, xj), (-1, -1), -1),
            member(lambda p, s: p.terms.delayed[n].post(s), (-1,), -1),
        )

    # Edge arrays ([k, nodes, nodes, batch]: the reads, the couplings' ``pre``, the
    # weighted sum) keep the batch last. The node-wise rest of the step keeps it first, as
    # a plain ``vmap`` does: its batching rules (``concatenate``, ``cond``, ``checkpoint``)
    # move the batch to the front, which would transpose every state array twice a step.
    # Only ``[nodes, batch]``-sized arrays change sides.
    def weighted_sum(v):
        sums = graph.weighted_sum_batched(v)  # [m, nodes, batch]
        return sums if gain is None else gain[None] * sums

    reads = EdgeReads(
        jax.vmap(graph.target_values, in_axes=-1, out_axes=-1),
        graph.delayed_source_values_batched,
        weighted_sum,
        tuple(each(n) for n in range(len(terms.delayed))),
    )

    def delayed_input(y, window):
        return jnp.moveaxis(terms.delayed_input(jnp.moveaxis(y, 0, -1), window, reads), -1, 0)

    step_axis = 0 if carry_flags.step else None

    def step(c: _Carry) -> _Carry:
        window = _buffer.ring_window(c.buffer, c.local)
        # Transposed into memory once: fused into the solver stages, the batch-last sums
        # would be read with a stride of ``batch`` at every stage.
        c_delayed = _xla_tricks.materialise(delayed_input(c.y, window), c.local)
        y1 = member(lambda p, y, i, cd: p.advance(remat=False)(y, i, cd), (0, step_axis, 0), 0)(
            c.y, c.step, c_delayed
        )
        y1 = _xla_tricks.materialise(y1, c.local)
        # The run's step count stays unbatched (a closure): a monitor's ``lax.cond`` on it
        # stays a branch under the members' ``vmap``, not a select of both.
        monitors = member(lambda p, m, y: p.schedule.update(m, y, p.dt, c.local + 1),
                          (0, 0), 0)(c.monitors, y1)
        row = jnp.moveaxis(take_rows(jnp.moveaxis(y1, 0, -1), cvar), 0, 1)  # [nodes, k, B]
        ring = _buffer.ring_push(c.buffer, c.local, row)
        return _Carry(y1, ring, c.step + 1, c.local + 1, monitors)

    def emit(c: _Carry):
        monitors, samples = member(lambda p, m: p.schedule.emit(m, c.local, p.dt), (0,), 0)(
            c.monitors
        )
        return c._replace(monitors=monitors), samples

    buffer = jnp.moveaxis(lead(carry.buffer, carry_flags.buffer), 0, -1)
    start = _Carry(
        lead(carry.y, carry_flags.y),
        _buffer.ring_from_rolled(buffer),
        carry.step,
        jnp.zeros((), jnp.int32),
        jax.tree.map(lead, carry.monitors, carry_flags.monitors),
    )
    unroll = resolve_unroll(parts.solver.remat.unroll)
    final, stacked = time_loop(step, emit, start, n_steps, every, (), lambda f: f, unroll)
    buffer = jnp.moveaxis(_buffer.ring_window(final.buffer, final.local), -1, 0)
    # Stacked ``[samples, batch, ...]``; everything batch-leading (see ``_loop``).
    stacked = jax.tree.map(lambda x: jnp.moveaxis(x, 1, 0), stacked)
    return (final.y, buffer, final.monitors), stacked
