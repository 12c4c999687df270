"""The preset networks: ``rww``, ``rww_ei_fic``, ``hopf`` and the reference workload."""

import math
from typing import Any, Literal

import numpy as np

from .._coupling.difference import DelayedDifference
from .._coupling.linear import DelayedLinear
from .._custom_types import ArrayLike
from .._dynamics.reduced_wong_wang import ReducedWongWang
from .._dynamics.reduced_wong_wang_exc_inh import ReducedWongWangExcInh
from .._dynamics.sup_hopf import SupHopf
from .._graph.delay import DelayGraph
from .._monitor.bold import Bold
from .._monitor.hrf_bold import HrfBold
from .._network import Network
from .._noise.additive import AdditiveNoise
from .._parameterisation.feedback_inhibition import FeedbackInhibition
from .._remat._base import AbstractRemat
from .._solver.heun import Heun

# The reference workload (benchmarks/README.md): one place for its numbers.
_REFERENCE_G = 0.5
_REFERENCE_SIGMA = 0.00283
_REFERENCE_SPEED = 4.0  # mm/ms
_REFERENCE_DT = 1.0  # ms
_REFERENCE_TR = 1000.0  # ms

# The one table of ``hopf``'s units: a value in the network (netdyn's ms) = the value in
# the preset's units (per second, Hz, per sqrt(s)) times this. ``netdyn fit --model hopf``
# reads and reports its values through it.
HOPF_UNITS = {"coupling.G": 1e-3, "noise.sigma": 1 / math.sqrt(1000.0), "dynamics.a": 1e-3,
              "dynamics.omega": 2 * math.pi * 1e-3}


def rww(
    weights: ArrayLike,
    lengths: ArrayLike,
    *,
    G: float = _REFERENCE_G,
    sigma: float = _REFERENCE_SIGMA,
    speed: float = _REFERENCE_SPEED,
    w: float = 0.5,
    I_o: float = 0.32,
    initial_S: float = 0.3,
    interpolation: Literal["nearest", "linear"] = "nearest",
) -> Network:
    r"""A Reduced Wong-Wang network (Deco et al. 2013) on a connectome with delays.

    ``ReducedWongWang(w, I_o, initial_S)`` nodes (TVB's other defaults), coupled by
    ``DelayedLinear(G)`` through ``DelayGraph.from_lengths(weights, lengths, speed)``
    (delays $d_{ij} = L_{ij} / v$ in ms), with ``AdditiveNoise(sigma)`` on ``S``:

    $$\dot S_i = -\frac{S_i}{\tau_s} + (1 - S_i)\,H\big(w J_N S_i + I_o
      + J_N G \textstyle\sum_j W_{ij} S_j(t - d_{ij})\big)\,\gamma + \sigma\,\xi_i(t).$$

    **Arguments**: ``weights`` ``[target, source]`` (used as given: divide by their
    maximum first for the reference scale), ``lengths`` tract lengths in mm, ``G`` the
    global coupling, ``sigma`` the noise amplitude, ``speed`` the conduction speed in
    mm/ms, ``w``, ``I_o`` and ``initial_S`` as in ``ReducedWongWang``, ``interpolation``
    of the delays (``"linear"`` for gradients with respect to delays or speed).

    This is ``netdyn fit --model rww`` (with ``G`` from the command line or its scan).
    """
    return Network(
        dynamics=ReducedWongWang(w=w, I_o=I_o, initial_S=initial_S),
        coupling=DelayedLinear(G=G, interpolation=interpolation),
        graph=DelayGraph.from_lengths(weights, lengths, speed=speed),
        noise=AdditiveNoise(sigma=sigma),
    )


