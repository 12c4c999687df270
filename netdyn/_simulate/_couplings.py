"""The coupling input of a step: every coupling of the network read through its graph."""

from collections.abc import Callable
from typing import Any, NamedTuple

import equinox as eqx
import jax
import jax.numpy as jnp

from .._graph._base import AbstractGraph, DelayIndex
from ._buffer import take_rows


class EdgeReads(NamedTuple):
    """How the delayed terms read the graph: the graph's own methods for one network, or
    their batch-last forms for the batch-last loop (``_batched``), with the delayed
    couplings (``pre``, ``post``) applied to each member of the batch."""

    target_values: Callable  # x [k, nodes, ...] -> x_i
    source_values: Callable  # (buffer, index) -> x_j(t - d_ij)
    weighted_sum: Callable
    couplings: tuple[Any, ...]  # one (pre, post) per delayed coupling


class CouplingTerms(eqx.Module):
    """The couplings of a network on its graph, for one run.

    A coupling ``c`` contributes ``post(sum_j W[i, j] pre(x_i, x_j))`` where ``x`` are the
    coupled variables (rows ``cvar`` of the state); delayed couplings read ``x_j`` from the
    history buffer at the loop-invariant positions ``indices`` (one per delayed coupling),
    instantaneous ones from the current state. All terms add up into the dynamics'
    coupling input of shape ``shape = (inputs, nodes)``.
    """

    graph: AbstractGraph
    delayed: tuple
    instantaneous: tuple
    cvar: tuple[int, ...] = eqx.field(static=True)
    indices: tuple[DelayIndex, ...]
    shape: tuple[int, int] = eqx.field(static=True)

    def _term(self, c, xi, xj):
        return c.post(self.graph.weighted_sum(c.pre(xi, xj)))

    def reads(self) -> EdgeReads:
        """The graph's reads for one network."""
        g = self.graph
        return EdgeReads(g.target_values, g.delayed_source_values, g.weighted_sum,
                         self.delayed)

    def delayed_terms(self, y, buffer, reads: EdgeReads | None = None) -> list:
        """One array per delayed coupling, ``post(sum_j W[i, j] pre(x_i, x_j(t - d_ij)))``,
        reading sources from ``buffer`` through ``reads`` (default: ``self.reads()``)."""
        if not self.delayed:  # a graph without delays has no delayed reads
            return []
        r = self.reads() if reads is None else reads
        xi = r.target_values(take_rows(y, self.cvar))
        return [
            c.post(r.weighted_sum(c.pre(xi, r.source_values(buffer, index))))
            for c, index in zip(r.couplings, self.indices)
        ]

    def instantaneous_terms(self, y) -> list:
        """One array per instantaneous coupling, reading sources from ``y``."""
        x = take_rows(y, self.cvar)
        xi, xj = self.graph.target_values(x), self.graph.source_values(x)
        return [self._term(c, xi, xj) for c in self.instantaneous]

    def delayed_input(self, y, buffer, reads: EdgeReads | None = None):
        """The sum of the delayed terms (read once per step), or ``None`` if there are none."""
        terms = self.delayed_terms(y, buffer, reads)
        return _add(terms[0], terms[1:]) if terms else None

    def input(self, y, delayed_input, dtype):
        """The whole coupling input at a solver stage: delayed part plus instantaneous terms."""
        start = jnp.zeros(self.shape, dtype) if delayed_input is None else delayed_input
        return _add(start, self.instantaneous_terms(y))

    def check_shapes(self, dynamics, y0, buffer) -> None:
        """Every term must have the shape the dynamics reads, ``[inputs, nodes]``."""
        try:
            shapes = jax.eval_shape(
                lambda y, buf: self.delayed_terms(y, buf) + self.instantaneous_terms(y),
                y0,
                buffer,
            )
        except (TypeError, ValueError) as e:
            raise ValueError(f"the couplings cannot be evaluated on this network: {e}") from e
        for c, out in zip(self.delayed + self.instantaneous, shapes):
            if out.shape != self.shape:
                raise ValueError(
                    f"{type(c).__name__} produces coupling input of shape {out.shape}, but "
                    f"{type(dynamics).__name__} reads [inputs, nodes] = {self.shape}."
                )


def _add(start, terms):
    # Left to right, so that the sum is the same floating-point sum on every path.
    for t in terms:
        start = start + t
    return start
