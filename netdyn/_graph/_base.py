"""Abstract bases of structural graphs (connectomes)."""

import abc
from typing import Literal

import equinox as eqx
import jax
import numpy as np
from jaxtyping import Array, Float, Int

from .._custom_types import ArrayLike, History, Scalar

Interpolation = Literal["nearest", "linear"]


class DelayIndex(eqx.Module):
    """Loop-invariant read positions of delayed values in a history buffer.

    ``rows`` are buffer rows (row ``-1`` of the buffer is the newest state, so a delay of
    ``D`` steps reads row ``n_rows - 1 - D``); with linear interpolation ``frac`` is the
    weight of the next-older row: ``x(t - d) = (1 - frac) buf[rows] + frac buf[rows - 1]``.
    Shapes follow the graph's edge layout (``[nodes, nodes]`` dense, ``[edges]`` sparse).
    """

    rows: Int[Array, "..."]
    frac: Float[Array, "..."] | None


class AbstractGraph(eqx.Module):
    """A weighted, directed graph over ``n_nodes`` nodes, with weights ``W[target, source]``.

    Couplings see a graph only through *edge values*: arrays whose trailing axes follow
    the graph's edge layout (``[nodes, nodes]`` for a dense graph, ``[edges]`` for a sparse
    one) with the coupled variables on the leading axis. A coupling builds
    ``pre(x_i, x_j)`` on edges and the graph reduces it with ``weighted_sum``:

    $$ g_{k,i} = \\sum_j W_{ij}\\, v_{k,ij}. $$
    """

    @property
    @abc.abstractmethod
    def n_nodes(self) -> int:
        """Number of nodes."""

    @abc.abstractmethod
    def source_values(self, x: Float[Array, "k nodes"]) -> Float[Array, "k ..."]:
        """Edge values of the source node ``x_j`` (undelayed)."""

    @abc.abstractmethod
    def target_values(self, x: Float[Array, "k nodes"]) -> Float[Array, "k ..."]:
        """Edge values of the target node ``x_i``."""

    @abc.abstractmethod
    def weighted_sum(self, v: Float[Array, "m ..."]) -> Float[Array, "m nodes"]:
        """``sum_j W[i, j] v[:, i, j]`` over the sources of every target ``i``."""

    @abc.abstractmethod
    def validate(self) -> "AbstractGraph":
        """Return the graph with runtime checks (finite, non-negative values) attached."""


class AbstractDelayGraph(AbstractGraph):
    """A graph whose edges carry conduction delays (ms).

    ``max_delay`` (static) sizes the history buffer; delays longer than it are a runtime
    error, so replacing the delays with ``eqx.tree_at`` is safe.
    """

    max_delay: eqx.AbstractVar[float]

    @abc.abstractmethod
    def delay_index(self, dt: float, n_rows: int, interpolation: Interpolation) -> DelayIndex:
        """Buffer read positions for step ``dt`` (ms) in a buffer of ``n_rows`` rows."""

    @abc.abstractmethod
    def delayed_source_values(
        self, buffer: History, index: DelayIndex
    ) -> Float[Array, "k ..."]:
        """Edge values ``x_j(t - d_ij)`` read from the history buffer."""


class AbstractBatchMinorGraph(AbstractDelayGraph):
    """A delay graph that can read the histories of a batch of networks at once.

    ``jax.vmap`` over ``simulate(..., batch_last=True)`` (a sweep over G, noise
    realisations) runs a time loop whose arrays carry the batch on their *last* axis when
    the graph (weights, delays) is shared by the batch: every delayed read then fetches
    one contiguous run of ``B`` values per edge, instead of ``B`` values one history
    apart (``vmap``'s leading batch axis), and the weighted sum becomes a product with
    the shared weights.
    """

    @abc.abstractmethod
    def delayed_source_values_batched(
        self, window: Float[Array, "rows nodes k batch"], index: DelayIndex
    ) -> Float[Array, "k ... batch"]:
        """``delayed_source_values`` of every member of the batch (batch last)."""

    @abc.abstractmethod
    def weighted_sum_batched(self, v: Float[Array, "m ... batch"]) -> Float[Array, "m nodes batch"]:
        """``weighted_sum`` of every member of the batch (batch last)."""


def delays_from_lengths(lengths: ArrayLike, speed: float | Scalar):
    """Delays (ms) ``d = L / v`` of tract lengths ``L`` (mm) at conduction speed ``v``
    (mm/ms), the ``from_lengths`` constructors' conversion.

    Concrete lengths and speed give concrete (NumPy) delays, even inside ``jit``, so that
    the graph can size its history buffer from them; a traced speed gives traced delays
    (then the graph needs an explicit ``max_delay``).
    """
    if not isinstance(speed, jax.core.Tracer) and not speed > 0:
        raise ValueError(f"speed must be positive, got {speed}.")
    if not isinstance(lengths, jax.core.Tracer):
        lengths = np.asarray(lengths)
    return lengths / speed
