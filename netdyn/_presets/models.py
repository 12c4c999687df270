"""``MODELS``: the presets fitted to FC (``netdyn fit --model NAME``), each with its
defaults, the signal whose FC is compared, the range of each parameter and its units."""

from collections.abc import Callable
from dataclasses import dataclass

import numpy as np

from .._loss._base import AbstractFcLoss
from .._loss.fc_loss import FcLoss
from .._monitor._base import AbstractMonitor
from .._monitor.bold import Bold
from .._monitor.temporal_average import TemporalAverage
from .._network import Network
from .._parameters.bounds import AbstractTransform, Interval, Positive
from .._search.scan_start import StartScan, scan_start
from .networks import HOPF_UNITS, hopf, rww, rww_ei_fic

# The longest hemodynamic integration step the BOLD presets take (ms): on the embedded
# connectome it changed no FC entry by more than 4.1e-6 against integrating every 1 ms
# step, and made the forward run 1.6-1.7x and a loss's gradient 1.8-2.2x faster
# (``benchmarks/bold_step.md``).
BALLOON_STEP = 10.0


def balloon_step(tr: float, dt: float) -> float | None:
    """The longest whole number of ``dt`` steps, at most ``BALLOON_STEP`` (10) ms, that
    divides the sampling period ``tr``: the BOLD presets' ``Bold(integration_step=...)``
    (``None`` when that is one step: the hemodynamics integrated every step)."""
    for n in range(max(1, int(BALLOON_STEP / dt + 1e-9)), 1, -1):
        periods = tr / (n * dt)
        if abs(periods - round(periods)) < 1e-9 * max(1.0, periods):
            return n * dt
    return None


def _bold(variable: str):
    def signal(tr: float, warmup: float, dt: float = 1.0) -> Bold:
        return Bold(period=tr, variables=variable, warmup=warmup,
                    integration_step=balloon_step(tr, dt))

    return signal


@dataclass(frozen=True)
class Preset:
    """A preset network as it is fitted to an FC: what ``netdyn fit --model NAME`` builds.

    - ``build``: the preset, ``build(weights, lengths, G=, sigma=, speed=)``.
    - ``G``, ``sigma``: the default start of the global coupling and the noise amplitude,
      in the preset's units.
    - ``signal``: ``(tr, warmup, dt) -> monitor``, the signal whose FC is compared (the
      BOLD presets integrate their hemodynamics every ``balloon_step(tr, dt)`` ms).
    - ``bounds``: the parameters of the dynamics that may be fitted, each with its range.
    - ``units``: the one table of units, ``{path: factor}``: a value in the network
      (netdyn's ms) = the value in the preset's units times the factor (1 when absent).
    - ``burn_in``: ms to simulate from the initial state before the BOLD is stationary,
      with margin.
    - ``crossing``: on which side of its peak the mean FC, as a function of G, is
      stationary (``nd.level_search``'s ``side``: ``"rising"`` or ``"falling"``).
    - ``analytic``: whether the analytic FC (``nd.LinearFcLoss``, the network linearised
      at its fixed point) describes the model where it is fitted, as measured against
      long simulations.
    """

    build: Callable[..., Network]
    G: float
    sigma: float
    signal: Callable[[float, float, float], AbstractMonitor]
    bounds: dict[str, AbstractTransform]
    units: dict[str, float]
    burn_in: float = 57_600.0
    crossing: str = "falling"
    analytic: bool = False

    def factor(self, name: str) -> float:
        """Network value = value in the preset's units times this, for the parameter
        ``name``, a path such as ``"coupling.G"`` (an index, ``"dynamics.a[3]"``, left
        out)."""
        return self.units.get(name.split("[")[0], 1.0)

    def in_preset_units(self, name: str, x):
        """The network value ``x`` of parameter ``name`` in the preset's units."""
        return x / self.factor(name)

    def network(self, weights, lengths, *, G: float | None = None,
                sigma: float | None = None, speed: float = 4.0) -> Network:
        """The preset on the connectome (``G``, ``sigma`` in the preset's units; ``None``:
        the defaults)."""
        return self.build(weights, lengths, G=self.G if G is None else G,
                          sigma=self.sigma if sigma is None else sigma, speed=speed)

    def scan_start(self, loss_fn: AbstractFcLoss, network: Network, *, grid: int = 17,
                   bisect: int = 8, key=None, tolerance: float = 0.0,
                   on_point: Callable[[float], None] | None = None) -> StartScan:
        """Where ``netdyn fit`` starts a fit of G of this preset's ``network``:
        ``nd.scan_start`` from ``grid`` values evenly spaced over [G / 3, 3 G] (``G`` the
        preset's default), ``bisect`` bisections on the preset's ``crossing`` side, with
        one realisation of an ``nd.FcLoss`` (forward only, one noise ``key``);
        ``tolerance`` and ``on_point`` as there. Its values are the network's:
        ``nd.scan_record(found, preset.factor("coupling.G"))`` records them in the
        preset's units."""
        one = loss_fn.replace(realisations=1) if isinstance(loss_fn, FcLoss) else loss_fn
        values = np.linspace(self.G / 3, 3 * self.G, grid) * self.factor("coupling.G")
        return scan_start(one, network, lambda n: n.coupling.G, values, key=key,
                          iterations=bisect, side=self.crossing, tolerance=tolerance,
                          on_point=on_point)


