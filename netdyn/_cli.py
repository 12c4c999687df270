"""The ``netdyn`` command line: ``netdyn fit`` fits a network model to an empirical FC."""

import argparse
import functools
import json
import math
import sys
import time
from collections.abc import Sequence
from pathlib import Path

import equinox as eqx
import jax
import jax.numpy as jnp
import numpy as np
import optax

from . import datasets
from ._coupling.difference import DelayedDifference
from ._coupling.linear import DelayedLinear
from ._dynamics.reduced_wong_wang import ReducedWongWang
from ._dynamics.sup_hopf import SupHopf
from ._fit.bounds import Interval, Positive
from ._fit.errors import FitDivergedError
from ._fit.fc_loss import METRICS, FcLoss
from ._fit.fit import fit
from ._fit.history import write_text_atomic
from ._graph.delay import DelayGraph
from ._monitor.bold import Bold
from ._monitor.temporal_average import TemporalAverage
from ._network import Network
from ._noise.additive import AdditiveNoise
from ._remat.multilevel import MultiLevel
from ._remat.nested import Nested
from ._remat.no_remat import NoRemat
from ._remat.uniform import Uniform
from ._solver.heun import Heun
from ._sweep import sweep

_FIT_HELP = """\
Fit a delay-coupled network model to an empirical functional connectivity (FC) matrix by
gradient descent through the whole simulation, and check the fit on noise it never saw.

With no options: the embedded HCP group connectome (80 AAL2 regions; delays = tract
length / 4 mm/ms, up to 62 ms), Reduced Wong-Wang nodes (w = 0.5, I_o = 0.32), delayed
linear coupling, additive noise on S, stochastic Heun with dt = 1 ms, Balloon-Windkessel
BOLD sampled at TR = 720 ms (the HCP's). The global coupling G and the noise amplitude
sigma are fitted (--fit G,sigma):

- Stationary dynamics only: every simulation starts with a 57.6 s burn-in, simulated
  forward without gradient, so that the shared relaxation from the initial state (which
  correlates all regions and inflates FC) is not part of the signal. (The gradient then
  holds the burn-in's final state fixed: an approximation, biased above the critical
  coupling; --burn-in-gradient gives the exact gradient, at more cost.)
- Enough BOLD for a stable FC: each step simulates 4 independent noise realisations of
  43.2 s (4 x 60 TRs, 2.9 min of BOLD) in parallel and compares their mean FC.
- Pattern and level: the loss is 1 - r + |mean FC - empirical mean FC|, with r the
  Pearson correlation of the FC upper triangles.
- The FC peaks in a narrow band of G at the edge of the model's bifurcation: a scan of
  17 values of G (forward only) picks the start, then Adam refines G and sigma (12 steps,
  learning rate 0.01 cosine-decayed to 0.001; the best step is kept). One fixed noise
  key for the whole fit (common random numbers: the loss is a smooth function of the
  parameters).
- Held-out check: the fitted model is simulated again with new noise, 4 x 288 s after the
  burn-in; its FC r, mean FC and fraction of pairs above 0.9 (saturation) are printed
  and saved next to the fit's.

About 8 min on a 2-core CPU in float64 (benchmarks/fit.md).

Writes to --out: params.json (fitted and initial parameters, fit and held-out metrics,
the G scan, the best step, the settings), history.csv and history.json (one row per step:
loss, fc_r, mean_fc, rmse, saturation, gradient norm, seconds, parameters),
fc_simulated.csv and fc_heldout.csv, checkpoint.eqx (resumable: rerun with --resume) and
fit.png (loss curve, FC matrices and scatters of the fit and of the held-out run, FC
value histograms) when matplotlib is installed (pip install "netdyn[plot]").
"""

DEFAULT_DURATION = 43_200.0
DEFAULT_REALISATIONS = 4
DEFAULT_BURN_IN = 57_600.0
DEFAULT_HELDOUT_DURATION = 288_000.0
DEFAULT_HELDOUT_REALISATIONS = 4
DEFAULT_GRID = 17
DEFAULT_STEPS = 12
DEFAULT_LR = 0.01
# The held-out noise: a stream of the seed's key that the fit's realisations
# (fold_in(key, b) for b < --realisations) never use.
_HELDOUT_STREAM = 2**31 - 1

