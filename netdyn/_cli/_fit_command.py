"""``netdyn fit``: a scan of G for the start, the gradient fit, the held-out check."""

import sys
import time
from pathlib import Path

import equinox as eqx
import jax
import jax.numpy as jnp
import numpy as np

from .._fit.errors import FitDivergedError
from .._fit.fc_loss import FcLoss
from .._fit.fit import fit
from .._network import Network
from .._solver.heun import Heun
from .._sweep import sweep
from ._checks import check_numbers
from ._data import load_data
from ._model import MODELS, adam, network, remat, selection
from ._report import report, summary, value, write_results

# The held-out noise: a stream of the seed's key that the fit's realisations
# (fold_in(key, b) for b < --realisations) never use.
HELDOUT_STREAM = 2**31 - 1


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


def _grid_start(args, net: Network, loss_fn: FcLoss, key) -> tuple[float, dict]:
    """The best of ``args.grid`` values of G over [G0 / 3, 3 G0] (G0 the model's default;
    loss of one realisation, forward only), in the units of ``--G``, and the scan as
    ``{"G": [...], "loss": [...]}`` (G as in the network).

    The FC of delay-coupled mean-field models peaks in a narrow band of G at the edge of a
    bifurcation, and the loss is nearly flat far from it, where gradients say little: a
    coarse forward scan finds the band, the gradient fit then refines within it."""
    G0 = MODELS[args.model].G
    values = np.linspace(G0 / 3, 3 * G0, args.grid)
    # The network's G for each value, as the preset computes it from --G.
    internal = values * MODELS[args.model].units.get("coupling.G", 1.0)
    one = loss_fn.replace(realisations=1)
    if not args.quiet:
        print(f"netdyn fit: scanning {args.grid} values of G in [{values[0]:.3g}, "
              f"{values[-1]:.3g}] for a starting point ...", flush=True)
    losses = np.asarray(sweep(lambda m: one(m, key)[0], net, internal,
                              where=lambda n: n.coupling.G, batch_size=1))
    finite = np.where(np.isfinite(losses), losses, np.inf)
    best = int(np.argmin(finite))
    return float(values[best]), {"G": internal.tolist(), "loss": [float(x) for x in losses]}


def _losses(args, target, monitor) -> tuple[FcLoss, FcLoss]:
    """The fit's loss and the held-out check's."""
    loss_fn = FcLoss(target, Heun(remat=remat(args.remat)), monitor, duration=args.duration,
                     dt=args.dt, metric=args.loss, burn_in=args.burn_in,
                     realisations=args.realisations, burn_in_gradient=args.burn_in_gradient)
    heldout_fn = loss_fn.replace(duration=args.heldout_duration,
                                 realisations=args.heldout_realisations)
    return loss_fn, heldout_fn


def fit_command(args) -> int:
    """Run ``netdyn fit``; the exit status."""
    check_numbers(args)
    out = Path(args.out)
    weights, lengths, target, name = load_data(args)
    net, monitor = network(args, weights, lengths)
    where, _, _ = selection(args, net)  # checks --fit before any simulation
    loss_fn, heldout_fn = _losses(args, target, monitor)
    out.mkdir(parents=True, exist_ok=True)
    key = jax.random.key(args.seed)
    if not args.quiet:
        print(
            f"netdyn fit: {args.model} on {name!r} ({weights.shape[0]} regions); each step: "
            f"{args.realisations} x {args.duration / 1000:g} s of BOLD after a "
            f"{loss_fn.burn_in_simulated / 1000:g} s burn-in (dt = {args.dt:g} ms); fitting "
            f"{args.fit} over {args.steps} steps (loss {args.loss}, remat {args.remat}); "
            f"results in {out}/", flush=True
        )
    start = time.perf_counter()  # the scan and the fit
    scan = None
    if args.grid > 0 and args.G is None and "G" in where.names:
        G, scan = _grid_start(args, net, loss_fn, key)
        net, _ = network(args, weights, lengths, G=G)
    where, bounds, net = selection(args, net)
    initial = [value(x) for x in jax.tree.leaves(where(net))]
    try:
        fitted, history = fit(
            net, loss_fn, adam(args.lr, args.steps), where=where, bounds=bounds,
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
    heldout, simulated_heldout = _evaluate(heldout_fn, fitted,
                                           jax.random.fold_in(key, HELDOUT_STREAM))
    result = report(args, history, where, fitted, initial, train, heldout, scan, target,
                    elapsed)
    plotted = write_results(args, out, result, history, target, simulated,
                            simulated_heldout, f"{args.model} on {name}: fit {args.fit}")
    print(summary(out, result, len(history), elapsed, plotted))
    return 0
