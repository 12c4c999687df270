"""A ready-made loss for ``fit``: simulated BOLD FC against an empirical FC."""

from typing import Literal

import equinox as eqx
import jax.numpy as jnp
import numpy as np
from jaxtyping import Array, ArrayLike, Float

from .._custom_types import Key
from .._monitor._base import AbstractMonitor
from .._network import Network
from .._observation.fc import fc
from .._observation.losses import fc_correlation, one_minus_pearson, rmse
from .._simulate import simulate
from .._solver._base import AbstractSolver

Metric = Literal["rmse", "1-r"]


class FcLoss(eqx.Module):
    r"""``loss_fn`` for ``fit``: simulate, take the FC of the monitored signal (usually
    BOLD) and compare it with a target FC.

    ``FcLoss(target, solver, monitor, duration=..., dt=1.0, metric="rmse")(network, key)``
    simulates ``network`` over ``[0, duration]`` ms with ``solver`` and the one
    ``monitor`` (e.g. ``nd.Bold(period=720.0, variables="S", warmup=10_000.0)``; its
    ``warmup`` drops the initial transient), computes $F = \mathrm{FC}$ of its samples
    and returns ``(loss, {"fc_r": r, "rmse": e})`` with, over the upper triangles
    ($i < j$),

    $$ e = \sqrt{\operatorname{mean}_{i<j}(F_{ij} - F^{*}_{ij})^2}, \qquad
       r = \operatorname{corr}_{i<j}(F_{ij}, F^{*}_{ij}), $$

    and ``loss = e`` (``metric="rmse"``) or ``1 - r`` (``metric="1-r"``, insensitive to
    the FC's overall level).

    **Arguments**: ``target`` the empirical FC ``[nodes, nodes]`` (square, finite);
    ``solver`` an ``AbstractSolver`` (its ``remat`` sets the gradient's memory);
    ``monitor`` an ``AbstractMonitor`` emitting one variable; ``duration`` and ``dt`` in
    ms (Python numbers; the duration must be a whole number of monitor periods);
    ``metric``.

    **Raises**: ``ValueError`` for a target that is not a finite square matrix (at
    construction) or whose size differs from the network's number of nodes (when called).
    """

    target: Float[Array, "nodes nodes"]
    solver: AbstractSolver
    monitor: AbstractMonitor
    duration: float = eqx.field(static=True)
    dt: float = eqx.field(static=True)
    metric: Metric = eqx.field(static=True)

    def __init__(
        self,
        target: ArrayLike,
        solver: AbstractSolver,
        monitor: AbstractMonitor,
        *,
        duration: float,
        dt: float = 1.0,
        metric: Metric = "rmse",
    ):
        t = np.asarray(target)
        if t.ndim != 2 or t.shape[0] != t.shape[1] or t.shape[0] < 3:
            raise ValueError(
                f"FcLoss target must be a square FC matrix [nodes, nodes] with nodes >= 3, "
                f"got shape {t.shape}."
            )
        if not np.issubdtype(t.dtype, np.number) or not np.all(np.isfinite(t)):
            raise ValueError("FcLoss target must contain finite numbers only.")
        if not isinstance(solver, AbstractSolver):
            raise ValueError(f"FcLoss solver must be an AbstractSolver, got {solver!r}.")
        if not isinstance(monitor, AbstractMonitor):
            raise ValueError(f"FcLoss monitor must be an AbstractMonitor, got {monitor!r}.")
        if metric not in ("rmse", "1-r"):
            raise ValueError(f"FcLoss metric must be 'rmse' or '1-r', got {metric!r}.")
        self.target = jnp.asarray(t, dtype=float)
        self.solver = solver
        self.monitor = monitor
        self.duration = float(duration)
        self.dt = float(dt)
        self.metric = metric

    def simulated_fc(self, network: Network, key: Key | None) -> Float[Array, "nodes nodes"]:
        """The FC of ``network``'s monitored signal (what the loss compares)."""
        n = network.graph.n_nodes
        if self.target.shape != (n, n):
            raise ValueError(
                f"FcLoss target FC has shape {self.target.shape}, but the network has {n} "
                f"nodes (expected ({n}, {n}))."
            )
        sol = simulate(network, self.solver, t0=0.0, t1=self.duration, dt=self.dt,
                       monitors={"signal": self.monitor}, key=key)
        return fc(sol["signal"])

    def __call__(
        self, network: Network, key: Key | None
    ) -> tuple[Float[Array, ""], dict[str, Float[Array, ""]]]:
        """``(loss, {"fc_r": r, "rmse": e})`` for ``network`` and noise ``key``."""
        f = self.simulated_fc(network, key)
        e = rmse(f, self.target)
        r = fc_correlation(f, self.target)
        loss = e if self.metric == "rmse" else one_minus_pearson(f, self.target)
        return loss, {"fc_r": r, "rmse": e}