def rww_ei_fic(
    weights: ArrayLike,
    lengths: ArrayLike,
    *,
    G: float = 0.5,
    sigma: float = 0.001,
    speed: float = _REFERENCE_SPEED,
    target_rate: float = 3.0,
) -> Network:
    r"""A two-population Wong-Wang network with feedback inhibition control (Deco et al.
    2014) on a connectome with delays.

    ``ReducedWongWangExcInh`` nodes (TVB's defaults, the model's own coupling scale
    ``G = 1``) whose inhibitory weights $J_i$ are set by
    ``FeedbackInhibition(target_rate)`` (every region's excitatory rate at
    ``target_rate`` Hz in the balanced state, recomputed from the parameters at every
    simulation), coupled by ``DelayedLinear(G)`` through ``DelayGraph.from_lengths(weights,
    lengths, speed)``, with ``AdditiveNoise(sigma)`` on $S_E$ and $S_I$: the long-range
    input of region $i$ is $G J_N \sum_j W_{ij} S_{E,j}(t - d_{ij})$.

    With weights divided by their maximum (the embedded HCP connectome) the balanced
    state is stable below $G \approx 0.56$, where the FC of the fluctuations around it
    grows as $G$ approaches that critical value.

    **Arguments**: ``weights`` ``[target, source]``, ``lengths`` tract lengths in mm,
    ``G`` the global coupling, ``sigma`` the noise amplitude, ``speed`` the conduction
    speed in mm/ms, ``target_rate`` the FIC rate in Hz.

    This is ``netdyn fit --model rww-ei-fic``.
    """
    return Network(
        dynamics=ReducedWongWangExcInh(G=1.0, J_i=FeedbackInhibition(target_rate=target_rate)),
        coupling=DelayedLinear(G=G),
        graph=DelayGraph.from_lengths(weights, lengths, speed=speed),
        noise=AdditiveNoise(sigma=sigma),
    )


def hopf(
    weights: ArrayLike,
    lengths: ArrayLike,
    *,
    G: float = 0.5,
    sigma: float = 0.02,
    speed: float = _REFERENCE_SPEED,
    a: float = -0.02,
    frequency: float = 0.05,
) -> Network:
    r"""Stuart-Landau (supercritical Hopf) oscillators with delayed diffusive coupling,
    parameterised in the units of Deco et al. (2017): rates per second, frequency in Hz.

    ``SupHopf`` nodes, ``DelayedDifference`` coupling through
    ``DelayGraph.from_lengths(weights, lengths, speed)`` and ``AdditiveNoise``, with
    $t$ in ms ($z = x + i y$):

    $$\dot z_i = (a' + i\omega' - |z_i|^2)\, z_i
      + G' \textstyle\sum_j W_{ij}\,\big(z_j(t - d_{ij}) - z_i(t)\big) + \sigma'\,\xi_i(t),$$

    where the values given here are converted once to netdyn's ms: $a' = 10^{-3} a$,
    $\omega' = 2\pi f \cdot 10^{-3}$, $G' = 10^{-3} G$ (``a``, ``G`` per second, ``frequency``
    in Hz) and $\sigma' = 10^{-3/2} \sigma$ (``sigma`` per $\sqrt{\mathrm{s}}$: a Wiener
    increment over $dt$ ms has the variance of $dt / 1000$ s). The cubic term is not
    rescaled; with $a < 0$ the nodes fluctuate near the origin, where it is small.
    Defaults: $a = -0.02$ /s, $f = 0.05$ Hz, $G = 0.5$ /s, $\sigma = 0.02$ (Deco,
    Kringelbach, Jirsa, Ritter 2017, *Sci. Rep.* 7:3095).

    This is ``netdyn fit --model hopf`` (where ``--G`` and ``--sigma`` are in these units,
    and a fitted ``omega`` is reported as a frequency in Hz). ``nd.presets.HOPF_UNITS``
    holds the factors: a network value = the value in these units times the factor.
    """
    return Network(
        dynamics=SupHopf(a=a * HOPF_UNITS["dynamics.a"],
                         omega=frequency * HOPF_UNITS["dynamics.omega"]),
        coupling=DelayedDifference(G=G * HOPF_UNITS["coupling.G"]),
        graph=DelayGraph.from_lengths(weights, lengths, speed=speed),
        noise=AdditiveNoise(sigma=sigma * HOPF_UNITS["noise.sigma"]),
    )