_MODELS = {
    # model: {parameter that --fit may name: the bounds it is fitted within}
    "rww": {"w": Interval(0.0, 1.0), "I_o": Interval(0.0, 1.0), "J_N": Positive(),
            "gamma": Positive(), "tau_s": Positive()},
    "hopf": {"a": Interval(-1.0, 1.0), "omega": Positive()},
}


def _build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="netdyn", description="netdyn: differentiable brain network models."
    )
    sub = parser.add_subparsers(dest="command", metavar="COMMAND")
    sub.required = True
    p = sub.add_parser(
        "fit", help="fit a network model to an empirical FC", description=_FIT_HELP,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    data = p.add_argument_group("data")
    data.add_argument("--dataset", default="hcp",
                      help=f"embedded dataset name ({', '.join(datasets.available())}), "
                      "a .npz file (arrays weights, lengths, fc) or a TVB connectivity .zip "
                      "(default: hcp)")
    data.add_argument("--weights", metavar="CSV",
                      help="weights matrix file [target, source] (replaces --dataset)")
    data.add_argument("--lengths", metavar="CSV", help="tract lengths file in mm (with "
                      "--weights)")
    data.add_argument("--fc", metavar="FILE", help="empirical FC matrix (.csv/.txt or .npy); "
                      "default: the dataset's")
    data.add_argument("--normalise", action="store_true",
                      help="divide the weights by their maximum")
    model = p.add_argument_group("model")
    model.add_argument("--model", choices=sorted(_MODELS), default="rww",
                       help="rww: Reduced Wong-Wang (w=0.5, I_o=0.32), delayed linear "
                       "coupling, BOLD of S; hopf: Stuart-Landau oscillators (a=-0.02 /s, "
                       "0.05 Hz), delayed diffusive coupling, TR averages of x as signal "
                       "(default: rww)")
    model.add_argument("--G", type=float, default=None,
                       help="initial global coupling (default: the best point of the "
                       "--grid scan; without it 0.15 for rww, 0.5 for hopf)")
    model.add_argument("--speed", type=float, default=4.0,
                       help="conduction speed in mm/ms (delays = lengths / speed; default 4)")
    model.add_argument("--sigma", type=float, default=None,
                       help="additive noise amplitude (default: 0.00283 rww, 0.02 hopf)")
    model.add_argument("--dt", type=float, default=1.0, help="time step in ms (default 1)")
    model.add_argument("--duration", type=float, default=DEFAULT_DURATION,
                       help="measured simulated time per realisation in ms, a multiple of "
                       f"--tr (default {DEFAULT_DURATION:.0f})")
    model.add_argument("--realisations", type=int, default=DEFAULT_REALISATIONS,
                       help="independent noise realisations per step, simulated in parallel; "
                       "the loss compares their mean FC (default "
                       f"{DEFAULT_REALISATIONS})")
    model.add_argument("--burn-in", type=float, default=DEFAULT_BURN_IN, dest="burn_in",
                       help="ms simulated before each measured run, forward only (no "
                       "gradient), so that the FC is that of stationary dynamics; rounded "
                       f"up to whole TRs (default {DEFAULT_BURN_IN:.0f})")
    model.add_argument("--burn-in-gradient", action="store_true", dest="burn_in_gradient",
                       help="differentiate through the burn-in as well: the exact gradient "
                       "of the whole simulation (slower); by default the burn-in's final "
                       "state is held fixed, which biases the gradient where the dynamics "
                       "have a long memory (above the critical coupling)")
    model.add_argument("--tr", type=float, default=720.0,
                       help="BOLD sampling period in ms (default 720, the HCP's)")
    model.add_argument("--warmup", type=float, default=0.0,
                       help="with --burn-in 0: initial ms of BOLD discarded (default 0)")
    opt = p.add_argument_group("fit")
    opt.add_argument("--fit", default="G,sigma", metavar="NAMES",
                     help="comma-separated parameters to fit: G (global coupling), sigma "
                     "(noise amplitude, one for all regions) and the model's parameters "
                     "(rww: w, I_o, J_N, gamma, tau_s; hopf: a, omega), one value per region, "
                     "or one in all with a ':global' suffix, e.g. 'G,I_o' or 'G,w:global' "
                     "(default: G,sigma)")
    opt.add_argument("--loss", choices=METRICS, default="1-r+mean",
                     help="1-r+mean: 1 - the Pearson r of the FC upper triangles (pattern) "
                     "plus the absolute difference of their means (level); 1-r: pattern "
                     "only; rmse: their RMSE (default: 1-r+mean)")
    opt.add_argument("--grid", type=int, default=DEFAULT_GRID, metavar="N",
                     help="when G is fitted and --G is not given: start from the best of N "
                     "values of G evenly spaced over [G0 / 3, 3 G0] (G0 the model's default), "
                     "each scored by one forward simulation of one realisation; 0: start "
                     f"at G0 (default {DEFAULT_GRID})")
    opt.add_argument("--steps", type=int, default=DEFAULT_STEPS,
                     help=f"optimisation steps (default {DEFAULT_STEPS})")
    opt.add_argument("--lr", type=float, default=DEFAULT_LR,
                     help="Adam learning rate on the unconstrained scale at the first step, "
                     f"cosine-decayed to a tenth at the last (default {DEFAULT_LR})")
    opt.add_argument("--remat", default="uniform:1000",
                     help="gradient checkpointing: none, uniform:K, nested:K1,K2 or "
                     "multilevel:B (default uniform:1000: small memory, ~1 extra forward)")
    opt.add_argument("--redraw", action="store_true",
                     help="new noise every step (default: one fixed realisation)")
    opt.add_argument("--seed", type=int, default=0, help="noise seed (default 0)")
    _add_output_options(p)
    return parser


def _add_output_options(p: argparse.ArgumentParser) -> None:
    """The held-out check and output options of ``netdyn fit``."""
    held = p.add_argument_group("held-out validation")
    held.add_argument("--heldout-duration", type=float, default=DEFAULT_HELDOUT_DURATION,
                      help="measured ms per realisation of the held-out simulation at the "
                      "fitted parameters, with noise the fit never saw (default "
                      f"{DEFAULT_HELDOUT_DURATION:.0f})")
    held.add_argument("--heldout-realisations", type=int,
                      default=DEFAULT_HELDOUT_REALISATIONS,
                      help="held-out noise realisations; their FCs are averaged (default "
                      f"{DEFAULT_HELDOUT_REALISATIONS})")
    out = p.add_argument_group("output")
    out.add_argument("--out", default="netdyn-fit", metavar="DIR",
                     help="results folder (default: ./netdyn-fit)")
    out.add_argument("--resume", action="store_true",
                     help="continue from DIR/checkpoint.eqx (same settings needed)")
    out.add_argument("--checkpoint-every", type=int, default=5, metavar="N",
                     help="save the checkpoint every N steps (default 5)")
    out.add_argument("--no-plot", action="store_true", help="do not write fit.png")
    out.add_argument("--quiet", action="store_true", help="no progress line")


def _remat(spec: str):
    kind, _, arg = spec.partition(":")
    try:
        if kind == "none" and not arg:
            return NoRemat()
        if kind == "uniform":
            return Uniform(int(arg))
        if kind == "nested":
            return Nested(*(int(a) for a in arg.split(",")))
        if kind == "multilevel":
            return MultiLevel(int(arg) if arg else 16)
    except ValueError as e:
        raise ValueError(f"--remat {spec!r}: {e}") from None
    raise ValueError(
        f"--remat {spec!r}: expected none, uniform:K, nested:K1,K2 or multilevel:B."
    )


def _read_matrix(path: str) -> np.ndarray:
    if path.endswith(".npy"):
        return np.load(path, allow_pickle=False)
    return datasets.read_csv_matrix(path)


def _load_data(args) -> tuple[np.ndarray, np.ndarray, np.ndarray, str]:
    if args.weights is not None:
        if args.lengths is None:
            raise ValueError("--weights needs --lengths (tract lengths in mm).")
        data = datasets.read_connectome_csv(args.weights, args.lengths)
    elif args.dataset in datasets.available():
        data = datasets.load(args.dataset)
    elif args.dataset.endswith(".npz"):
        data = datasets.read_npz(args.dataset)
    elif args.dataset.endswith(".zip"):
        data = datasets.read_tvb_zip(args.dataset)
    else:
        raise ValueError(
            f"--dataset {args.dataset!r}: not an embedded dataset "
            f"({', '.join(datasets.available())}), a .npz or a TVB .zip file."
        )
    if data.lengths is None:
        raise ValueError(f"--dataset {data.name!r} has no tract lengths (needed for delays).")
    target = data.fc if args.fc is None else _read_matrix(args.fc)
    if target is None:
        raise ValueError(f"--dataset {data.name!r} has no FC: pass --fc FILE.")
    n = data.n_nodes
    target = np.asarray(target, dtype=float)
    if target.shape != (n, n):
        raise ValueError(
            f"--fc: the FC matrix has shape {target.shape}, but the connectome has {n} "
            f"regions (expected ({n}, {n}))."
        )
    weights = np.asarray(data.weights)
    if args.normalise:
        weights = weights / weights.max()
    return weights, np.asarray(data.lengths), target, data.name


def _network(args, weights, lengths) -> tuple[Network, FcLoss]:
    graph = DelayGraph.from_lengths(weights, lengths, speed=args.speed)
    if args.model == "rww":
        dynamics = ReducedWongWang(w=0.5, I_o=0.32)
        coupling = DelayedLinear(G=0.15 if args.G is None else args.G)
        sigma = 0.00283 if args.sigma is None else args.sigma
        monitor = Bold(period=args.tr, variables="S", warmup=args.warmup)
    else:
        # Deco et al. (2017) in ms: a = -0.02 /s, 0.05 Hz; G per second.
        dynamics = SupHopf(a=-0.02e-3, omega=2 * math.pi * 0.05e-3)
        coupling = DelayedDifference(G=(0.5 if args.G is None else args.G) * 1e-3)
        sigma = (0.02 if args.sigma is None else args.sigma) / math.sqrt(1000.0)
        monitor = TemporalAverage(period=args.tr, variables=("x",), warmup=args.warmup)
    net = Network(dynamics=dynamics, coupling=coupling, graph=graph,
                  noise=AdditiveNoise(sigma=sigma))
    return net, monitor


class _Where(eqx.Module):
    """Selects ``G`` (``"G"``), the noise amplitude (``"sigma"``) and dynamics parameters
    by name. A module with static names, so that repeated runs in one process share the
    compiled step."""

    names: tuple[str, ...] = eqx.field(static=True)

    def __call__(self, m: Network) -> tuple:
        return tuple(_GETTERS.get(name, lambda m, name=name: getattr(m.dynamics, name))(m)
                     for name in self.names)


# Parameters outside the dynamics that --fit may name (always one value for all regions).
_GETTERS = {"G": lambda m: m.coupling.G, "sigma": lambda m: m.noise.sigma}


def _selection(args, net: Network):
    """``where``, ``bounds`` and the network with the fitted parameters as arrays
    (``[nodes]`` for per-region ones)."""
    table = _MODELS[args.model]
    specs = [s.strip() for s in args.fit.split(",") if s.strip()]
    if not specs:
        raise ValueError("--fit: give at least one parameter, e.g. --fit G.")
    n = net.graph.n_nodes
    names, bounds = [], []
    for spec in specs:
        name, _, scope = spec.partition(":")
        if scope not in ("", "global"):
            raise ValueError(f"--fit {spec!r}: the only suffix is ':global'.")
        if name not in _GETTERS and name not in table:
            raise ValueError(
                f"--fit {name!r}: unknown parameter for --model {args.model}; choose from "
                f"{', '.join(_GETTERS)}, {', '.join(table)}."
            )
        if name in names:
            raise ValueError(f"--fit {args.fit!r} names {name} twice.")
        get = _Where((name,))
        value = jnp.asarray(float(get(net)[0]))
        if name not in _GETTERS and scope != "global":
            value = jnp.full((n,), value)
        net = eqx.tree_at(lambda m, get=get: get(m)[0], net, value)
        names.append(name)
        bounds.append(Positive() if name in _GETTERS else table[name])
    return _Where(tuple(names)), tuple(bounds), net


@functools.cache
def _adam(lr: float, steps: int) -> optax.GradientTransformation:
    # Cosine decay to lr / 10: full steps while far from the optimum, then small ones, so
    # Adam's momentum settles instead of overshooting a steep FC-r landscape. One instance
    # per (lr, steps): repeated runs in one process reuse the compiled step.
    return optax.adam(optax.cosine_decay_schedule(lr, steps, alpha=0.1))


def _evaluate(loss_fn: FcLoss, model, key) -> tuple[dict[str, float], np.ndarray]:
    """Metrics (``fc_r``, ``rmse``, ``mean_fc``, ``saturation``, ``loss``) and the FC."""
    simulated = np.asarray(_simulated_fc(loss_fn, model, key))
    loss, metrics = loss_fn.loss_of_fc(jnp.asarray(simulated))
    out = {k: float(v) for k, v in metrics.items()}
    out["loss"] = float(loss)
    return out, simulated


@eqx.filter_jit
def _simulated_fc(loss_fn: FcLoss, model, key):
    return loss_fn.simulated_fc(model, key)


def _figure(path: Path, history, target, train, heldout, title: str) -> bool:
    """Loss curve, FC matrices and scatters of the fit (top) and held-out run (bottom)."""
    try:
        from matplotlib.figure import Figure
    except ImportError:
        return False
    fig = Figure(figsize=(14, 7), layout="constrained")
    ax = fig.subplots(2, 4)
    steps = history.step + 1
    ax[0, 0].plot(steps, history.loss, color="C0", label="loss")
    ax[0, 0].set_xlabel("step")
    ax[0, 0].set_ylabel("loss", color="C0")
    if "fc_r" in history.metrics:
        twin = ax[0, 0].twinx()
        twin.plot(steps, history.metrics["fc_r"], color="C1")
        twin.set_ylabel("FC r (fit)", color="C1")
    ax[0, 0].set_title(title)
    iu = np.triu_indices(target.shape[0], k=1)
    im = None
    rows = ((0, train, "fit noise"), (1, heldout, "held-out"))
    for row, simulated, label in rows:
        a = ax[row, 1] if row == 1 else ax[0, 1]
        if row == 0:
            im = a.imshow(target, vmin=-1, vmax=1, cmap="RdBu_r")
            a.set_title(f"empirical FC (mean {target[iu].mean():.2f})")
        else:
            bins = np.linspace(-0.5, 1.0, 61)
            a.hist(target[iu], bins=bins, alpha=0.5, label="empirical", density=True)
            a.hist(simulated[iu], bins=bins, alpha=0.5, label="held-out", density=True)
            a.axvline(0.9, color="k", lw=0.8, ls=":")
            a.set_xlabel("FC value (upper triangle)")
            a.set_title("FC level and saturation")
            a.legend(fontsize="small")
        ax[row, 2].imshow(simulated, vmin=-1, vmax=1, cmap="RdBu_r")
        ax[row, 2].set_title(f"simulated, {label} (mean {simulated[iu].mean():.2f})")
        ax[row, 3].scatter(target[iu], simulated[iu], s=2, alpha=0.4)
        r = np.corrcoef(target[iu], simulated[iu])[0, 1]
        ax[row, 3].set_xlabel("empirical FC")
        ax[row, 3].set_ylabel(f"simulated FC ({label})")
        sat = np.mean(simulated[iu] > 0.9)
        ax[row, 3].set_title(f"r = {r:.3f}, {100 * sat:.0f} % of pairs > 0.9")
    ax[1, 0].axis("off")
    r_fit = np.corrcoef(target[iu], train[iu])[0, 1]
    r_new = np.corrcoef(target[iu], heldout[iu])[0, 1]
    ax[1, 0].text(0.0, 0.5, (
        f"{'':14s}{'fit':>7s}{'held-out':>10s}\n"
        f"{'FC r':14s}{r_fit:7.3f}{r_new:10.3f}\n"
        f"{'mean FC':14s}{train[iu].mean():7.3f}{heldout[iu].mean():10.3f}\n"
        f"{'FC > 0.9':14s}{100 * np.mean(train[iu] > 0.9):6.1f}%"
        f"{100 * np.mean(heldout[iu] > 0.9):9.1f}%\n"
        f"empirical mean FC {target[iu].mean():.3f}"), family="monospace", va="center")
    fig.colorbar(im, ax=ax[:, 2], shrink=0.6)
    fig.savefig(path, dpi=100)
    return True


def _value(x):
    a = np.asarray(x, dtype=float)
    return float(a) if a.ndim == 0 else a.tolist()


def _grid_start(args, net: Network, loss_fn: FcLoss, key):
    """``net`` with G at the best of ``args.grid`` values over [G0 / 3, 3 G0] (loss of one
    realisation, forward only), and the scan as ``{"G": [...], "loss": [...]}``.

    The FC of delay-coupled mean-field models peaks in a narrow band of G at the edge of a
    bifurcation, and the loss is nearly flat far from it, where gradients say little: a
    coarse forward scan finds the band, the gradient fit then refines within it."""
    G0 = float(net.coupling.G)
    values = np.linspace(G0 / 3, 3 * G0, args.grid)
    one = loss_fn.replace(realisations=1)
    if not args.quiet:
        print(f"netdyn fit: scanning {args.grid} values of G in [{values[0]:.3g}, "
              f"{values[-1]:.3g}] for a starting point ...", flush=True)
    losses = np.asarray(sweep(lambda m: one(m, key)[0], net, values,
                              where=lambda n: n.coupling.G, batch_size=1))
    finite = np.where(np.isfinite(losses), losses, np.inf)
    best = int(np.argmin(finite))
    G = jnp.asarray(values[best], dtype=jnp.result_type(net.coupling.G))
    return eqx.tree_at(lambda n: n.coupling.G, net, G), {
        "G": values.tolist(), "loss": [float(x) for x in losses]}


def _check_numbers(args) -> None:
    """Reject out-of-range numeric options, naming the flag."""
    if args.steps < 1:
        raise ValueError(f"--steps must be >= 1, got {args.steps}.")
    if not args.lr > 0:
        raise ValueError(f"--lr must be positive, got {args.lr}.")
    for flag, value in (("--realisations", args.realisations),
                        ("--heldout-realisations", args.heldout_realisations)):
        if value < 1:
            raise ValueError(f"{flag} must be >= 1, got {value}.")
    if args.grid < 0:
        raise ValueError(f"--grid must be >= 0, got {args.grid}.")
    if not (math.isfinite(args.burn_in) and args.burn_in >= 0):
        raise ValueError(f"--burn-in must be a finite number of ms >= 0, got {args.burn_in}.")


def _fit_command(args) -> int:
    _check_numbers(args)
    out = Path(args.out)
    weights, lengths, target, name = _load_data(args)
    net, monitor = _network(args, weights, lengths)
    where, bounds, net = _selection(args, net)
    solver = Heun(remat=_remat(args.remat))
    loss_fn = FcLoss(target, solver, monitor, duration=args.duration, dt=args.dt,
                     metric=args.loss, burn_in=args.burn_in, realisations=args.realisations,
                     burn_in_gradient=args.burn_in_gradient)
    heldout_fn = loss_fn.replace(duration=args.heldout_duration,
                                 realisations=args.heldout_realisations)
    out.mkdir(parents=True, exist_ok=True)
    key = jax.random.key(args.seed)
    heldout_key = jax.random.fold_in(key, _HELDOUT_STREAM)
    if not args.quiet:
        n = weights.shape[0]
        print(
            f"netdyn fit: {args.model} on {name!r} ({n} regions); each step: "
            f"{args.realisations} x {args.duration / 1000:g} s of BOLD after a "
            f"{loss_fn.burn_in_simulated / 1000:g} s burn-in (dt = {args.dt:g} ms); fitting "
            f"{args.fit} over {args.steps} steps (loss {args.loss}, remat {args.remat}); "
            f"results in {out}/", flush=True
        )
    start = time.perf_counter()  # the scan and the fit
    scan = None
    if args.grid > 0 and args.G is None and "G" in where.names:
        net, scan = _grid_start(args, net, loss_fn, key)
    initial = [_value(x) for x in jax.tree.leaves(where(net))]
    try:
        fitted, history = fit(
            net, loss_fn, _adam(args.lr, args.steps), where=where, bounds=bounds,
            steps=args.steps, key=key, redraw=args.redraw,
            checkpoint=out / "checkpoint.eqx", checkpoint_every=args.checkpoint_every,
            resume=args.resume, progress=not args.quiet, keep="best",
        )
    except FitDivergedError as e:
        e.history.to_csv(out / "history.csv")
        e.history.to_json(out / "history.json")
        print(f"netdyn fit: {e}", file=sys.stderr)
        return 1
    elapsed = time.perf_counter() - start

    train, simulated = _evaluate(loss_fn, fitted, key)
    if not args.quiet:
        print(f"netdyn fit: held-out check, {args.heldout_realisations} x "
              f"{args.heldout_duration / 1000:g} s with new noise ...", flush=True)
    heldout, simulated_heldout = _evaluate(heldout_fn, fitted, heldout_key)
    fitted_values = [_value(x) for x in jax.tree.leaves(where(fitted))]
    names = list(history.params)
    iu = np.triu_indices(target.shape[0], k=1)
    report = {
        "parameters": dict(zip(names, fitted_values)),
        "initial": dict(zip(names, initial)),
        **{k: train[k] for k in ("loss", "fc_r", "rmse", "mean_fc", "saturation")},
        "heldout": heldout,
        "grid": scan,
        "empirical_mean_fc": float(target[iu].mean()),
        "initial_loss": float(history.loss[0]),
        "initial_fc_r": float(history.metrics["fc_r"][0]),
        "steps": len(history),
        "best_step": history.best_step(),
        "seconds": elapsed,
        "settings": {k: v for k, v in vars(args).items() if k != "command"},
    }
    write_text_atomic(out / "params.json", json.dumps(report, indent=1))
    history.to_csv(out / "history.csv")
    history.to_json(out / "history.json")
    np.savetxt(out / "fc_simulated.csv", simulated, delimiter=",")
    np.savetxt(out / "fc_heldout.csv", simulated_heldout, delimiter=",")
    plotted = False
    if not args.no_plot:
        title = f"{args.model} on {name}: fit {args.fit}"
        plotted = _figure(out / "fit.png", history, target, simulated, simulated_heldout,
                          title)
        if not plotted:
            print("netdyn fit: matplotlib is not installed, no figure "
                  "(pip install 'netdyn[plot]').")
    summary = ", ".join(
        f"{k} = {v:.4g}" if isinstance(v, float) else f"{k} = mean {np.mean(v):.4g}"
        for k, v in report["parameters"].items()
    )
    print(
        f"netdyn fit: {summary}; loss {report['initial_loss']:.4g} -> {report['loss']:.4g}, "
        f"FC r {report['initial_fc_r']:.3f} -> {report['fc_r']:.3f} "
        f"(best of {len(history)} steps: {report['best_step']}; {elapsed:.0f} s).\n"
        f"netdyn fit: held-out (new noise): FC r {heldout['fc_r']:.3f}, mean FC "
        f"{heldout['mean_fc']:.3f} (empirical {report['empirical_mean_fc']:.3f}), "
        f"{100 * heldout['saturation']:.1f} % of pairs > 0.9. Wrote {out}/params.json, "
        "history.csv, history.json, fc_simulated.csv, fc_heldout.csv, checkpoint.eqx"
        + (", fit.png" if plotted else "")
    )
    return 0


def main(argv: Sequence[str] | None = None) -> int:
    """Entry point of the ``netdyn`` command (``netdyn fit --help``).

    Turns on ``jax_enable_x64`` (float64 simulation) for the process.

    **Arguments**: ``argv``, the arguments without the program name (default:
    ``sys.argv[1:]``).

    **Returns** the exit status: 0 on success, 1 if the fit diverged (the history and
    checkpoint are still written), 2 for invalid arguments (reported on stderr).
    """
    parser = _build_parser()
    args = parser.parse_args(argv)
    # The command owns its process: simulate in float64, as the library's tests do.
    jax.config.update("jax_enable_x64", True)
    if args.command == "fit":
        try:
            return _fit_command(args)
        except ValueError as e:
            parser.exit(2, f"netdyn fit: error: {e}\n")
    return 2  # pragma: no cover - argparse requires a command