MODELS = {
    "rww": Preset(
        build=rww, G=0.15, sigma=0.00283,
        signal=_bold("S"),
        bounds={"w": Interval(0.0, 1.0), "I_o": Interval(0.0, 1.0), "J_N": Positive(),
                "gamma": Positive(), "tau_s": Positive()},
        units={},
    ),
    "rww-ei-fic": Preset(
        build=rww_ei_fic, G=0.5, sigma=0.001,
        signal=_bold("S_e"),
        bounds={"w_p": Interval(0.0, 3.0), "I_o": Interval(0.0, 1.0), "J_N": Positive(),
                "W_e": Positive(), "W_i": Positive()},
        units={},
        # Started near its balanced state (FIC), the E-I network's BOLD is stationary after
        # about 15 s: the mean of 24 realisations settles within 7 s, their variance and
        # the FC of 18 s windows within 15 s, at G 0.49 (the fit's range). Twice that.
        burn_in=28_800.0,
        # Past the peak of its mean FC (G about 0.52 on the embedded data) the balanced
        # state is unstable: the network escapes from it during the run, at every G up
        # to about 0.54, and a short burn-in catches that escape at an FC level that
        # looks right. The stationary band is below the peak.
        crossing="rising",
        # Its analytic FC against long simulations: FC r 0.955-0.982 at G 0.45-0.51. The
        # single-population rww is bistable where its fit lives (FC r 0.40-0.95 against
        # simulation) and hopf's cubic term sets its fluctuations at the default noise:
        # the linear picture does not hold for them.
        analytic=True,
    ),
    "hopf": Preset(
        build=hopf, G=0.5, sigma=0.02,
        signal=lambda tr, warmup, dt=1.0: TemporalAverage(period=tr, variables=("x",),
                                                          warmup=warmup),
        bounds={"a": Interval(-1.0, 1.0), "omega": Positive()},
        # hopf's units (rates per second, omega as a frequency in Hz, sigma per sqrt(s));
        # the network is in ms.
        units=HOPF_UNITS,
        # Its mean FC rises with G up to the scan's end: the start must be on the rising
        # side, not the lowest loss anywhere. With "falling", the recovery runs started at
        # the grid's end (G 1.5, mean FC 0.096) past a crossing at 0.87 (target 0.044,
        # truth G 0.61) and stayed there: the level term is soft at so low an FC level.
        crossing="rising",
    ),
}