def _embedded_connectome(weights, lengths) -> tuple[Any, Any]:
    if (weights is None) != (lengths is None):
        raise ValueError("reference_network: pass both weights and lengths, or neither.")
    if weights is None:
        from .. import datasets  # the data file is read on demand, not at import

        data = datasets.load("hcp")
        weights, lengths = data.weights, data.lengths
    return weights, lengths


def reference_network(weights: ArrayLike | None = None,
                      lengths: ArrayLike | None = None) -> Network:
    r"""The network of netdyn's reference workload (the README's benchmark).

    The reference workload: Reduced Wong-Wang nodes ($w = 0.5$, $I_o = 0.32$, initial
    $S = 0.3$, TVB's other defaults, $\gamma = 0.641$) on a structural connectome with
    weights divided by their maximum and delays = tract length / 4 mm/ms; delayed linear
    coupling $G = 0.5$ (nearest-step delays); additive noise $\sigma = 0.00283$ on $S$;
    stochastic Heun with $dt = 1$ ms over 60 s; BOLD sampled at TR = 1 s inside the loop
    (``reference_simulation``); FC of the BOLD after dropping the first 20 samples, and
    the RMSE against the empirical FC as the loss, differentiated with respect to $G$.

    **Arguments**: ``weights`` ``[target, source]`` and ``lengths`` (mm) of the
    connectome; both ``None`` (default): the embedded 80-region
    ``netdyn.datasets.load("hcp")``. The README's figures use the 84-region
    ``dk_average`` connectome (Desikan-Killiany group average, shipped with tvboptim) when
    it is installed: pass its arrays here.

    Same as ``rww(weights / weights.max(), lengths, G=0.5, sigma=0.00283, speed=4.0)``.
    """
    weights, lengths = _embedded_connectome(weights, lengths)
    w = np.asarray(weights, dtype=float)
    if w.size == 0 or not np.max(w) > 0:
        raise ValueError("reference_network: weights need a positive maximum (divided by it).")
    return rww(w / np.max(w), lengths, G=_REFERENCE_G, sigma=_REFERENCE_SIGMA,
               speed=_REFERENCE_SPEED)


def reference_simulation(
    weights: ArrayLike | None = None,
    lengths: ArrayLike | None = None,
    *,
    duration: float = 60_000.0,
    remat: AbstractRemat | None = None,
    bold: Literal["hrf", "balloon"] = "hrf",
) -> dict[str, Any]:
    r"""The reference workload as keyword arguments of ``netdyn.simulate``.

    ``nd.simulate(**nd.presets.reference_simulation(), key=key)`` simulates
    ``reference_network(weights, lengths)`` (see there for the whole workload) with
    ``Heun(remat)`` (stochastic Heun; ``remat=None``: Heun's default), $dt = 1$ ms,
    from 0 to ``duration`` ms (default 60 s), and BOLD at TR = 1 s under the key
    ``"bold"``: ``bold="hrf"`` the hemodynamic-response-kernel BOLD of TVB
    (``HrfBold(period=1000, interim=1)``, as the benchmark against tvboptim),
    ``"balloon"`` the Balloon-Windkessel ``Bold(period=1000, variables="S")``.

    **Returns** ``{"network", "solver", "t0", "t1", "dt", "monitors"}``.
    """
    if bold == "hrf":
        monitor = HrfBold(period=_REFERENCE_TR, interim=_REFERENCE_DT)
    elif bold == "balloon":
        monitor = Bold(period=_REFERENCE_TR, variables="S")
    else:
        raise ValueError(f"reference_simulation: bold must be 'hrf' or 'balloon', got {bold!r}.")
    return {
        "network": reference_network(weights, lengths),
        "solver": Heun() if remat is None else Heun(remat=remat),
        "t0": 0.0,
        "t1": float(duration),
        "dt": _REFERENCE_DT,
        "monitors": {"bold": monitor},
    }
