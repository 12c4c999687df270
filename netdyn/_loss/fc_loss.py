"""A ready-made loss for ``fit``: simulated BOLD FC against an empirical FC."""

from typing import ClassVar, Literal

import equinox as eqx
import jax
import jax.numpy as jnp
from jaxtyping import Array, Float

from .._custom_types import ArrayLike, Key
from .._monitor._base import AbstractMonitor
from .._network import Network
from .._observation.fc import fc
from .._observation.fcd import fcd, fcd_values
from .._observation.fcd_ks import fcd_ks
from .._observation.losses import fcd_distance
from .._observation.runs import pooled_fcd_values, runs_fc
from .._parameterisation.input_gain import resolve_for_simulation
from .._simulate._arguments import check_key, check_parts
from .._solver._base import AbstractSolver
from .._validate import flag, number, one_of
from ._base import AbstractFcLoss
from ._fc_loss_arguments import check_memory, fcd_target_values, target_fc, window_and_step
from ._runs import burn_in_length, measured_run, over_realisations

Metric = Literal["rmse", "1-r", "1-r+mean", "1-r+huber"]
METRICS: tuple[str, ...] = ("rmse", "1-r", "1-r+mean", "1-r+huber")

class FcLoss(AbstractFcLoss):
    r"""``loss_fn`` for ``fit``: simulate, take the FC of the monitored signal (usually
    BOLD) and compare it with a target FC.

    ``FcLoss(target, solver, monitor, duration=..., burn_in=..., realisations=...)(network,
    key)`` runs, for each of ``realisations`` independent noise realisations,

    1. a **burn-in** of ``burn_in`` ms from the initial state, which the monitor also
       sees (the haemodynamics settle too) but whose samples are not compared;
    2. the measured run of ``duration`` ms, continuing the burn-in exactly (same noise
       stream: burn-in and run together equal one long simulation);

    then $F$ = the mean over realisations of the FC of each run's monitor samples, and
    returns ``(loss, metrics)`` with, over the upper triangles ($i < j$),

    $$ e = \sqrt{\operatorname{mean}_{i<j}(F_{ij} - F^{*}_{ij})^2}, \quad
       r = \operatorname{corr}_{i<j}(F_{ij}, F^{*}_{ij}), \quad
       \Delta = \operatorname{mean}_{i<j} F_{ij} - \operatorname{mean}_{i<j} F^{*}_{ij}, $$

    and ``loss = e`` (``metric="rmse"``), ``1 - r`` (``"1-r"``: the pattern only, blind to
    the FC's overall level), $1 - r + |\Delta|$ (``"1-r+mean"``: pattern and level; the
    two terms are in the same units, correlation) or $1 - r + h_\delta(\Delta)$
    (``"1-r+huber"``: the same with the level term smoothed by Huber's function of width
    $\delta$ = ``level_width`` (Huber 1964; ``optax.losses.huber_loss / delta``):
    $\Delta^2 / 2\delta$ within $\delta$ of the target level, $|\Delta| - \delta/2$
    beyond, so the loss has no kink where a fitted model sits).
    ``metrics`` holds ``fc_r``, ``rmse``, ``mean_fc`` ($\operatorname{mean}_{i<j} F_{ij}$)
    and ``saturation`` (the fraction of pairs with $F_{ij} > 0.9$: a saturated, unrealistic FC).

    **The burn-in's gradient.** By default (``burn_in_gradient=True``) the gradient is
    exact: it differentiates through the burn-in too, at the cost of a gradient over the
    burn-in as well (memory stays bounded by the solver's remat strategy).
    ``burn_in_gradient=False`` holds the burn-in's final state fixed (``stop_gradient``:
    the burn-in then records no tape), which leaves out how the parameters move that
    starting state. That effect fades with the system's memory against the length of the
    measured run, but near a bifurcation memory is long (critical slowing down, seconds
    of haemodynamics), and the truncated gradient can point the wrong way: on the
    Reduced Wong-Wang model above its critical coupling, with 43.2 s measured, the
    truncated derivative in G was -31 where the derivative of the whole objective is +3.7
    (``benchmarks/float32.md``); along a regional map of ``I_o`` at the FC peak it was
    -16.0 against +51.8 exact (central differences +51.3 to +51.7).

    Why a burn-in: every region starts from the same initial state, and the shared
    relaxation from it (tens of seconds, haemodynamics included) correlates all regions.
    A loss that sees it rewards that artefact instead of the model's stationary FC. Why
    several realisations: an FC estimated from a few minutes of BOLD is noisy; averaging
    the FC of independent realisations (run in parallel with ``vmap``) gives a stabler
    estimate at the same simulated time, and on a GPU almost for free.

    **Arguments**:

    - ``target``: the empirical FC ``[nodes, nodes]`` (square, real, finite, symmetric).
    - ``solver``: an ``AbstractSolver`` (its ``remat`` sets the gradient's memory).
    - ``monitor``: an ``AbstractMonitor`` emitting one variable, e.g. ``nd.Bold(period=720.0,
      variables="S")``. Its ``warmup`` applies to the burn-in's samples only (which are
      discarded anyway); every sample of the measured run is used.
    - ``duration``: measured run in ms, a whole number of monitor periods.
    - ``dt``: time step in ms.
    - ``metric``: ``"rmse"``, ``"1-r"``, ``"1-r+mean"`` or ``"1-r+huber"``.
    - ``level_width``: $\delta > 0$ of ``"1-r+huber"`` (default 0.05, in units of
      correlation: about the spread of the mean FC between halves of a session's runs).
    - ``burn_in``: ms simulated before the measured run, rounded up to whole monitor
      periods (``0``: none; the monitor's ``warmup`` then drops initial samples).
    - ``realisations``: number of independent noise realisations (a whole number ``>= 1``;
      their measured samples are held at once, so they must fit in the device's memory).
      With 1 the run uses ``key`` itself; with more, realisation ``b`` uses
      ``fold_in(key, b)``.
    - ``burn_in_gradient``: differentiate through the burn-in (see above; default
      ``True``; ``False``: forward only, no tape, an approximate gradient).
    - ``fcd_target``: optional FCD values of the data (e.g. ``nd.fcd_values(nd.fcd(bold,
      *fcd_window))`` of an empirical BOLD ``[samples, nodes]``). When given, the loss
      gains ``fcd_weight`` times ``nd.fcd_distance`` (a differentiable Wasserstein
      surrogate of the usual Kolmogorov-Smirnov comparison) between them and the FCD
      values of the simulated runs (``fcd_window = (window, step)`` in samples, pooled
      over realisations); ``metrics`` then holds ``fcd_distance``. With
      ``fcd_metric="ks"`` the term is ``nd.fcd_ks`` instead (the smoothed
      Kolmogorov-Smirnov distance usually reported for FCD fits).

    **Raises**: ``ValueError``, naming the option and what it accepts, at construction for
    a target that is not a finite, real, symmetric square matrix, an unknown ``metric`` or
    ``fcd_metric``, a ``duration``, ``dt`` or ``level_width`` that is not a finite number
    > 0, a ``burn_in`` or ``fcd_weight`` that is not a finite number >= 0, a
    ``burn_in_gradient`` that is not a bool, an ``fcd_window`` that is not two whole
    numbers (window >= 2, step >= 1), an ``fcd_target`` that is not >= 2 finite values,
    ``realisations`` that is not a whole number >= 1 or whose measured samples
    (``realisations x samples x nodes``) would not fit in the device's memory; when
    called, for a target whose size differs from the network's number of nodes.
    """

    stochastic: ClassVar[bool] = True
    target: Float[Array, "nodes nodes"]
    solver: AbstractSolver
    monitor: AbstractMonitor
    duration: float = eqx.field(static=True)
    dt: float = eqx.field(static=True)
    metric: Metric = eqx.field(static=True)
    level_width: float = eqx.field(static=True)
    burn_in: float = eqx.field(static=True)
    realisations: int = eqx.field(static=True)
    burn_in_gradient: bool = eqx.field(static=True)
    fcd_target: Float[Array, " values"] | None
    fcd_window: tuple[int, int] = eqx.field(static=True)
    fcd_weight: float = eqx.field(static=True)
    fcd_metric: Literal["w2", "ks"] = eqx.field(static=True)

    def __init__(
        self,
        target: ArrayLike,
        solver: AbstractSolver,
        monitor: AbstractMonitor,
        *,
        duration: float,
        dt: float = 1.0,
        metric: str = "rmse",
        burn_in: float = 0.0,
        realisations: int = 1,
        burn_in_gradient: bool = True,
        fcd_target: ArrayLike | None = None,
        fcd_window: tuple[int, int] = (40, 4),
        fcd_weight: float = 1.0,
        level_width: float = 0.05,
        fcd_metric: str = "w2",
    ):
        t = target_fc(target)
        if not isinstance(solver, AbstractSolver):
            raise ValueError(f"FcLoss solver must be an AbstractSolver, got {solver!r}.")
        if not isinstance(monitor, AbstractMonitor):
            raise ValueError(f"FcLoss monitor must be an AbstractMonitor, got {monitor!r}.")
        self.target = jnp.asarray(t, dtype=float)
        self.solver = solver
        self.monitor = monitor
        self.duration = number("FcLoss duration", duration, low=0.0, low_open=True, unit=" ms")
        self.dt = number("FcLoss dt", dt, low=0.0, low_open=True, unit=" ms")
        self.metric = one_of("FcLoss metric", metric, METRICS)
        self.level_width = number("FcLoss level_width", level_width, low=0.0, low_open=True)
        self.burn_in = number("FcLoss burn_in", burn_in, low=0.0, unit=" ms")
        self.realisations = number("FcLoss realisations", realisations, low=1.0, integer=True)
        self.burn_in_gradient = flag("FcLoss burn_in_gradient", burn_in_gradient)
        self.fcd_target = fcd_target_values(fcd_target)
        window, step = window_and_step(fcd_window)
        samples = round(self.duration / (monitor.period or self.dt))
        if self.fcd_target is not None and window > samples:
            raise ValueError(f"FcLoss fcd_window (window, step) = {fcd_window} must have "
                             f"2 <= window <= {samples} samples per run and step >= 1.")
        self.fcd_window = (window, step)
        self.fcd_weight = number("FcLoss fcd_weight", fcd_weight, low=0.0)
        self.fcd_metric = one_of("FcLoss fcd_metric", fcd_metric, ("w2", "ks"))
        check_memory(self.realisations, samples, t.shape[0], self.target.dtype.itemsize)

    @property
    def burn_in_simulated(self) -> float:
        """The burn-in actually simulated (ms): ``burn_in`` rounded up to whole periods."""
        return burn_in_length(self, self.burn_in)

    def _check(self, network: Network):
        n = network.graph.n_nodes
        if self.target.shape != (n, n):
            raise ValueError(
                f"FcLoss target FC has shape {self.target.shape}, but the network has {n} "
                f"nodes (expected ({n}, {n}))."
            )

    def signal(self, network: Network, key: Key | None) -> Float[Array, "time nodes"]:
        """The monitored signal of one realisation's measured run (after the burn-in),
        ``[samples, nodes]``, with noise ``key``."""
        check_key(key)
        check_parts(network, self.solver)
        return self._signal(resolve_for_simulation(network), key)

    def _signal(self, network: Network, key: Key | None) -> Float[Array, "time nodes"]:
        """``signal`` of a checked network whose parameterisations are resolved."""
        return measured_run(self, network, key, None, self.burn_in_simulated)[0]

    def prepared(self, network: Network, key: Key | None) -> Network:
        """``network`` with its parameterisations resolved (``nd.MapParameter``, ...),
        checked against this loss (target size, key, solver and parts): once per
        evaluation, shared by its burn-in and runs (``simulate_resolved`` neither checks
        nor resolves again)."""
        network = resolve_for_simulation(network)
        self._check(network)
        check_key(key)  # before fold_in, whose error about key data would come first
        check_parts(network, self.solver)
        return network

    def signals(
        self, network: Network, key: Key | None
    ) -> Float[Array, "realisations time nodes"]:
        """The measured signal of every realisation, ``[realisations, samples, nodes]``
        (the runs whose FCs ``simulated_fc`` averages)."""
        network = self.prepared(network, key)
        return over_realisations(self.realisations, lambda k: self._signal(network, k), key)

    def fitted_to(self, runs) -> "FcLoss":
        """This loss with the target ``nd.runs_fc(runs)`` and, when it has an FCD term,
        the FCD target pooled from the same runs (its ``fcd_window``)."""
        changes = {"target": runs_fc(runs)}
        if self.fcd_target is not None:
            changes["fcd_target"] = pooled_fcd_values(runs, *self.fcd_window)
        return self.replace(**changes)

    def simulated_fc(self, network: Network, key: Key | None) -> Float[Array, "nodes nodes"]:
        """The FC the loss compares: the mean over realisations of each run's FC."""
        return jnp.mean(jax.vmap(fc)(self.signals(network, key)), axis=0)

    def model_fc(self, network: Network, key: Key | None) -> Float[Array, "nodes nodes"]:
        """``simulated_fc``: the FC the loss compares."""
        return self.simulated_fc(network, key)

    def __call__(
        self, network: Network, key: Key | None
    ) -> tuple[Float[Array, ""], dict[str, Float[Array, ""]]]:
        """``(loss, metrics)`` for ``network`` and noise ``key``."""
        loss, metrics, _ = self.evaluate(network, key)
        return loss, metrics

    def evaluate(
        self, network: Network, key: Key | None
    ) -> tuple[Float[Array, ""], dict[str, Float[Array, ""]], Float[Array, "nodes nodes"]]:
        """``(loss, metrics, simulated FC)`` from one simulation of the realisations."""
        return self.score(self.signals(network, key))

    def score(
        self, x: ArrayLike
    ) -> tuple[Float[Array, ""], dict[str, Float[Array, ""]], Float[Array, "nodes nodes"]]:
        """``(loss, metrics, simulated FC)`` of measured signals ``x`` (``[realisations,
        samples, nodes]``, as ``signals`` returns them)."""
        x = jnp.asarray(x)
        simulated = jnp.mean(jax.vmap(fc)(x), axis=0)
        loss, metrics = self.loss_of_fc(simulated)
        if self.fcd_target is not None:
            window, step = self.fcd_window
            values = jax.vmap(lambda s: fcd_values(fcd(s, window, step), k=1))(x)
            compare = fcd_distance if self.fcd_metric == "w2" else fcd_ks
            d = compare(values.reshape(-1), self.fcd_target)
            loss = loss + self.fcd_weight * d
            metrics = {**metrics, "fcd_distance": d}
        return loss, metrics, simulated
