"""Where ``fit_multistart``'s arrays live: the starts split across devices, of one process
or of several joined by ``jax.distributed`` (the mechanism of ``nd.sweep``)."""

from collections.abc import Sequence

import equinox as eqx
import jax
import numpy as np

from .._search.sweep import batch_shardings, global_array, host_array, padded_index


class StartsPlacement:
    """The loop's state split along its leading axis (``batch`` starts) across
    ``devices``; the model, key and step index held whole by every device.

    The starts are padded with copies of the last one to a multiple of the number of
    devices (the padding's results are dropped), so that every device runs the same
    compiled step on the same number of starts. What goes back to the host (history rows,
    checkpoints, the result) is gathered from every process and has ``batch`` starts, so
    that it does not depend on how many devices or processes ran the fit.
    """

    def __init__(self, devices: Sequence[jax.Device], batch: int):
        devices = list(devices)
        if not devices:
            raise ValueError("devices must not be empty.")
        self.split, self.replicated = batch_shardings(devices)
        self.batch = batch
        self.index = padded_index(batch, len(devices))

    def starts(self, tree):
        """Arrays with a leading axis of ``batch`` starts, padded and split across devices."""
        return jax.tree.map(lambda x: global_array(np.asarray(x)[self.index], self.split),
                            tree)

    def whole(self, tree):
        """The array leaves of ``tree`` held whole by every device (other leaves as they
        are)."""
        return jax.tree.map(
            lambda x: global_array(x, self.replicated) if eqx.is_array(x) else x, tree
        )

    def host(self, tree):
        """Every leaf (leading axis over starts) on the host, without the padding. A
        collective across processes: every process calls it at the same point."""
        return jax.tree.map(lambda x: host_array(x)[: self.batch], tree)
