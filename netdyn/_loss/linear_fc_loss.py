"""A loss of the analytic FC: noise-free, exact gradients, milliseconds per evaluation."""

from typing import ClassVar, Literal

import equinox as eqx
import jax.numpy as jnp
from jaxtyping import Array, Float

from .._custom_types import ArrayLike
from .._linear.linear_fc import analytic_fc, solved
from .._linear.lyapunov import Method
from .._monitor._base import AbstractMonitor
from .._network import Network
from .._observation.runs import runs_fc
from .._parameterisation._base import resolve_parameters
from .._validate import number, one_of
from ._base import AbstractFcLoss, Metrics
from ._fc_loss_arguments import target_fc

METRICS: tuple[str, ...] = ("rmse", "1-r", "1-r+mean", "1-r+huber")


class LinearFcLoss(AbstractFcLoss):
    r"""``loss_fn`` for ``nd.fit`` on the analytic FC (``nd.linear_fc``): the FC of the
    network linearised at its stable fixed point, against a target FC, with the metrics of
    ``nd.FcLoss`` (see ``nd.AbstractFcLoss``: ``"rmse"``, ``"1-r"``, ``"1-r+mean"``,
    ``"1-r+huber"``). ``LinearFcLoss(target, monitor)(network, key)`` returns ``(loss,
    metrics)``; ``key`` is ignored (the loss is deterministic: no noise realisations, no
    burn-in), so every evaluation of the same parameters gives the same value and an
    exact gradient.

    **Stability barrier.** The linear picture holds near a stable fixed point and fails
    as the slowest mode's decay rate $-\alpha$ (``alpha`` the spectral abscissa of the
    Jacobian, per ms) approaches 0, where nonlinearity bounds the fluctuations that the
    linearisation lets grow. Beyond ``max_abscissa`` the loss gains

    $$ b(\alpha) = w \Big(\frac{\alpha - \alpha_{\max}}{|\alpha_{\max}|}\Big)^2
       \quad (\alpha > \alpha_{\max}), $$

    with $w$ = ``barrier_weight``: smooth (continuous slope), zero in the trusted range,
    and steep enough to keep an optimiser out of the unstable one. A fixed point that was
    not found, or a Lyapunov solve that failed, gives a NaN value (which ``nd.fit`` and
    ``nd.backtrack`` refuse as a step).
    The metrics add ``abscissa`` and ``barrier``.

    In this approximation a uniform noise amplitude cancels in FC: the loss does not
    depend on ``sigma``, so a fit of ``sigma`` with it is meaningless (only noise ratios
    between states or regions matter). Delays are ignored (see ``nd.linear_fc``).

    **Arguments**: ``target`` (the empirical FC, as for ``nd.FcLoss``), ``monitor``
    (``nd.Bold``, ``nd.Raw`` or ``nd.TemporalAverage`` of one variable, as the simulation
    would record it), ``metric``, ``level_width`` (as ``nd.FcLoss``), ``max_abscissa``
    (per ms, < 0; default -5e-4: the slowest mode decays within 2 s), ``barrier_weight``
    (> 0, default 10), ``initial`` (``[states, nodes]``: where the fixed-point search
    starts; default the model's initial state), ``method`` (``"eig"`` or ``"doubling"``,
    as for ``nd.linear_fc``).

    **Raises**: ``ValueError`` at construction for a target that is not a finite, real,
    symmetric square matrix, an unknown metric, a ``level_width`` or ``barrier_weight``
    that is not a finite number > 0, a ``max_abscissa`` that is not a finite number < 0;
    when called, for a target whose size differs from the network's (and the trace-time
    errors of ``nd.linear_fc``).
    """

    stochastic: ClassVar[bool] = False
    target: Float[Array, "nodes nodes"]
    monitor: AbstractMonitor
    metric: Literal["rmse", "1-r", "1-r+mean", "1-r+huber"] = eqx.field(static=True)
    level_width: float = eqx.field(static=True)
    max_abscissa: float = eqx.field(static=True)
    barrier_weight: float = eqx.field(static=True)
    initial: Float[Array, "states nodes"] | None
    method: Method = eqx.field(static=True)

    def __init__(
        self,
        target: ArrayLike,
        monitor: AbstractMonitor,
        *,
        metric: str = "rmse",
        level_width: float = 0.05,
        max_abscissa: float = -5e-4,
        barrier_weight: float = 10.0,
        initial: ArrayLike | None = None,
        method: str = "eig",
    ):
        if not isinstance(monitor, AbstractMonitor):
            raise ValueError(f"LinearFcLoss monitor must be an AbstractMonitor, got {monitor!r}.")
        self.target = jnp.asarray(target_fc(target, "LinearFcLoss target"), dtype=float)
        self.monitor = monitor
        self.metric = one_of("LinearFcLoss metric", metric, METRICS)
        self.level_width = number("LinearFcLoss level_width", level_width, low=0.0,
                                  low_open=True)
        self.max_abscissa = number("LinearFcLoss max_abscissa", max_abscissa, high=0.0,
                                   high_open=True, unit=" per ms")
        self.barrier_weight = number("LinearFcLoss barrier_weight", barrier_weight, low=0.0,
                                     low_open=True)
        self.initial = None if initial is None else jnp.asarray(initial, dtype=float)
        self.method = one_of("LinearFcLoss method", method, ("eig", "doubling"))

    def _check(self, network: Network) -> None:
        n = network.graph.n_nodes
        if self.target.shape != (n, n):
            raise ValueError(
                f"LinearFcLoss target FC has shape {self.target.shape}, but the network has "
                f"{n} nodes (expected ({n}, {n})).")

    def fitted_to(self, runs) -> "LinearFcLoss":
        """This loss with the target ``nd.runs_fc(runs)``."""
        return self.replace(target=runs_fc(runs))

    def model_fc(self, network: Network, key=None) -> Float[Array, "nodes nodes"]:
        """The analytic FC (``nd.linear_fc(network, monitor).fc``, without its runtime
        checks); ``key`` is ignored."""
        return self.evaluate(network, key)[2]

    def __call__(self, network: Network, key=None) -> tuple[Float[Array, ""], Metrics]:
        """``(loss, metrics)`` of ``network``; ``key`` is ignored."""
        loss, metrics, _ = self.evaluate(network, key)
        return loss, metrics

    def evaluate(
        self, network: Network, key=None
    ) -> tuple[Float[Array, ""], Metrics, Float[Array, "nodes nodes"]]:
        """``(loss, metrics, analytic FC)`` from one analytic FC; ``key`` is ignored."""
        network = resolve_parameters(network)  # a parameterised graph has no size before
        self._check(network)
        result = analytic_fc(network, self.monitor, initial=self.initial, method=self.method)
        loss, metrics = self.loss_of_fc(result.fc)
        excess = jnp.maximum(result.abscissa - self.max_abscissa, 0.0) / abs(self.max_abscissa)
        barrier = self.barrier_weight * excess * excess
        found, exact = solved(result)
        loss = jnp.where(found & exact, loss + barrier, jnp.nan)
        return loss, {**metrics, "abscissa": result.abscissa, "barrier": barrier}, result.fc
